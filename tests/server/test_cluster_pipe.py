"""The hot path's command pipe on a real Redis Cluster (``store/cluster_pipe.py``): each command
reaches the primary of its key's slot, a stale slot map is mended by the MOVED reply, and a
primary failed over or killed mid-stream fails only the commands in flight (as a store failure)
while the next ones reach its successor."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import uuid
from collections.abc import AsyncIterator
from typing import cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from playhall.store import scripts
from playhall.store.cluster_pipe import ClusterPipe, command_key
from playhall.store.connect import drop_idle_connections, open_client, open_pipe, parse_target
from playhall.store.outage import is_store_error
from playhall.store.pipe import encode_bulk, encode_command

from ..cancels import cancelled_while_stopping
from .cluster import LocalCluster, on_node, primary_port

#: A script of one key (the pipe's routing sees its first key after the key count).
BUMP = scripts.Script.of("return redis.call('INCRBY', KEYS[1], ARGV[1])")


#: A script this session loads and never runs (its digest unique to the session).
LOADED_TEXT = f"return '{uuid.uuid4().hex}'"
LOADED = scripts.Script.of(LOADED_TEXT)


@pytest.fixture
async def cluster_pipe(redis_cluster: LocalCluster) -> AsyncIterator[ClusterPipe]:
    target = parse_target(redis_cluster.url)
    client = await open_client(target, timeout=2.0)
    pipe = open_pipe(target, client, timeout=2.0)
    assert isinstance(pipe, ClusterPipe)
    pipe.preamble = [BUMP.load, LOADED.load]
    yield pipe
    await pipe.aclose()
    await client.aclose()


async def _asking(port: int, *command: object) -> object:
    """``command`` asked of the node on ``port`` right after ``ASKING``, on one connection."""
    client = aioredis.Redis(port=port, single_connection_client=True)
    try:
        await client.execute_command("ASKING")
        return await client.execute_command(*command)
    finally:
        await client.aclose()


def test_the_routing_key_is_the_first_key_of_a_command_or_of_a_script() -> None:
    assert command_key((encode_command([b"ZADD", b"k{a}", b"1", b"m"]),)) == b"k{a}"
    head = b"*6\r\n"
    assert command_key((head, BUMP.by_sha, encode_bulk([b"1", b"k{b}", b"2"]))) == b"k{b}"
    assert command_key((head, BUMP.by_sha, encode_bulk([b"0", b"x"]))) is None
    assert command_key((encode_command([b"ping"]),)) is None
    assert command_key((encode_command([b"PUBSUB", b"SHARDNUMSUB", b"c{r}"]),)) == b"c{r}"


async def test_each_command_reaches_the_primary_of_its_slot(
    redis_cluster: LocalCluster, cluster_pipe: ClusterPipe,
) -> None:
    keys = [f"pipe:{{room{i}}}:n".encode() for i in range(12)]
    replies = await asyncio.gather(
        *(scripts.call(cluster_pipe, BUMP, [key.decode()], [str(i + 1)])
          for i, key in enumerate(keys)),
        *(cluster_pipe.call(b"SET", key + b":s", b"v") for key in keys),
    )
    assert replies[: len(keys)] == [i + 1 for i in range(len(keys))]
    used = set()
    for i, key in enumerate(keys):
        port = cluster_pipe.node_of(key)[1]
        used.add(port)
        assert int(await on_node(port, "GET", key)) == i + 1  # type: ignore[call-overload]
        assert await on_node(port, "GET", key + b":s") == b"v"
    assert used == set(await redis_cluster.primaries())
    assert cluster_pipe.refreshes == 1  # nothing was redirected
    # Every node's connection began with the preamble's SCRIPT LOAD (this test's own script,
    # never run anywhere, is known to every primary all the same).
    for port in used:
        digest = hashlib.sha1(LOADED_TEXT.encode()).hexdigest()
        assert await on_node(port, "SCRIPT", "EXISTS", digest) == [1]
    assert await cluster_pipe.call(b"PING") == b"PONG"


async def test_a_stale_slot_map_is_mended_by_the_moved_reply(
    redis_cluster: LocalCluster, cluster_pipe: ClusterPipe,
) -> None:
    key = b"pipe:{moved}:n"
    slot = cluster_pipe.slot(key)
    right = cluster_pipe.table[slot]
    wrong = next(a for a in set(cluster_pipe.table) if a != right)
    cluster_pipe.table[slot] = wrong
    assert await scripts.call(cluster_pipe, BUMP, [key.decode()], ["5"]) == 5
    assert cluster_pipe.table[slot] == right  # from the MOVED reply
    async with asyncio.timeout(10):
        while cluster_pipe.refreshes < 2:  # the whole map read again in the background
            await asyncio.sleep(0.01)
    assert int(await on_node(right[1], "GET", key)) == 5  # type: ignore[call-overload]


async def _bump_until(
    pipe: ClusterPipe, key: bytes, stop: asyncio.Event,
) -> tuple[int, list[BaseException]]:
    """INCR ``key`` over and over, a few in flight at once, until ``stop``: how many were
    answered, and the errors of those that were not."""
    done = 0
    failed: list[BaseException] = []
    while not stop.is_set():
        results = await asyncio.gather(
            *(pipe.call(b"INCR", key) for _ in range(5)), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                failed.append(result)
            else:
                done += 1
        await asyncio.sleep(0)  # (a pass of the loop between batches, as rooms commit)
    return done, failed


async def test_a_count_of_no_subscriber_from_a_replica_has_the_slot_map_read_again(
    redis_cluster: LocalCluster, cluster_pipe: ClusterPipe,
) -> None:
    """A routing table older than a failover names the old primary, a replica now, which
    answers SPUBLISH and SHARDNUMSUB itself (0) instead of MOVED: the 0 has the map read
    again, and the next publish reaches the primary, where the subscriber is."""
    channel = b"pipe:{counted}:in"
    slot = cluster_pipe.slot(channel)
    primary = cluster_pipe.node_of(channel)
    replica = await redis_cluster.replica_of(primary[1])
    listener = aioredis.Redis(port=primary[1]).pubsub()
    try:
        await listener.ssubscribe(channel)
        cluster_pipe.table[slot] = (primary[0], replica)  # as a failover would leave it
        read = cluster_pipe.refreshes
        assert await cluster_pipe.call(b"SPUBLISH", channel, b"lost") == 0  # the replica's
        async with asyncio.timeout(10):
            while cluster_pipe.refreshes == read:
                await asyncio.sleep(0.01)  # the map read again in the background
        assert cluster_pipe.table[slot] == primary
        assert await cluster_pipe.call(b"SPUBLISH", channel, b"heard") == 1
    finally:
        await listener.aclose()


async def test_a_slot_being_moved_is_followed_with_asking(
    redis_cluster: LocalCluster, cluster_pipe: ClusterPipe,
) -> None:
    """While an operator moves a slot, its old node answers ASK for a key it no longer has;
    the command goes to the new node after ASKING, and the slot map is left as it is."""
    key = b"pipe:{asked}:k"
    slot = cluster_pipe.slot(key)
    source = cluster_pipe.node_of(key)[1]
    target = next(port for port in await redis_cluster.primaries() if port != source)
    source_id, target_id = [await on_node(port, "CLUSTER", "MYID") for port in (source, target)]
    await on_node(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    await on_node(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    try:
        assert await cluster_pipe.call(b"SET", key, b"moved") == b"OK"  # ASK, then ASKING
        assert await cluster_pipe.call(b"GET", key) == b"moved"
        assert await _asking(target, "EXISTS", key) == 1  # written on the target
        assert cluster_pipe.node_of(key)[1] == source  # the slot is still the source's
        assert await cluster_pipe.call(b"DEL", key) == 1
    finally:
        for port in (source, target):
            await on_node(port, "CLUSTER", "SETSLOT", slot, "STABLE")


@pytest.mark.parametrize("fault", ["fail_over", "kill"])
async def test_a_primary_failing_midstream_fails_at_most_the_commands_in_flight(
    redis_cluster: LocalCluster, cluster_pipe: ClusterPipe, fault: str,
) -> None:
    """``fail_over``: the old primary answers what it holds MOVED, and the pipe sends it to
    the new one (nothing fails). ``kill``: what was in flight fails (ConnectionError, a store
    failure), and the next commands reach the promoted replica."""
    key = f"pipe:{{{fault}}}:n".encode()
    primary = cluster_pipe.node_of(key)[1]
    stop = asyncio.Event()
    bumping = asyncio.create_task(_bump_until(cluster_pipe, key, stop))
    if fault == "fail_over":
        successor = await redis_cluster.fail_over(primary)
    else:
        successor = await redis_cluster.kill(primary, revive=False)
    await _answered_after(cluster_pipe, key)
    stop.set()
    done, failed = await bumping
    assert all(is_store_error(exc) for exc in failed), failed
    assert cluster_pipe.node_of(key)[1] == successor
    if fault == "kill":
        assert any(isinstance(exc, RedisConnectionError) for exc in failed)
        await redis_cluster.revive()
        return
    # Every INCR answered (and the one after) was made once; one whose reply was lost may
    # have been made too.
    stored = int(await on_node(successor, "GET", key))  # type: ignore[call-overload]
    assert done + 1 <= stored <= done + 1 + len(failed)


async def _answered_after(pipe: ClusterPipe, key: bytes, timeout: float = 20) -> int:
    """Send INCRs until one is answered (a store failure meanwhile is retried, as a room
    retries a commit); returns its reply."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                return int(await pipe.call(b"INCR", key))
            except RedisError as exc:
                assert is_store_error(exc)
                await asyncio.sleep(0.05)  # a room's retry after store_failed


