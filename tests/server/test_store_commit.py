"""Room commits against a real Redis: the fencing and version checks refuse what they must, and
the part of a commit kept encoded per room (digest, keys, lease) follows the lease it was made
under, so a commit never goes out under a lease the room no longer holds; and a load gives the
last checkpoint with exactly the log entries since."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

from playhall.store.pipe import CommandPipe
from playhall.store.redis_store import Store
from playhall.store.rooms import Commit, Fenced, LogGap, Renewal, VersionConflict
from playhall.store.scripts import RENEW_BATCH
from playhall.store.slots import slot_of

from .redis_replies import stream_entries


class CountingPipe:
    """A store's command pipe that counts the commands sent through it (a pipe of the compiled
    build cannot have its methods replaced, so the counting is a pipe of its own)."""

    def __init__(self, pipe: CommandPipe) -> None:
        self.pipe = pipe
        self.sent = 0
        self.on_answer: Callable[[], None] | None = None
        self.preamble: list[bytes] = []

    async def call(self, *args: bytes) -> Any:
        self.sent += 1
        return await self.pipe.call(*args)

    async def call_encoded(self, *command: bytes) -> Any:
        self.sent += 1
        return await self.pipe.call_encoded(*command)

    def close(self) -> None:
        self.pipe.close()


def change(room: str, lease: str, prev: int, record: bytes = b"r") -> Commit:
    return Commit(
        room=room, lease=lease, prev_version=prev, version=prev + 1, record=record,
        log=[b"v", b"%d" % (prev + 1), b"k", b"move", b"s", b"0", b"m", b"\x80"],
    )  # fmt: skip


async def stored(store: Store, room: str) -> tuple[int, bytes] | None:
    """The room's version and its record as last stored."""
    loaded = await store.rooms.load(room)
    return None if loaded is None else (loaded.version, loaded.record)


async def opened(store: Store, room: str, *records: bytes) -> str:
    """Take the room's lease as "one" and commit versions 0, 1, ... with these records."""
    lease = await store.rooms.acquire(room, "one", 10_000)
    assert lease is not None
    for version, record in enumerate(records):
        await store.rooms.commit(change(room, lease, version - 1, record))
    return lease


async def test_commits_follow_the_lease_they_are_made_under(store: Store) -> None:
    room = "r1"
    first = await opened(store, room, b"v0", b"v1")
    # Another process takes the room over (the first's lease lapsed): the first is fenced out.
    await store.rooms.release(room, first)
    second = await store.rooms.acquire(room, "two", 10_000)
    assert second is not None and second != first
    with pytest.raises(Fenced):
        await store.rooms.commit(change(room, first, 1, b"stale"))
    await store.rooms.commit(change(room, second, 1, b"v2"))
    assert await stored(store, room) == (2, b"v2")
    # The log holds one entry per version, the fenced commit none.
    assert [e["v"] for e in await store.rooms.log(room)] == [b"0", b"1", b"2"]


async def test_a_commit_against_another_version_is_refused_and_changes_nothing(
    store: Store,
) -> None:
    room = "r2"
    lease = await opened(store, room, b"v0")
    for wrong in (-1, 1, 5):
        with pytest.raises(VersionConflict):
            await store.rooms.commit(change(room, lease, wrong, b"nope"))
    assert await stored(store, room) == (0, b"v0")
    assert len(await store.rooms.log(room)) == 1


async def test_a_commit_without_a_record_keeps_the_last_checkpoint(store: Store) -> None:
    room = "r3"
    # Versions 2 to 4: game steps logged without their record.
    lease = await opened(store, room, b"v0", b"v1", b"", b"", b"")
    loaded = await store.rooms.load(room)
    assert loaded is not None
    assert (loaded.version, loaded.record, loaded.checkpoint) == (4, b"v1", 1)
    assert [e["v"] for e in loaded.since] == [b"2", b"3", b"4"]  # oldest first
    await store.rooms.commit(change(room, lease, 4, b"v5"))
    loaded = await store.rooms.load(room)
    assert loaded is not None
    assert (loaded.version, loaded.record, loaded.checkpoint, loaded.since) == (5, b"v5", 5, [])


