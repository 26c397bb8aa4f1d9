"""The bus on a real Redis Cluster (``store/bus.py``, sharded pub/sub): a message published on a
channel reaches its subscriber whatever node serves the channel's slot, SHARDNUMSUB counts the
subscribers of each channel on its own node, and after a primary is failed over or killed the
bus subscribes on the promoted node and tells its users (``on_reconnect``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from playhall.store.bus import Bus
from playhall.store.cluster_pipe import ClusterPipe
from playhall.store.connect import open_client, open_pipe, parse_target
from playhall.store.outage import Outage

from .cluster import LocalCluster, on_node
from .helpers import Heard


async def cluster_pipe(url: str) -> ClusterPipe:
    target = parse_target(url)
    pipe = open_pipe(target, await open_client(target, timeout=2.0), timeout=2.0)
    assert isinstance(pipe, ClusterPipe)
    return pipe


@pytest.fixture
async def publisher(redis_cluster: LocalCluster) -> AsyncIterator[ClusterPipe]:
    """Another process's pipe: what it publishes reaches the bus only through the Cluster."""
    pipe = await cluster_pipe(redis_cluster.url)
    yield pipe
    await pipe.aclose()
    await pipe.cluster.aclose()


@pytest.fixture
async def bus(redis_cluster: LocalCluster) -> AsyncIterator[tuple[Bus, Heard]]:
    pipe = await cluster_pipe(redis_cluster.url)
    made = Bus(redis_cluster.url, pipe, Outage(), name="playhall-bus:test", timeout=2.0,
               quiet=1.0)
    heard = Heard()
    made.on_reconnect.append(heard.reconnected)
    yield made, heard
    await made.stop()
    await pipe.aclose()
    await pipe.cluster.aclose()


def channels_on_every_primary(pipe: ClusterPipe, count: int = 12) -> list[bytes]:
    channels = [f"bus:{{room{i}}}:in".encode() for i in range(count)]
    assert len({pipe.node_of(c) for c in channels}) == 3, "spread over the three primaries"
    return channels


async def listening_everywhere(bus: Bus, heard: Heard, publisher: ClusterPipe) -> list[bytes]:
    """The bus started, subscribed to channels on every primary (``heard`` gets them)."""
    channels = channels_on_every_primary(publisher)
    for channel in channels:
        await bus.subscribe(channel, heard.handler(channel))
    await bus.start()
    return channels


async def publish_each(publisher: ClusterPipe, bus: Bus, channels: list[bytes], data: bytes
                       ) -> list[int]:
    """Publish ``data`` on each channel as the bus would (SPUBLISH), from the other pipe."""
    return list(await asyncio.gather(*(publisher.call(b"SPUBLISH", c, data) for c in channels)))


async def test_sharded_messages_reach_their_subscriber_from_every_node(
    bus: tuple[Bus, Heard], publisher: ClusterPipe,
) -> None:
    subscriber, heard = bus
    assert subscriber.sharded
    channels = channels_on_every_primary(publisher)
    for channel in channels[:-1]:
        await subscriber.subscribe(channel, heard.handler(channel))
    await subscriber.start()
    assert subscriber.ready.is_set()
    assert len(subscriber.links) == 3  # one subscribed connection per primary
    await subscriber.subscribe(channels[-1], heard.handler(channels[-1]))  # after the start

    assert await publish_each(publisher, subscriber, channels, b"hi") == [1] * len(channels)
    await heard.wait(lambda: all(heard.messages[c] == [b"hi"] for c in channels))

    # SHARDNUMSUB, each channel asked of its own node; an unsubscribed channel counts 0.
    await subscriber.unsubscribe(channels[0])
    counts = await subscriber.numsub([*channels, b"bus:{nobody}:in"])
    assert counts[1::2] == [0] + [1] * (len(channels) - 1) + [0]
    assert counts[0::2] == [*channels, b"bus:{nobody}:in"]
    # The bus's own publish is sharded too.
    assert await subscriber.publish(channels[1], b"again") == 1
    await heard.wait(lambda: heard.messages[channels[1]] == [b"hi", b"again"])
    assert heard.reconnects == 0


