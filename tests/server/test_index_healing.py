"""The indexes rooms share (the lobby, the active set, the expiry index) are written around a
room's commit by writes of their own, in other hash slots than the room's: an entry lost
between the commit and its write (a connection reset), a stale one, or a hand edit is put right
by the room's owner within a lease renewal; one left by a process that died is put right by
the next process to load the room. No operator. Real server processes, real Redis, real
websockets; and the store's check itself against a real Redis."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import msgpack
import redis.asyncio as aioredis

from playhall.store.keys import Keys
from playhall.store.redis_store import Store
from playhall.store.rooms import Placed
from playhall_client import Client

from .faults import ResetProxy
from .helpers import at_a_bots_turn, wait_for_redis
from .process import ServerProcess, free_port
from .redis_replies import raw

LEASE_MS = 1500  # renewed every half second


async def test_index_entries_lost_after_a_commit_come_back_within_a_lease_renewal(
    redis_url: str, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    keys = Keys(prefix)
    # The bot never moves: its turn keeps the game in the active set.
    extra = ["--lease-ms", str(LEASE_MS), "--bot-delay", "3600"]
    server = ServerProcess(free_port(), redis_url, prefix, f"{prefix}a", extra,
                           log_path=tmp_path / "a.log")
    await server.start()
    admin = aioredis.Redis.from_url(redis_url)
    alice = await Client.connect(server.url, name="alice")
    try:
        game = await at_a_bots_turn(alice)
        waiting = await alice.create("mantis", 2)
        room = game.room
        index = keys.lobby_index_key("mantis")

        async def entries() -> tuple[object, ...]:
            return (
                await admin.hget(keys.lobby, room),
                sorted(
                    m for m in map(raw, await admin.zrange(index, 0, -1))
                    if m.endswith(room.encode())
                ),
                await admin.sismember(keys.active, room),
                await admin.zscore(keys.expiry, room) is not None,
                await admin.sismember(keys.active, waiting.room),
            )

        whole = await entries()
        listed, members, active, due, stale = whole
        assert listed is not None and msgpack.unpackb(listed)["room"] == room
        assert len(members) == 1 and active and due and not stale  # type: ignore[arg-type]

        # As a process that died (or a connection reset) right after the commit leaves them:
        # the listing, the active set's entry and the expiry check of the game gone; and a
        # waiting room in the active set, as a stale write would leave it.
        await admin.hdel(keys.lobby, room)
        await admin.zrem(index, *members)  # type: ignore[misc]
        await admin.srem(keys.active, room)
        await admin.zrem(keys.expiry, room)
        await admin.sadd(keys.active, waiting.room)
        assert await entries() != whole
        loop = asyncio.get_running_loop()
        lost_at = loop.time()

        async def healed() -> bool:
            return await entries() == whole

        await wait_for_redis(healed, timeout=10)
        assert loop.time() - lost_at <= 2 * LEASE_MS / 3000 + 0.5
        # The game goes on, and the lobby shows it.
        assert room in [r["room"] for r in await alice.list_rooms("mantis")]
    finally:
        await alice.close()
        await admin.aclose()
        await asyncio.to_thread(server.terminate)
    restored = [line["room"] for line in server.log_lines()
                if line.get("event") == "indexes_restored"]
    assert sorted(restored) == sorted([room, waiting.room])


async def test_a_process_dying_between_a_commit_and_its_index_write_leaves_the_room_found(
    redis_url: str, proxy: ResetProxy, tmp_path: Path
) -> None:
    """The bot's move gives the turn back to its player: the room leaves the active set, in a
    write after the commit. Its owner loses Redis right then (that write never reaches it) and
    is killed: another process's restore pass finds the room in the active set, loads it, and
    the room takes itself out."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    keys = Keys(prefix)
    extra = ["--lease-ms", str(LEASE_MS)]
    owner = ServerProcess(free_port(), proxy.url, prefix, f"{prefix}a", extra,
                          log_path=tmp_path / "a.log")
    other = ServerProcess(free_port(), redis_url, prefix, f"{prefix}b",
                          [*extra, "--log-level", "info"], log_path=tmp_path / "b.log")
    admin = aioredis.Redis.from_url(redis_url)
    await owner.start()
    try:
        alice = await Client.connect(owner.url, name="alice")
        game = await alice.create("mantis", 2)
        await alice.add_bot(game.room, 1)
        await alice.ready(game.room)
        await game.wait(lambda m: m.view["status"] == "playing" and m.my_turn)
        before = game.version
        proxy.arm(b"SREM", keys.active.encode(), game.room.encode(), forward=False,
                  then_down=True)
        await alice.move(game.room, game.view["moves"][0])
        async with asyncio.timeout(10):
            await proxy.cut.wait()
        await asyncio.to_thread(owner.kill)
        await alice.close()
        # As the owner left it: the bot's move stored (its player's turn), the room still in
        # the active set.
        version = int(raw(await admin.hget(keys.room_key(game.room), "v")))
        assert version >= before + 2  # her move, and the bot's
        assert await admin.sismember(keys.active, game.room)

        await other.start()

        async def found() -> bool:
            return not await admin.sismember(keys.active, game.room)

        await wait_for_redis(found, timeout=15)
        assert int(raw(await admin.hget(keys.room_key(game.room), "v"))) == version  # unchanged
        bob = await Client.connect(other.url, token=alice.token)
        try:
            mirror = await bob.sync(game.room)
            assert mirror["version"] == version
        finally:
            await bob.close()
    finally:
        await admin.aclose()
        await asyncio.to_thread(owner.terminate)
        await asyncio.to_thread(other.terminate)
    loaded = [line for line in other.log_lines() if line.get("event") == "room_loaded"]
    assert [line["room"] for line in loaded] == [game.room]