async def test_a_log_missing_an_entry_since_the_checkpoint_is_refused(
    store: Store, redis_url: str
) -> None:
    room = "r4"
    await opened(store, room, b"v0", b"", b"")
    client = aioredis.Redis.from_url(redis_url)
    try:
        (first_id, _), _ = stream_entries(await client.xrevrange(store.keys.log_key(room), count=2))
        await client.xdel(store.keys.log_key(room), first_id)  # version 2's entry, gone
    finally:
        await client.aclose()
    with pytest.raises(LogGap):
        await store.rooms.load(room)


async def test_renewing_leases_extends_those_held_and_names_those_lost(store: Store) -> None:
    # Many rooms, so the calls' answers have to be put together, three of them in one slot.
    rooms = [f"lease{i}" for i in range(RENEW_BATCH + 7)]
    first = slot_of(store.keys.lease_key(rooms[0]))
    names = (f"same{i}" for i in range(10**6))
    rooms += [name for name in names if slot_of(store.keys.lease_key(name)) == first][:2]
    tokens: dict[str, str] = {}
    for room in rooms:
        token = await store.rooms.acquire(room, "one", 1_000)
        assert token is not None
        tokens[room] = token
    taken_over, expired = rooms[3], rooms[RENEW_BATCH + 2]  # one in each call
    tokens[taken_over] = "someone-else|1"
    await store.redis.delete(store.keys.lease_key(expired))
    assert (await store.rooms.renew(tokens, 60_000)).lost == {taken_over, expired}
    # Again, counting the commands (Redis has the script now): one per hash slot (a script
    # call names keys of one slot only), so rooms of one slot share one.
    counting = CountingPipe(store.pipe)
    again = Store(store.redis, counting, store.keys.p)
    assert (await again.rooms.renew(tokens, 60_000)).lost == {taken_over, expired}
    slots = {slot_of(store.keys.lease_key(room)) for room in rooms}
    assert len(slots) == len(rooms) - 2
    assert counting.sent == len(slots)
    for room in rooms:
        ttl = await store.redis.pttl(store.keys.lease_key(room))
        if room == expired:
            assert ttl == -2  # not brought back
        elif room == taken_over:
            assert 0 < ttl <= 1_000  # left as its holder set it
        else:
            assert 1_000 < ttl <= 60_000


class NodeAwayPipe(CountingPipe):
    """A command pipe to which the node serving one key is away: a command naming it fails as
    a lost connection does (a Cluster's primary being replaced)."""

    def __init__(self, pipe: CommandPipe, away: bytes) -> None:
        super().__init__(pipe)
        self.away = away

    async def call_encoded(self, *command: bytes) -> Any:
        if any(self.away in part for part in command):
            raise RedisConnectionError("the node is away")
        return await super().call_encoded(*command)


async def test_a_slot_whose_node_is_away_does_not_hold_back_the_other_rooms_renewals(
    store: Store,
) -> None:
    rooms = ["awayA", "awayB", "awayC"]
    assert len({slot_of(store.keys.lease_key(room)) for room in rooms}) == 3
    tokens = {}
    for room in rooms:
        token = await store.rooms.acquire(room, "one", 1_000)
        assert token is not None
        tokens[room] = token
    away = Store(store.redis, NodeAwayPipe(store.pipe, store.keys.lease_key("awayA").encode()),
                 store.keys.p)
    assert await away.rooms.renew(tokens, 60_000) == Renewal(set(), {"awayA"})
    ttls = [await store.redis.pttl(store.keys.lease_key(room)) for room in rooms]
    assert 0 < ttls[0] <= 1_000 and all(1_000 < ttl <= 60_000 for ttl in ttls[1:])
    assert away.outage.since is not None  # reported
    # Every slot away: the renewal fails as a whole.
    alone = {"awayA": tokens["awayA"]}
    with pytest.raises(RedisConnectionError):
        await away.rooms.renew(alone, 60_000)