async def test_the_general_client_drops_the_idle_connections_of_its_transactions(
    redis_cluster: LocalCluster,
) -> None:
    """What a room does before settling a commit whose reply was lost (``fresh``): the idle
    connections its settling read (a transaction) goes on, to every primary, are closed, and
    the next transaction makes a new one."""
    client = await open_client(parse_target(redis_cluster.url + "/?client_name=idle-probe"), 2.0)
    try:
        keys = [f"idle:{{{i}}}" for i in range(12)]
        for key in keys:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(key, "1")
                pipe.get(key)
                await pipe.execute()
        primaries = await redis_cluster.primaries()
        before = [await _named(port, "idle-probe") for port in primaries]
        await drop_idle_connections(client)
        after = [await _named(port, "idle-probe") for port in primaries]
        assert all(a < b for a, b in zip(after, before, strict=True)), (before, after)
        async with client.pipeline(transaction=True) as pipe:
            pipe.get(keys[0])
            assert await pipe.execute() == [b"1"]
    finally:
        await client.aclose()


async def test_dropping_idle_connections_fails_no_command_running_meanwhile(
    redis_cluster: LocalCluster,
) -> None:
    """Commands of other tasks go on while a room drops the idle connections: none of them is
    handed a connection being closed."""
    client = await open_client(parse_target(redis_cluster.url), 2.0)
    try:
        keys = [f"busy:{{{i}}}" for i in range(24)]
        await asyncio.gather(*(client.set(key, "1") for key in keys))

        async def reads() -> None:
            for _ in range(20):
                assert await asyncio.gather(*(client.get(key) for key in keys)) == [b"1"] * 24

        async def drops() -> None:
            for _ in range(40):
                await drop_idle_connections(client)
                await asyncio.sleep(0)

        await asyncio.gather(reads(), drops())
    finally:
        await client.aclose()