async def test_the_owner_check_tells_every_entry_other_than_the_rooms_own(store: Store) -> None:
    k, redis = store.keys, store.redis
    summary = msgpack.packb({"room": "listed", "status": "waiting"})
    member = "00000000000001:listed"
    listed = ("listed", "mantis", member, summary)
    unlisted = ("unlisted", "mantis", "10000000000002:unlisted", b"")
    await redis.hset(k.lobby, "listed", summary)
    await redis.zadd(k.lobby_index_key("mantis"), {member: 0})
    assert await store.lobby.drift([listed, unlisted]) == set()
    # A summary other than the owner's, the other rank's member, a listing of a room that is
    # not listed: each is told.
    await redis.hset(k.lobby, "listed", msgpack.packb({"room": "listed", "status": "playing"}))
    assert await store.lobby.drift([listed, unlisted]) == {"listed"}
    await redis.hset(k.lobby, "listed", summary)
    await redis.zadd(k.lobby_index_key("mantis"), {"1" + member[1:]: 0})
    assert await store.lobby.drift([listed, unlisted]) == {"listed"}
    await redis.zrem(k.lobby_index_key("mantis"), "1" + member[1:])
    await redis.zadd(k.lobby_index_key("mantis"), {"10000000000002:unlisted": 0})
    assert await store.lobby.drift([listed, unlisted]) == {"unlisted"}

    playing = Placed("playing", active=True, due=True, code=None)
    finished = Placed("finished", active=False, due=False, code="CODE")
    await redis.sadd(k.active, "playing")
    await redis.zadd(k.expiry, {"playing": 1.0})
    await redis.set(k.code_key("CODE"), "finished", ex=60)
    assert await store.rooms.index_drift([playing, finished]) == set()
    await redis.persist(k.code_key("CODE"))  # the finishing commit's expiry of it, lost
    await redis.srem(k.active, "playing")
    assert await store.rooms.index_drift([playing, finished]) == {"playing", "finished"}
    await store.rooms.put_indexes(playing, 2.0, 60)
    await store.rooms.put_indexes(finished, 2.0, 60)
    assert await store.rooms.index_drift([playing, finished]) == set()
    assert await redis.zscore(k.expiry, "playing") == 1.0  # a check already due kept its time
    assert 0 < await redis.ttl(k.code_key("CODE")) <= 60
