"""The lobby's cost does not grow with the number of rooms: a page of a bounded size read with
a bounded number of Redis commands, pushes to watchers bounded per interval; rooms per player
capped; and a waiting room nobody views leaves the listing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, cast

import msgpack
import redis.asyncio as aioredis

from playhall import app
from playhall.catalog import all_games
from playhall.lobby import Lobby, lobby_order
from playhall.rooms.ids import new_room_id
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store
from playhall.store.rooms import Commit
from playhall_client import Client
from playhall_protocol import decode, encode

from .conftest import server_config
from .helpers import server_with_player, too_many_rooms
from .redis_replies import raw

GAMES = sorted(all_games())


def _summary(n: int, game: str, status: str) -> dict[str, Any]:
    return {
        "room": new_room_id(), "game": game, "title": game, "status": status, "seats": 2,
        "taken": 1, "players": [f"p{n}", None], "options": {}, "created": 1.8e9 + n * 0.5,
    }  # fmt: skip


async def _list_directly(store: Store, summaries: list[dict[str, Any]]) -> None:
    """List rooms as the commit script does (lease check skipped: test-only empty lease)."""
    await asyncio.gather(*(
        store.rooms.commit(Commit(
            room=s["room"], lease="", prev_version=-1, version=1, record=b"-",
            log=[b"v", b"1", b"k", b"create"], lobby=msgpack.packb(s), game=s["game"],
            order=lobby_order(s),
        ))
        for s in summaries
    ))  # fmt: skip


async def _command_calls(server: app.Running) -> dict[str, int]:
    stats = await server.redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def test_a_page_is_bounded_and_the_pages_list_every_room(unthrottled: app.Running) -> None:
    server = unthrottled
    summaries = [
        _summary(n, GAMES[n % len(GAMES)], "waiting" if n % 3 else "playing")
        for n in range(3000)
    ]
    await _list_directly(server.endpoint.store, summaries)
    client = await Client.connect(f"ws://127.0.0.1:{server.port}/")
    try:
        before = await _command_calls(server)
        first = await client.request("rooms")
        after = await _command_calls(server)
        # One range read per game and one read of the page's summaries; never the whole hash.
        assert after.get("zrangebylex", 0) - before.get("zrangebylex", 0) == len(GAMES)
        assert after.get("hmget", 0) - before.get("hmget", 0) == 1
        assert after.get("hgetall", 0) == before.get("hgetall", 0)
        assert len(first["rooms"]) == server.config.lobby_page == 50
        one = max(len(encode(s)) for s in summaries)
        size = len(encode({"t": "ok", "re": 1, **first}))
        assert size <= 50 * one + 100, size  # about 6 KB, with 3,000 rooms listed
        asked = await client.request("rooms", limit=10_000)
        assert len(asked["rooms"]) == 50  # the server's maximum
        # Walking the pages lists every room once, waiting rooms first, then newest first.
        seen: list[dict[str, Any]] = []
        cursor: str | None = ""
        pages = 0
        while cursor is not None:
            fields: dict[str, Any] = {"after": cursor} if cursor else {}
            page = await client.request("rooms", limit=50, **fields)
            seen += page["rooms"]
            cursor = page["next"]
            pages += 1
        assert pages == 60
        expected = sorted(summaries, key=lambda s: (s["status"] != "waiting", -s["created"]))
        assert [s["room"] for s in seen] == [s["room"] for s in expected]
        # The game filter is applied in Redis: a page of one game holds only that game.
        game = GAMES[1]
        filtered = await client.request("rooms", game=game, limit=50)
        assert len(filtered["rooms"]) == 50 and {s["game"] for s in filtered["rooms"]} == {game}
        assert (await client.request("rooms", game="no-such-game"))["rooms"] == []
    finally:
        await client.close()


class _Watcher:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames.append(frame)


async def test_lobby_pushes_are_bounded_per_interval(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url))
    try:
        _pushes_are_bounded(Lobby(store, page=50, interval=3600.0))
    finally:
        store.close()
        await client.aclose()


def _pushes_are_bounded(lobby: Lobby) -> None:
    everything, one_game = _Watcher(), _Watcher()
    lobby.watch(everything, None)
    lobby.watch(one_game, GAMES[0])
    lobby.flush()  # a flush just now: the next waits for the interval
    for n in range(5000):
        summary = _summary(n, GAMES[n % len(GAMES)], "waiting")
        lobby.changed(summary["room"], summary if n % 4 else None, summary["game"])
    # 5,000 changes gathered, one flush armed for an hour from now, nothing pushed yet.
    assert lobby._flush is not None
    # A call_later's handle: uvloop's has when() too, but is no asyncio.TimerHandle.
    armed = cast(asyncio.TimerHandle, lobby._flush)
    assert armed.when() - asyncio.get_running_loop().time() > 3500
    assert everything.frames == [] and one_game.frames == []
    lobby.flush()
    for watcher in (everything, one_game):
        assert len(watcher.frames) == 1
        push = decode(watcher.frames[0])
        assert len(push.get("rooms", [])) + len(push.get("removed", [])) == 50
        assert push["more"] is True
        assert len(watcher.frames[0]) < 50 * 200
    assert {s["game"] for s in decode(one_game.frames[0])["rooms"]} == {GAMES[0]}
    # A quiet spell: the next change goes out at once, alone, without "more".
    lobby._flushed_at = time.monotonic() - 3600
    summary = _summary(0, GAMES[0], "playing")
    lobby.changed(summary["room"], summary, summary["game"])
    assert lobby._flush is not None
    lobby.flush()
    assert decode(everything.frames[-1]) == {"t": "lobby", "rooms": [summary]}


async def _until(condition: Callable[[], Any], timeout: float = 10) -> None:
    async def wait() -> None:
        while not await condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def test_rooms_per_player_are_capped(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, waiting_rooms=3, rooms_per_minute=6))
    url = f"ws://127.0.0.1:{running.port}/"
    player = await Client.connect(url)
    try:
        rooms = [await player.create("mantis", 2) for _ in range(3)]
        counter = f"{running.config.key_prefix}player:{{{player.player}}}:created"
        await too_many_rooms(player.create("mantis", 2), "waiting")
        assert int(raw(await running.redis.get(counter))) == 3  # the refused one is not counted
        await player.leave(rooms[0].room)  # leaving frees a place
        await player.create("mantis", 2)
        await player.add_bot(rooms[1].room, 1)
        await player.start(rooms[1].room)  # so does starting
        await player.create("mantis", 2, sit=False)  # watching only does not count
        made = f"{running.config.key_prefix}player:{{{player.player}}}:made"
        assert await running.redis.scard(made) <= 4
        # Five rooms made this minute (the refused create did not count): a sixth, and the
        # seventh is refused.
        await player.create("mantis", 2, sit=False)
        await too_many_rooms(player.create("mantis", 2, sit=False), "a minute")
    finally:
        await player.close()
        await running.drain()


async def test_a_room_made_to_watch_is_not_a_waiting_room_its_creator_sits_in(
    redis_url: str,
) -> None:
    """The waiting-rooms cap counts the waiting rooms a player created and sits in: one made
    with ``sit: false`` is like one created and left at once (the rooms a minute count it)."""
    async with server_with_player(redis_url, waiting_rooms=1, rooms_per_minute=3) as (_, player):
        await player.create("mantis", 2)
        await player.create("mantis", 2, sit=False)
        await too_many_rooms(player.create("mantis", 2), "waiting")
        await player.create("mantis", 2, sit=False)
        await too_many_rooms(player.create("mantis", 2, sit=False), "a minute")


async def test_a_waiting_room_nobody_views_leaves_the_lobby(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, idle_evict=0.2))
    url = f"ws://127.0.0.1:{running.port}/"
    prefix = running.config.key_prefix
    creator, visitor = await Client.connect(url), await Client.connect(url)
    try:
        room = (await creator.create("mantis", 2)).room
        assert [r["room"] for r in await visitor.list_rooms()] == [room]
        await creator.close()  # the creator goes away, seat kept, nobody viewing

        async def unlisted() -> bool:
            return await visitor.list_rooms() == []

        await _until(unlisted)
        assert await running.redis.hlen(f"{prefix}{{lobby}}") == 0
        assert await running.redis.zcard(f"{prefix}{{lobby}}:mantis") == 0
        await visitor.join(room)  # opening it lists it again (the visitor takes seat 1)
        listed = await visitor.list_rooms()
        assert [(r["room"], r["taken"]) for r in listed] == [(room, 2)]
        assert await running.redis.zcard(f"{prefix}{{lobby}}:mantis") == 1
    finally:
        await visitor.close()
        await running.drain()