async def _named(port: int, name: str) -> int:
    """How many connections named ``name`` the node on ``port`` has."""
    listed = await on_node(port, "CLIENT", "LIST")
    text = listed.decode() if isinstance(listed, bytes) else str(listed)
    return sum(f" name={name} " in f" {line} " for line in text.splitlines())


async def test_a_transaction_runs_on_its_slots_primary_and_after_a_failover_on_its_successor(
    redis_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stores' MULTI/EXEC of one slot (``pipeline(transaction=True)``) on the general
    client: on the slot's primary, and after a failover on its successor; and never in a
    thread the server's loop waits for (redis-py's own cluster transactions run each queued
    command in a thread of its own, with an event loop of its own, and a server stopped for
    good in one)."""
    threads: list[threading.Thread] = []
    start = threading.Thread.start

    def started(thread: threading.Thread) -> None:
        threads.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", started)
    client = await open_client(parse_target(redis_cluster.url), 2.0)
    key = "tx:{failover}"

    async def transaction(value: str) -> list[object]:
        async with client.pipeline(transaction=True) as pipe:
            pipe.set(key, value)
            pipe.get(key)
            return list(await pipe.execute())

    try:
        assert await transaction("1") == [True, b"1"]
        primary = primary_port(cast(RedisCluster, client), key)  # open_client's, typed Redis
        successor = await redis_cluster.fail_over(primary)
        assert await transaction("2") == [True, b"2"]  # MOVED: the map read again, sent again
        assert await on_node(successor, "GET", key) == b"2"
        assert threads == []
    finally:
        await client.aclose()


async def test_a_close_cancelled_while_it_waits_for_a_map_read_ends_cancelled(
    cluster_pipe: ClusterPipe,
) -> None:
    cluster_pipe.refresh_soon()
    stopper = await cancelled_while_stopping(cluster_pipe.aclose)
    assert stopper.cancelled()