async def noscript_refusals(client: aioredis.Redis) -> int:
    """How many commands Redis has refused NOSCRIPT since it started."""
    stats = await client.info("errorstats")
    return int(stats.get("errorstat_NOSCRIPT", {}).get("count", 0))


async def test_every_new_connection_gives_redis_the_scripts_before_any_commit(
    store: Store, redis_url: str
) -> None:
    """A server starting with rooms to restore, or reconnecting to a restarted Redis, commits
    many rooms at once on a connection to a Redis without the scripts: each goes by digest and
    runs, none is refused NOSCRIPT and sent again in full."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        # This Redis counts NOSCRIPT refusals (else the checks below would prove nothing).
        before = await noscript_refusals(client)
        with pytest.raises(NoScriptError):
            await client.evalsha("0" * 40, 0)
        before += 1
        assert await noscript_refusals(client) == before

        await client.script_flush()
        rooms = [f"fresh{i}" for i in range(20)]
        leases = await asyncio.gather(*(opened(store, room, b"v0") for room in rooms))
        assert await noscript_refusals(client) == before

        store.pipe.close()  # the connection lost, and Redis restarted without its scripts
        await client.script_flush()
        commits = [change(room, lease, 0, b"v1") for room, lease in zip(rooms, leases, strict=True)]
        await asyncio.gather(*(store.rooms.commit(c) for c in commits))
        assert await noscript_refusals(client) == before
        assert [await stored(store, room) for room in rooms] == [(1, b"v1")] * len(rooms)
    finally:
        await client.aclose()


async def test_a_commit_publishes_its_messages_once_stored_and_never_when_refused(
    store: Store, redis_url: str
) -> None:
    # On one Redis the owner's frames for other processes' viewers go with the room's commit
    # (rooms.actor, fleet.owner.EdgeMail.claim): published by the script, after the change
    # is made, and not at all if it is refused.
    room = "r-publish"
    channel = store.keys.edge_channel("test").encode()
    listener = aioredis.Redis.from_url(redis_url)
    pubsub = listener.pubsub()
    await pubsub.subscribe(channel)
    try:
        assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"

        async def heard() -> bytes:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5)
            assert message is not None, "nothing was published"
            return bytes(message["data"])

        lease = await opened(store, room, b"v0")
        made = change(room, lease, 0, b"")
        made.publish = [channel, b"first", channel, b"second"]
        await store.rooms.commit(made)
        assert [await heard(), await heard()] == [b"first", b"second"]
        assert await stored(store, room) == (1, b"v0")

        refused = change(room, lease, 0, b"")  # made against version 0: the room is at 1
        refused.publish = [channel, b"conflict"]
        with pytest.raises(VersionConflict):
            await store.rooms.commit(refused)
        await store.rooms.release(room, lease)
        other = await store.rooms.acquire(room, "two", 10_000)
        assert other is not None
        fenced = change(room, lease, 1, b"")
        fenced.publish = [channel, b"fenced"]
        with pytest.raises(Fenced):
            await store.rooms.commit(fenced)
        # Redis delivers in order: the next message heard is the next commit's, so neither
        # refused commit published anything.
        last = change(room, other, 1, b"")
        last.publish = [channel, b"third"]
        await store.rooms.commit(last)
        assert await heard() == b"third"
        # The log entry comes after the messages in the script's arguments: it is whole.
        assert [e["v"] for e in await store.rooms.log(room)] == [b"0", b"1", b"2"]
        assert (await store.rooms.log(room))[-1]["m"] == b"\x80"
    finally:
        await pubsub.aclose()
        await listener.aclose()
