"""What Redis forgets, and when: a finished room's fence counter and join code go with it; a
player lives ``player_ttl`` after their last hello; a player's room list forgets expired rooms;
a waiting room nobody views is closed after ``waiting_ttl``; a game nobody plays or views is
ended after ``abandoned_ttl`` and then expires as a finished room."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from playhall import app
from playhall.config import Config
from playhall_client import Client

from .conftest import server_config
from .helpers import play_to_the_end, stored_room, wait_for_redis
from .redis_replies import raw


async def test_a_finished_private_room_takes_its_code_and_fence_with_it(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, finished_ttl=600))
    url = f"ws://127.0.0.1:{running.port}/"
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2, private=True)
        code = room.view["code"]
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        redis, p = running.redis, running.config.key_prefix
        assert await redis.ttl(f"{p}code:{code}") == -1  # kept while the room lives
        assert await redis.ttl(f"{p}fence:{{{room.room}}}") == -1
        await play_to_the_end(alice, room)
        for key in (f"room:{{{room.room}}}", f"room:{{{room.room}}}:log", f"fence:{{{room.room}}}"):
            assert 0 < await redis.ttl(p + key) <= 600, key
        assert 0 < await redis.ttl(f"{p}code:{code}") <= 600
    finally:
        await alice.close()
        await running.drain()


async def test_a_player_is_kept_player_ttl_after_each_hello(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, player_ttl=1000))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    try:
        await alice.create("mantis", 2)  # so the room set exists
        assert 0 < await redis.ttl(f"{p}player:{{{alice.player}}}") <= 1000
        await redis.expire(f"{p}player:{{{alice.player}}}", 10)
        token = alice.token
    finally:
        await alice.close()
    again = await Client.connect(url, token=token)
    try:
        assert again.player == alice.player  # the token still works, and the clock restarted
        assert 10 < await redis.ttl(f"{p}player:{{{alice.player}}}") <= 1000
        assert 0 < await redis.ttl(f"{p}player:{{{alice.player}}}:rooms") <= 1000
    finally:
        await again.close()
        await running.drain()


async def test_hello_forgets_rooms_that_expired(redis_url: str) -> None:
    running = await app.start(server_config(redis_url))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    try:
        kept = await alice.create("mantis", 2)
        gone = await alice.create("mantis", 2)
        token = alice.token
    finally:
        await alice.close()
    await redis.delete(f"{p}room:{{{gone.room}}}")  # as its expiry would
    again = await Client.connect(url, token=token)
    try:
        assert again.welcome["rooms"] == [kept.room]
        members = await redis.smembers(f"{p}player:{{{alice.player}}}:rooms")
        assert {raw(m).decode() for m in members} == {kept.room}
    finally:
        await again.close()
        await running.drain()


# -- rooms that never finish ---------------------------------------------------------------------


def _short_lived(redis_url: str, **overrides: object) -> Config:
    """Expiry in fractions of a second, and rates no test of hundreds of rooms runs into."""
    settings: dict[str, object] = {
        "waiting_ttl": 0.3,
        "abandoned_ttl": 0.3,
        "idle_evict": 0.2,
        "finished_evict": 0.1,
        "away_takeover": 0.0,  # an away player's stand-in would finish the game instead
        "rate": 100_000.0,
        "burst": 100_000,
        "rooms_per_minute": 0,  # one player makes them all here
        "address_rooms_per_minute": 0,
        "waiting_rooms": 0,
        **overrides,
    }
    return server_config(redis_url, **settings)


async def test_an_unviewed_waiting_room_closes_and_an_abandoned_game_ends(
    redis_url: str,
) -> None:
    running = await app.start(_short_lived(redis_url, finished_ttl=600))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    watcher = await Client.connect(url, name="watcher")
    try:
        waiting = await alice.create("mantis", 2)
        watched = await alice.create("mantis", 2)
        await watcher.join(watched.room, watch=True)
        game = await alice.create("mantis", 2)
        await bob.join(game.room)
        await alice.ready(game.room)
        await bob.ready(game.room)
        listed = {r["room"] for r in await watcher.watch_lobby()}
        assert {waiting.room, watched.room, game.room} <= listed
        for client in (alice, bob):
            await client.close()

        async def closed_and_ended() -> bool:
            gone = not await redis.exists(f"{p}room:{{{waiting.room}}}")
            _, record = await stored_room(redis_url, p, game.room)
            return gone and record.status == "finished"

        await wait_for_redis(closed_and_ended)
        _, record = await stored_room(redis_url, p, game.room)
        assert record.outcome == {"winners": [], "scores": [], "reason": "abandoned"}
        assert 0 < await redis.ttl(f"{p}room:{{{game.room}}}") <= 600  # expires as finished
        assert not await redis.hexists(f"{p}{{lobby}}", waiting.room)
        assert not await redis.zscore(f"{p}expiry", waiting.room)
        await _lobby_removal(watcher, waiting.room)
        # The room somebody watches stays, however long nobody else comes.
        assert await redis.exists(f"{p}room:{{{watched.room}}}")
        assert await redis.hexists(f"{p}{{lobby}}", watched.room)
    finally:
        for client in (alice, bob, watcher):
            await client.close()
        await running.drain()


async def _lobby_removal(client: Client, room: str, timeout: float = 10) -> None:
    """Wait for the lobby push that says ``room`` left the listing."""
    async with asyncio.timeout(timeout):
        while True:
            message = await client.pushes.get()
            if message.get("t") == "lobby" and room in message.get("removed", []):
                return


async def test_hundreds_of_rooms_left_in_every_state_leave_no_key_behind(redis_url: str) -> None:
    """Waiting rooms (public and private, with chat), games (with and without a running clock)
    and finished games (with chat written after the end), all left alone: Redis ends up with
    none of their keys, index entries or join codes."""
    running = await app.start(_short_lived(redis_url, finished_ttl=1))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    rooms: list[str] = []
    codes: list[str] = []
    per_state = 40
    try:
        for n in range(per_state):
            rooms.append((await alice.create("mantis", 3)).room)
            private = await alice.create("mandragora", 2, private=True)
            await alice.chat(private.room, f"anyone? {n}")
            rooms.append(private.room)
            codes.append(private.view["code"])
            for options in ({}, {"clock": "fischer", "clock_ms": 60_000}):
                playing = await alice.create("mantis", 2, options=options)
                await bob.join(playing.room)
                await alice.ready(playing.room)
                await bob.ready(playing.room)
                rooms.append(playing.room)
            finished = await alice.create("mandala", 2)
            await bob.join(finished.room)
            await alice.ready(finished.room)
            await bob.ready(finished.room)
            await bob.resign(finished.room)
            await alice.chat(finished.room, "gg")
            rooms.append(finished.room)
    finally:
        await alice.close()
        await bob.close()
    assert len(rooms) == 5 * per_state

    async def left_behind() -> int:
        pipe = redis.pipeline(transaction=False)
        for room in rooms:
            for key in (f"room:{{{room}}}", f"room:{{{room}}}:log", f"room:{{{room}}}:chat",
                        f"fence:{{{room}}}", f"lease:{{{room}}}"):
                pipe.exists(p + key)
            pipe.hexists(f"{p}{{lobby}}", room)
            pipe.sismember(f"{p}active", room)
            pipe.zscore(f"{p}expiry", room)
        for code in codes:
            pipe.exists(f"{p}code:{code}")
        return sum(1 for found in await pipe.execute() if found)

    try:
        assert await left_behind() > 5 * per_state  # they are all there to begin with
        await wait_for_redis(lambda: _none(left_behind), 60)
    finally:
        await running.drain()


async def _none(count: Callable[[], Awaitable[int]]) -> bool:
    return await count() == 0