async def test_a_publish_another_process_waits_on_is_written_to_its_node_by_the_call(
    bus: tuple[Bus, Heard], publisher: ClusterPipe,
) -> None:
    """The fleet's publishes on a Cluster are written as on one Redis (``RedisPipe.call_then``):
    ``at_once`` (a forwarded request) by the call when nothing is due to its channel's node in
    that pass, else with the pass's write; ``now`` (a forwarded request's answer) by the call,
    with what was queued for that node before it (the first early write of the node's pass).
    Each still reaches its subscriber, in order, and its count reaches ``then``."""
    subscriber, heard = bus
    channel = (await listening_everywhere(subscriber, heard, publisher))[0]
    node = publisher.pipe_at(publisher.node_of(channel))
    bus_of_publisher = Bus("", publisher, Outage(), name="playhall-bus:publisher", timeout=2.0)
    counts: list[object] = []

    def then(listeners: object, failure: BaseException | None) -> None:
        counts.append(failure or listeners)

    assert await publisher.call(b"SPUBLISH", channel, b"0") == 1  # the node's pipe connected
    bus_of_publisher.publish_then(channel, b"1", then, at_once=True)
    assert not node._queued  # nothing was due: written by the call
    bus_of_publisher.publish_then(channel, b"2", then, at_once=True)
    bus_of_publisher.publish_then(channel, b"3", then)
    assert len(node._queued) == 2  # a write was due: they wait for it
    await heard.wait(lambda: heard.messages[channel] == [b"0", b"1", b"2", b"3"])
    bus_of_publisher.publish_then(channel, b"4", then)
    bus_of_publisher.publish_then(channel, b"5", then, now=True)
    assert not node._queued  # written by the call, behind what was queued
    await heard.wait(lambda: heard.messages[channel] == [b"0", b"1", b"2", b"3", b"4", b"5"])
    await heard.wait(lambda: counts == [1, 1, 1, 1, 1])


@pytest.mark.parametrize("fault", ["fail_over", "kill"])
async def test_after_a_primary_fails_the_bus_subscribes_on_its_successor_and_says_so(
    bus: tuple[Bus, Heard], publisher: ClusterPipe, redis_cluster: LocalCluster, fault: str,
) -> None:
    subscriber, heard = bus
    channels = await listening_everywhere(subscriber, heard, publisher)
    victim = publisher.node_of(channels[0])[1]
    moving = [c for c in channels if publisher.node_of(c)[1] == victim]
    staying = [c for c in channels if c not in moving]

    if fault == "fail_over":
        successor = await redis_cluster.fail_over(victim)
    else:
        successor = await redis_cluster.kill(victim, revive=False)
    await heard.wait(lambda: heard.reconnects >= 1)

    # Every channel of the failed node is subscribed on its successor, the others untouched.
    await publisher.refresh()
    assert {publisher.node_of(c)[1] for c in moving} == {successor}
    counts = await subscriber.numsub(channels)
    assert counts[1::2] == [1] * len(channels)
    assert await publish_each(publisher, subscriber, channels, b"after") == [1] * len(channels)
    await heard.wait(lambda: all(heard.messages[c][-1:] == [b"after"] for c in channels))
    assert all(heard.messages[c] == [b"after"] for c in staying)
    assert set(subscriber.links) == {publisher.node_of(c) for c in channels}
    if fault == "kill":
        await redis_cluster.revive()


async def move_slot(cluster: LocalCluster, slot: int, source: int, target: int) -> None:
    """Move an empty slot from the primary on ``source`` to the one on ``target``, as an
    operator resharding does, and tell every primary."""
    ids = {port: await node_id(port) for port in (source, target)}
    await on_node(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
    await on_node(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
    for port in (target, source, *(p for p in await cluster.primaries() if p not in ids)):
        await on_node(port, "CLUSTER", "SETSLOT", slot, "NODE", ids[target])


async def test_a_slot_moved_away_takes_its_channels_subscription_to_its_new_node(
    bus: tuple[Bus, Heard], publisher: ClusterPipe, redis_cluster: LocalCluster,
) -> None:
    subscriber, heard = bus
    channels = await listening_everywhere(subscriber, heard, publisher)
    moving = channels[0]
    slot = publisher.slot(moving)
    source = publisher.node_of(moving)[1]
    target = next(p for p in await redis_cluster.primaries() if p != source)
    await move_slot(redis_cluster, slot, source, target)
    try:
        await heard.wait(lambda: heard.reconnects >= 1)
        await publisher.refresh()
        assert publisher.node_of(moving)[1] == target
        # The source dropped the moved channel; the bus remade its link there (every channel
        # of that node subscribed again) and subscribed the moved one on the target.
        async with asyncio.timeout(20):
            while (await subscriber.numsub(channels))[1::2] != [1] * len(channels):
                await asyncio.sleep(0.05)  # polling Redis's counts
        assert (target_host := publisher.node_of(moving)) in subscriber.links
        assert moving in subscriber.links[target_host].channels
        assert await publisher.call(b"SPUBLISH", moving, b"moved") == 1
        await heard.wait(lambda: heard.messages[moving] == [b"moved"])
    finally:
        await move_slot(redis_cluster, slot, target, source)


async def node_id(port: int) -> str:
    found = await on_node(port, "CLUSTER", "MYID")
    return found.decode() if isinstance(found, bytes) else str(found)
