"""One lobby across server processes sharing a Redis: a room made on one process is pushed to
the ``lobby.watch``ers of another, frame for frame as the process that holds it pushes it to
its own; a listing lost from Redis is listed again by the room's owner within a lease renewal;
a lost subscription to the lobby's changes is made again and its watchers brought up to date.
Real server processes, real Redis, real websockets."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import msgpack
import redis.asyncio as aioredis
from websockets.asyncio.client import ClientConnection, connect

from playhall.lobby_feed import read_change
from playhall.store.bus import client_name
from playhall_client import Client
from playhall_protocol import encode

from .faults import ResetProxy
from .helpers import wait_for_redis
from .process import ServerProcess, free_port

#: Every change pushed on its own, as soon as it is heard (the interval's merging is the
#: same on every process, but its timing is not what these tests compare).
SETTINGS = ["--lobby-interval", "0"]


class LobbyWatcher:
    """A raw websocket watching the lobby: the lobby pushes exactly as they came, in bytes."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, stack: AsyncExitStack, url: str, game: str | None) -> LobbyWatcher:
        watcher = cls(await stack.enter_async_context(connect(url)))
        await watcher.ws.send(msgpack.packb({"t": "hello", "id": 1, "protocol": [1]}))
        assert msgpack.unpackb(await watcher.ws.recv())["t"] == "ok"
        await watcher.ws.send(msgpack.packb({"t": "lobby.watch", "id": 2, "game": game}
                                            if game else {"t": "lobby.watch", "id": 2}))
        reply = msgpack.unpackb(await watcher.ws.recv())
        assert reply["t"] == "ok" and reply["re"] == 2, reply
        return watcher

    async def next(self, timeout: float = 10) -> bytes:
        """The next lobby push, as sent."""
        async with asyncio.timeout(timeout):
            while True:
                frame = await self.ws.recv()
                assert isinstance(frame, bytes)
                if msgpack.unpackb(frame).get("t") == "lobby":
                    return frame


