"""The Redis Cluster the tests start (``cluster.py``): three primaries sharing every slot, each
with a replica; a primary failed over or killed hands its slots to its replica, and what was
written before is still read."""

from __future__ import annotations

from redis.asyncio.cluster import RedisCluster

from .cluster import LocalCluster, primary_port


async def test_three_primaries_share_every_slot_each_with_a_replica(
    redis_cluster: LocalCluster,
) -> None:
    client = RedisCluster.from_url(redis_cluster.seed_url)
    try:
        info = await client.cluster_info(target_nodes=RedisCluster.RANDOM)
        assert int(info["cluster_slots_ok"]) == 16384
        primaries = await redis_cluster.primaries()
        assert len(primaries) == 3
        for primary in primaries:
            assert await redis_cluster.replica_of(primary) not in primaries
        assert len(client.get_primaries()) == 3
    finally:
        await client.aclose()


async def test_a_primary_failed_over_and_one_killed_hand_their_slots_to_their_replicas(
    redis_cluster: LocalCluster,
) -> None:
    client = RedisCluster.from_url(redis_cluster.seed_url)
    try:
        await client.set("fixture:{a}", "1")
        await client.set("fixture:{b}", "2")
        (first,) = [n for n in await redis_cluster.primaries()
                    if n == primary_port(client, "fixture:{a}")]
        successor = await redis_cluster.fail_over(first)
        assert successor != first
        assert successor in await redis_cluster.primaries()
        assert await redis_cluster.replica_of(successor) == first
        assert await client.get("fixture:{a}") == b"1"

        second = primary_port(client, "fixture:{b}")
        promoted = await redis_cluster.kill(second)
        assert promoted in await redis_cluster.primaries()
        assert second not in await redis_cluster.primaries()
        assert await redis_cluster.is_whole()  # the killed node is back, a replica
        assert await client.get("fixture:{b}") == b"2"
    finally:
        await client.aclose()
