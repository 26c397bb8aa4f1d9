"""A commit whose reply is lost (the connection to Redis drops after the script ran) has an
unknown outcome, not a failed one: the room settles it from Redis, answers the move as stored,
answers its retry the same, and never keeps a version Redis does not have. Over a real Redis,
behind a proxy that resets the server's connection right after forwarding the commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from playhall import app
from playhall_client import Client, ServerError

from .conftest import server_config
from .faults import ResetProxy
from .helpers import Table, started_table, stored_room


@dataclass
class Setup:
    redis_url: str
    prefix: str
    proxy: ResetProxy
    table: Table

    def next_move(self) -> tuple[Client, int, dict[str, Any]]:
        """The client whose turn it is, the version it sees, and a legal move of its."""
        seat = self.table.mover()
        mirror = self.table.mirrors[seat]
        return self.table.clients[seat], mirror.version, mirror.view["moves"][0]

    def commit_of(self, room: str) -> tuple[bytes, bytes]:
        """What marks the room's commit on the wire: the script call, and its log key."""
        return b"EVALSHA", f"{self.prefix}room:{{{room}}}:log".encode()


@pytest.fixture
async def setup(redis_url: str) -> AsyncIterator[Setup]:
    proxy = await ResetProxy(redis_url).start()
    config = server_config(proxy.url)
    running = await app.start(config)
    table = await started_table(f"ws://127.0.0.1:{running.port}/")
    yield Setup(redis_url, config.key_prefix, proxy, table)
    proxy.come_up()
    await table.close()
    await running.drain()
    await proxy.close()


async def test_a_move_whose_reply_was_lost_is_answered_as_stored(setup: Setup) -> None:
    table = setup.table
    client, version, move = setup.next_move()
    setup.proxy.arm(*setup.commit_of(table.room))
    reply = await client.move(table.room, move, mid="lost-reply")
    assert setup.proxy.cut.is_set()  # the reply was dropped and the connection reset
    assert reply["version"] == version + 1
    # The retry of the same move gets the same answer; it is not applied twice.
    again = await client.move(table.room, move, mid="lost-reply", version=version)
    assert again["version"] == version + 1
    stored, record = await stored_room(setup.redis_url, setup.prefix, table.room)
    assert stored.version == version + 1
    synced = await client.request("sync", room=table.room, version=version)
    assert synced["version"] == version + 1
    # And the room goes on: everyone sees the move, the next one is stored.
    for m in table.mirrors:
        await m.wait(lambda m: m.version == version + 1)
    nxt = table.mover()
    moved = await table.clients[nxt].move(table.room, table.mirrors[nxt].view["moves"][0])
    assert moved["version"] == version + 2


async def test_a_lost_reply_while_redis_stays_away_is_not_called_not_made(setup: Setup) -> None:
    table = setup.table
    client, version, move = setup.next_move()
    setup.proxy.arm(*setup.commit_of(table.room), then_down=True)
    with pytest.raises(ServerError) as refused:
        await client.move(table.room, move, mid="unknown-outcome", retry=False)
    assert refused.value.code == "store_failed"
    assert "not made" not in refused.value.reason  # it was stored: Redis ran the script
    assert "retry the same request" in refused.value.reason
    # Meanwhile the room serves nothing from memory: it does not know its version.
    with pytest.raises(ServerError) as unsure:
        await client.request("sync", room=table.room, version=version)
    assert unsure.value.code == "store_failed"
    setup.proxy.come_up()
    again = await client.move(table.room, move, mid="unknown-outcome", version=version)
    assert again["version"] == version + 1
    stored, _ = await stored_room(setup.redis_url, setup.prefix, table.room)
    assert stored.version == version + 1


async def test_a_room_left_unsettled_settles_by_itself_once_redis_is_back(setup: Setup) -> None:
    """Nobody asks the room anything after the lost reply: it settles from a timer all the
    same, and everyone sees the move that was stored."""
    table = setup.table
    client, version, move = setup.next_move()
    setup.proxy.arm(*setup.commit_of(table.room), then_down=True)
    with pytest.raises(ServerError) as refused:
        await client.move(table.room, move, mid="settles-by-itself", retry=False)
    assert "retry the same request" in refused.value.reason
    setup.proxy.come_up()
    for m in table.mirrors:
        await m.wait(lambda m: m.version == version + 1)


@pytest.mark.parametrize("stored", [True, False])
async def test_a_settling_read_whose_connection_was_reset_is_asked_again(
    setup: Setup, stored: bool
) -> None:
    """The fault that lost the commit's reply (or the commit) reset the settling read's
    connection too, while Redis itself answers at once: the room asks again on a fresh
    connection and answers what Redis holds, not "outcome unknown"."""
    table = setup.table
    client, version, move = setup.next_move()
    room, p = table.room, setup.prefix
    setup.proxy.arm(*setup.commit_of(room), forward=stored)
    read = (b"MULTI", b"HGET", f"{p}room:{{{room}}}".encode(), f"{p}lease:{{{room}}}".encode())
    setup.proxy.arm(*read, after=True)
    if stored:
        reply = await client.move(room, move, mid="asked-again", retry=False)
        assert reply["version"] == version + 1
    else:
        with pytest.raises(ServerError) as refused:
            await client.move(room, move, mid="asked-again", retry=False)
        assert refused.value.reason == "the change was not made"
    assert setup.proxy.cut.is_set()  # the commit's connection and the read's were reset
    stored_now, _ = await stored_room(setup.redis_url, p, room)
    assert stored_now.version == version + stored
@pytest.mark.parametrize("private, sit", [(False, True), (True, True), (True, False)])
async def test_a_create_whose_reply_was_lost_made_its_room_whole(
    redis_url: str, private: bool, sit: bool
) -> None:
    """A ``create`` whose first write's reply is lost is refused with an unknown outcome that
    names the room. That write made the whole room, its creator already seated in it (unless
    they asked not to sit): syncing it, as the protocol says to, views it from that seat (a
    private room's creator needs no code), and the Python client's ``create`` finds it by
    itself."""
    proxy = await ResetProxy(redis_url).start()
    running = await app.start(server_config(proxy.url))
    client = await Client.connect(f"ws://127.0.0.1:{running.port}/")
    first_write = (b"EVALSHA", b"\r\ncreate\r\n")  # the log entry of a room's first write
    try:
        proxy.arm(*first_write)
        with pytest.raises(ServerError) as refused:
            await client.request("create", game="mantis", seats=2, private=private, sit=sit)
        assert proxy.cut.is_set() and refused.value.code == "store_failed"
        room = refused.value.reply["room"]
        assert ("join_code" in refused.value.reply) == private
        synced = await client.request("sync", room=room)
        assert (synced["seat"], synced["version"]) == (0 if sit else None, 1)
        proxy.arm(*first_write)
        mirror = await client.create("mantis", 2, private=private, sit=sit)
        assert proxy.cut.is_set() and mirror.room != room
        assert (mirror.seat, mirror.version) == (0 if sit else None, 1)
    finally:
        await client.close()
        await running.drain()
        await proxy.close()