@asynccontextmanager
async def processes(
    redis_urls: list[str], tmp_path: Path, extra: list[str] | None = None
) -> AsyncIterator[list[ServerProcess]]:
    """A server process per Redis address (the same Redis, or a proxy in front of it), one key
    prefix for all: one hall."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    servers = [
        ServerProcess(
            free_port(), url, prefix, f"{prefix}{name}", SETTINGS + (extra or []),
            log_path=tmp_path / f"{name}.log",
        )
        for name, url in zip("ab", redis_urls, strict=False)
    ]
    try:
        await asyncio.gather(*(server.start() for server in servers))
        yield servers
    finally:
        for server in servers:
            if server.process is not None and server.process.poll() is None:
                server.terminate()


async def test_a_watcher_on_one_process_gets_the_pushes_of_a_room_made_on_another(
    redis_url: str, tmp_path: Path
) -> None:
    async with processes([redis_url] * 2, tmp_path) as (a, b), AsyncExitStack() as stack:
        far = await LobbyWatcher.open(stack, a.url, "mantis")
        near = await LobbyWatcher.open(stack, b.url, "mantis")
        everything = await LobbyWatcher.open(stack, a.url, None)
        alice = await Client.connect(b.url, name="alice")
        bob = await Client.connect(b.url, name="bob")
        stack.push_async_callback(alice.close)
        stack.push_async_callback(bob.close)

        async def pushed() -> dict[str, Any]:
            """The push every watcher gets for one change: the same bytes on both processes,
            once each (a process pushing its own change twice would show here as its next
            push being a repeat)."""
            frames = [await w.next() for w in (far, near, everything)]
            assert frames[0] == frames[1] == frames[2]
            push: dict[str, Any] = msgpack.unpackb(frames[0])
            return push

        room = await alice.create("mantis", 2)
        push = await pushed()
        assert [r["room"] for r in push["rooms"]] == [room.room]
        assert push["rooms"][0]["taken"] == 1 and push["rooms"][0]["status"] == "waiting"
        assert "removed" not in push and "more" not in push

        await bob.join(room.room)  # a seat taken
        push = await pushed()
        assert push["rooms"][0]["taken"] == 2 and push["rooms"][0]["players"] == ["alice", "bob"]

        await alice.ready(room.room)  # (the summary does not change: nothing is pushed)
        await bob.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        push = await pushed()
        assert push["rooms"][0]["room"] == room.room and push["rooms"][0]["status"] == "playing"

        await alice.resign(room.room)  # the game ends: the room leaves the listing
        push = await pushed()
        assert push == {"t": "lobby", "removed": [room.room]}

        # A waiting room whose people all leave leaves the listing too.
        second = await bob.create("mantis", 3)
        assert msgpack.unpackb(await far.next())["rooms"][0]["room"] == second.room
        await near.next()
        await everything.next()
        await bob.leave(second.room)
        push = await pushed()
        assert push == {"t": "lobby", "removed": [second.room]}


async def test_a_lost_listing_is_listed_again_within_a_lease_renewal(
    redis_url: str, tmp_path: Path
) -> None:
    lease_ms = 1500  # renewed every half second
    async with processes([redis_url], tmp_path, ["--lease-ms", str(lease_ms)]) as (a,):
        admin = aioredis.Redis.from_url(redis_url)
        alice = await Client.connect(a.url, name="alice")
        try:
            room = await alice.create("mantis", 2)
            prefix = a.env["PLAYHALL_KEY_PREFIX"]
            lobby, index = f"{prefix}{{lobby}}", f"{prefix}{{lobby}}:mantis"
            listed = await admin.hget(lobby, room.room)
            members = await admin.zrange(index, 0, -1)
            assert listed is not None and len(members) == 1
            loop = asyncio.get_running_loop()
            renewal = lease_ms / 3000

            async def healed() -> bool:
                return (await admin.hget(lobby, room.room) == listed
                        and await admin.zrange(index, 0, -1) == members)

            # The summary lost, then the index entry alone: each is written again, as it was.
            for lose in (lambda: admin.hdel(lobby, room.room), lambda: admin.zrem(index, *members)):
                await lose()
                assert not await healed()
                lost_at = loop.time()
                await wait_for_redis(healed, timeout=10)
                assert loop.time() - lost_at <= 2 * renewal + 0.5
            # Other processes and new watchers read it from Redis again.
            assert [r["room"] for r in await alice.list_rooms("mantis")] == [room.room]
        finally:
            await alice.close()
            await admin.aclose()
    restored = [line for line in a.log_lines() if line.get("event") == "indexes_restored"]
    assert [line["room"] for line in restored] == [room.room, room.room]


async def _feed_connection(admin: aioredis.Redis, server: ServerProcess) -> int | None:
    """The id of ``server``'s subscribed connection (the bus, the lobby feed's too) in Redis's
    CLIENT LIST (None: none now)."""
    name = client_name(server.env["PLAYHALL_INSTANCE"])
    ids = [int(c["id"]) for c in await admin.client_list() if c.get("name") == name]
    assert len(ids) <= 1
    return ids[0] if ids else None


async def test_a_killed_subscription_is_made_again_and_its_watchers_brought_up_to_date(
    redis_url: str, tmp_path: Path
) -> None:
    async with processes([redis_url] * 2, tmp_path) as (a, b), AsyncExitStack() as stack:
        admin = aioredis.Redis.from_url(redis_url)
        stack.push_async_callback(admin.aclose)
        watcher = await LobbyWatcher.open(stack, a.url, "mantis")
        alice = await Client.connect(b.url, name="alice")
        stack.push_async_callback(alice.close)
        first = await alice.create("mantis", 2)
        assert msgpack.unpackb(await watcher.next())["rooms"][0]["room"] == first.room

        # A stranger's message on the channel is dropped; the feed goes on.
        channel = f"{a.env['PLAYHALL_KEY_PREFIX']}{{lobby}}:changes"
        for junk in (b"\xc1", msgpack.packb(["x", "room", "mantis", {"room": 3}]), b""):
            assert await admin.publish(channel, junk) == 2  # both processes subscribe

        killed = await _feed_connection(admin, a)
        assert killed is not None
        await admin.client_kill_filter(_id=str(killed))
        # Brought up to date: the first page as it is now, saying more may have changed.
        page = await admin.hget(f"{a.env['PLAYHALL_KEY_PREFIX']}{{lobby}}", first.room)
        assert page is not None
        resync = await watcher.next()
        assert resync == encode({"t": "lobby", "rooms": [msgpack.unpackb(page)], "more": True})

        async def made_again() -> bool:
            again = await _feed_connection(admin, a)
            return again is not None and again != killed

        await wait_for_redis(made_again, timeout=10)

        second = await alice.create("mantis", 3)  # heard on the new subscription
        push = msgpack.unpackb(await watcher.next())
        assert [r["room"] for r in push["rooms"]] == [second.room]
    bad = [line for line in a.log_lines() if line.get("event") == "lobby_feed_bad_message"]
    assert len(bad) == 1  # logged once, however many came
    assert any(line.get("event") == "lobby_feed_resubscribed" for line in a.log_lines())


async def test_a_change_missed_while_redis_was_away_reaches_the_watchers_after(
    redis_url: str, tmp_path: Path, proxy: ResetProxy
) -> None:
    """Process A reaches Redis through a proxy that goes down: a room made on B meanwhile is
    published while A is not subscribed, and is in the page A pushes once it is back."""
    async with processes([proxy.url, redis_url], tmp_path) as (a, b), AsyncExitStack() as stack:
        watcher = await LobbyWatcher.open(stack, a.url, "mantis")
        alice = await Client.connect(b.url, name="alice")
        stack.push_async_callback(alice.close)
        admin = aioredis.Redis.from_url(redis_url)
        stack.push_async_callback(admin.aclose)
        channel = f"{a.env['PLAYHALL_KEY_PREFIX']}{{lobby}}:changes"
        proxy.go_down()
        await wait_for_redis(lambda: _subscribers(admin, channel, 1))  # B's only
        missed = await alice.create("mantis", 2)
        proxy.come_up()
        push = msgpack.unpackb(await watcher.next(timeout=20))
        assert push["more"] is True and [r["room"] for r in push["rooms"]] == [missed.room]


async def _subscribers(admin: aioredis.Redis, channel: str, count: int) -> bool:
    numbers = dict(await admin.pubsub_numsub(channel))
    return int(numbers.get(channel.encode(), 0)) == count


def test_only_a_change_as_published_is_read_off_the_channel() -> None:
    summary = {"room": "r1", "game": "mantis", "taken": 1}
    for listed in (summary, None):
        change = msgpack.packb(["o", "r1", "mantis", listed])
        assert read_change(change) == ("o", "r1", "mantis", listed)
    for junk in (
        b"", b"\xc1", "text", msgpack.packb(["o", "r1", "mantis"]),
        msgpack.packb({"room": "r1"}), msgpack.packb([1, "r1", "mantis", None]),
        msgpack.packb(["o", "r1", "mantis", {"room": "r2"}]),  # another room's summary
        msgpack.packb(["o", "r1", "mantis", [1, 2]]),
        msgpack.packb(["o", "r1", "mantis", None]) + b"x",
    ):
        assert read_change(junk) is None, junk
