"""Quick play (``seek``) over a real server and Redis: concurrent seekers each seated once at a
table within their range, a repeated seek, a cancelled seek, bots after the table's wait, and a
seek across a restart."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from playhall import app
from playhall_client import Client, ServerError

from .conftest import free_port, server_config
from .helpers import stored_room
from .process import ServerProcess

RANGES = [(3, 5), (3, 4), (4, 5), (5, 5), (3, 3), (4, 4), (2, 6)]


@pytest.fixture
async def running(redis_url: str) -> AsyncIterator[app.Running]:
    running = await app.start(server_config(redis_url, rate=1e6, burst=100_000))
    yield running
    await running.drain()


async def test_fifty_concurrent_seekers_are_each_seated_once_within_their_range(
    running: app.Running,
) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    clients = await asyncio.gather(*(Client.connect(url, name=f"s{i}") for i in range(50)))
    wanted = {c.player: RANGES[i % len(RANGES)] for i, c in enumerate(clients)}
    mirrors = await asyncio.gather(
        *(c.seek("mantis", wanted[c.player]) for c in clients)
    )
    config = running.config
    rooms = {m.room for m in mirrors}
    seated: Counter[str] = Counter()
    for room in rooms:
        _, record = await stored_room(config.redis_url, config.key_prefix, room)
        people = [s.player for s in record.seats if s.player]
        seated.update(people)
        for player in people:
            low, high = wanted[player]
            assert low <= len(record.seats) <= high, (player, wanted[player], len(record.seats))
        full = all(s.taken for s in record.seats)
        assert record.status == ("playing" if full else "waiting")
    assert seated == Counter({c.player: 1 for c in clients})
    for client, mirror in zip(clients, mirrors, strict=True):  # each at the table it was told
        assert mirror.view["you"] is not None
        assert mirror.view["seats"][mirror.view["you"]]["player"] == client.player
    # Fewer tables than seekers: they were shared (50 seekers would open 50 tables otherwise).
    assert len(rooms) <= 20
    await asyncio.gather(*(c.close() for c in clients))


async def test_a_repeated_seek_keeps_its_seat_and_a_cancelled_one_frees_it(
    running: app.Running,
) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    a, b, c = [await Client.connect(url, name=n) for n in "abc"]
    table = await a.seek("mantis", (3, 3))
    assert (await a.seek("mantis", (3, 3))).room == table.room  # the same seat, not a second
    assert (await b.seek("mantis", (3, 3))).room == table.room
    assert await b.cancel_seek() == table.room
    await table.wait(lambda m: sum(1 for s in m.view["seats"] if s["player"]) == 1)
    assert await b.cancel_seek() is None  # nothing held any more
    assert (await c.seek("mantis", (3, 3))).room == table.room
    again = await b.seek("mantis", (3, 3))
    assert again.room == table.room
    await table.wait(lambda m: m.view["status"] == "playing")
    # Once the game started there is no seek to cancel: the seat stays (resign to leave it).
    assert await b.cancel_seek() is None
    assert table.view["seats"][2]["player"] == b.player
    # The table started: a new seek finds a new table.
    assert (await a.seek("mantis", (3, 3))).room != table.room
    with pytest.raises(ServerError) as bad:
        await a.request("seek", game="mantis", seats=[5, 3])
    assert bad.value.code == "bad_message"
    with pytest.raises(ServerError) as seats:
        await a.request("seek", game="mantis", seats=[1, 3])
    assert seats.value.code == "bad_seats"
    for client in (a, b, c):
        await client.close()


async def test_bots_fill_a_table_after_its_wait_and_only_for_who_accepts_them(
    running: app.Running,
) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    a, b, c = [await Client.connect(url, name=n) for n in "abc"]
    table = await a.seek("mantis", (3, 3), bots_after=2)
    # A seeker who does not accept bots is not seated at a table that will have them.
    assert (await c.seek("mantis", (3, 3))).room != table.room
    assert (await b.seek("mantis", (3, 3), bots_after=30)).room == table.room
    await table.wait(lambda m: m.view["status"] == "playing", timeout=20)
    seats = table.view["seats"]
    assert [s["bot"] for s in seats] == [False, False, True]
    assert {s["player"] for s in seats[:2]} == {a.player, b.player}
    for client in (a, b, c):
        await client.close()


async def test_a_seek_across_a_restart_finds_the_table_opened_before_it(
    redis_url: str,
) -> None:
    port = free_port()
    prefix = f"q{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "seek")
    await first.start()
    second = ServerProcess(first.port, redis_url, prefix, "seek")
    try:
        opener = await Client.connect(first.url, name="opener")
        table = await opener.seek("mantis", (3, 3))
        first.kill()
        await second.start()
        others = [await Client.connect(second.url, name=f"o{i}") for i in range(2)]
        joined = [await o.seek("mantis", (3, 4)) for o in others]
        assert {m.room for m in joined} == {table.room}
        await joined[0].wait(lambda m: m.view["status"] == "playing", timeout=20)
        _, record = await stored_room(redis_url, prefix, table.room)
        assert [s.player for s in record.seats] == [opener.player, *(o.player for o in others)]
        for client in (opener, *others):
            await client.close()
    finally:
        first.kill()
        second.terminate()
