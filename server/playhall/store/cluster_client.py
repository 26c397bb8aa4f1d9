"""The general redis-py client on a Redis Cluster: redis-py's ``RedisCluster``, whose
transactions go to their slot's primary as a single Redis's do.

The stores make a few writes and reads atomic with ``pipeline(transaction=True)`` (MULTI/EXEC),
every command of one of them on keys of one hash slot. redis-py's asyncio ``RedisCluster`` runs
each command queued on such a pipeline in a thread of its own, on an event loop of its own,
and waits for that thread: the server's loop stops meanwhile, and after a failover (the client
marked to read its slot map again) the thread waits on what only the stopped loop could give,
so the loop never runs again. Here a transaction is queued as it is asked for, then sent when
executed on a plain redis-py pipeline, to the primary of its first key's slot (one plain client
per node, made on first use): the same MULTI/EXEC a single Redis gets. A ``MOVED`` reply (the
slot went to another node: nothing ran) has the slot map read again and the transaction sent
once more.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import MovedError

from playhall.store.cluster_pipe import node_url


class ClusterClient(RedisCluster):
    """``RedisCluster`` whose ``pipeline(transaction=True)`` is a :class:`SlotTransaction`."""

    def __init__(self, *args: Any, seed: str, timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: A seed node's URL: the scheme, credentials and options of every node's.
        self.seed = seed
        self.timeout = timeout
        #: A plain client per primary that served a transaction, by address.
        self.plain: dict[tuple[str, int], aioredis.Redis] = {}

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        if transaction:
            return SlotTransaction(self)
        return super().pipeline(transaction, shard_hint)

    def plain_client(self, host: str, port: int) -> aioredis.Redis:
        client = self.plain.get((host, port))
        if client is None:
            client = self.plain[(host, port)] = aioredis.Redis.from_url(
                node_url(self.seed, host, port),
                socket_timeout=self.timeout, socket_connect_timeout=self.timeout,
            )
        return client

    async def aclose(self) -> None:
        for client in self.plain.values():
            await client.aclose()
        self.plain.clear()
        await super().aclose()


class SlotTransaction:
    """A MULTI/EXEC of one hash slot, used as redis-py's pipelines are: commands queued by
    calling them (each returns the transaction), ``await execute()`` for their replies, and
    ``async with``."""

    def __init__(self, cluster: ClusterClient) -> None:
        self._cluster = cluster
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def queue(*args: Any, **kwargs: Any) -> SlotTransaction:
            self._calls.append((name, args, kwargs))
            return self

        return queue

    def __len__(self) -> int:
        return len(self._calls)

    async def __aenter__(self) -> SlotTransaction:
        return self

    async def __aexit__(self, *_: object) -> None:
        self._calls.clear()

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        if not self._calls:
            return []
        _, args, _ = self._calls[0]
        key = args[0]  # every command the stores queue names its key first
        for attempt in range(2):
            node = self._cluster.get_node_from_key(key)
            assert node is not None  # (redis-py raises for a slot no node serves)
            pipe = self._cluster.plain_client(node.host, int(node.port)).pipeline(
                transaction=True
            )
            for name, call_args, kwargs in self._calls:
                getattr(pipe, name)(*call_args, **kwargs)
            try:
                return list(await pipe.execute(raise_on_error))
            except MovedError:
                if attempt:
                    raise
                await self._cluster.nodes_manager.initialize()
        raise AssertionError("unreachable")  # (the loop returns or raises)
