"""Which Redis the configured URL names, and the connections the store opens to it.

``redis://`` (``rediss://`` with TLS, ``unix://``) is one Redis, as redis-py reads it.
``redis+cluster://host:port[,host:port...]`` (``rediss+cluster://`` with TLS) is a Redis
Cluster: the hosts are seed nodes (any of them answering is enough to find the others), the
user name, password and query string apply to every node, and there is no database number (a
Cluster has only database 0). Either way the server runs the same code above the store: the
general client is redis-py's ``Redis`` or ``RedisCluster`` (both answer every command the
stores send, each command of one hash slot: a Cluster's is
:class:`~playhall.store.cluster_client.ClusterClient`), and the hot path's command pipe a
:class:`~playhall.store.pipe.RedisPipe` or a
:class:`~playhall.store.cluster_pipe.ClusterPipe` (one ``RedisPipe`` per primary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.connection import SSLConnection, parse_url

from playhall.store.cluster_client import ClusterClient
from playhall.store.cluster_pipe import ClusterPipe
from playhall.store.pipe import CommandPipe, RedisPipe

#: The schemes that name a Cluster, and the plain scheme of each of its nodes.
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


@dataclass(frozen=True)
class RedisTarget:
    """The Redis a URL names: one Redis (``seeds`` is the URL itself) or a Cluster (``seeds``
    are its seed nodes' plain ``redis://`` or ``rediss://`` URLs)."""

    cluster: bool
    seeds: tuple[str, ...]


def parse_target(url: str) -> RedisTarget:
    """The Redis ``url`` names; ValueError (saying why) for a Cluster URL that names no node,
    a node without a port, or a database."""
    parts = urlsplit(url)
    scheme = CLUSTER_SCHEMES.get(parts.scheme)
    if scheme is None:
        return RedisTarget(False, (url,))
    credentials, at, hosts = parts.netloc.rpartition("@")
    seeds = []
    for host in hosts.split(","):
        name, colon, port = host.strip().rpartition(":")
        if not colon or not name or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{url!r}: each node of a Cluster is host:port, not {host!r}")
        netloc = f"{credentials}{at}{name}:{port}"
        seeds.append(urlunsplit((scheme, netloc, "", parts.query, "")))
    if parts.path not in ("", "/", "/0"):
        raise ValueError(f"{url!r}: a Cluster has one database (0), not {parts.path[1:]!r}")
    return RedisTarget(True, tuple(seeds))


def check_url(raw: str) -> str:
    """A Redis URL as given, stripped, once it reads: a Cluster URL must name its nodes (the
    configuration's check, so a bad one stops the start saying why)."""
    url = raw.strip()
    parse_target(url)
    return url


async def open_client(target: RedisTarget, timeout: float) -> aioredis.Redis:
    """The general redis-py client (lobby, hello, chat and every other command off the hot
    path), connected: it answers a PING (a Cluster's: its slot map read). Its commands get
    the commit connection's deadline, so a stalled Redis fails hello and the lobby as it fails
    moves (store_failed), whatever redis-py's own default."""
    if not target.cluster:
        # A blocking pool: at a thousand connections saying hello at once, requests wait for
        # a Redis connection instead of failing with "too many connections".
        pool = aioredis.BlockingConnectionPool.from_url(
            target.seeds[0],
            max_connections=64,
            timeout=20,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )
        client = aioredis.Redis(connection_pool=pool)
        await client.ping()
        return client
    options = parse_url(target.seeds[0])
    for name in ("host", "port", "db"):
        options.pop(name, None)
    if options.pop("connection_class", None) is SSLConnection:
        options["ssl"] = True
    nodes = [ClusterNode(*_host_port(seed)) for seed in target.seeds]
    cluster = ClusterClient(
        startup_nodes=nodes,
        seed=target.seeds[0],
        timeout=timeout,
        # redis-py's cluster pools do not wait for a free connection (one past the limit is
        # refused and retried): a node's limit is set above what a process asks at once.
        max_connections=256,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        **options,
    )
    await cluster.initialize()
    await cluster.ping()
    # The stores are written against redis-py's client interface, which RedisCluster keeps
    # for every command they send (one hash slot each: playhall.store.keys).
    return cast(aioredis.Redis, cluster)


def open_pipe(target: RedisTarget, client: aioredis.Redis, timeout: float) -> CommandPipe:
    """The hot path's command pipe: one connection, or one per primary of a Cluster (its slot
    map shared with ``client``, the :class:`RedisCluster` :func:`open_client` made)."""
    if not target.cluster:
        return RedisPipe(target.seeds[0], timeout=timeout)
    return ClusterPipe(cast(RedisCluster, client), target.seeds[0], timeout=timeout)


async def drop_idle_connections(client: aioredis.Redis) -> None:
    """Close ``client``'s idle connections (the next command makes a new one); on a Cluster,
    those of the transactions' clients (per primary), on which the reads that settle a lost
    reply go. Not the cluster nodes' own: their pools hand out a free connection without a
    lock, so one closed here could be in another task's hands already (it failed sends with
    "NoneType has no attribute writelines" under failovers); redis-py remakes those itself
    after a connection error."""
    if isinstance(client, ClusterClient):
        cluster = cast(ClusterClient, client)
        # A copy: a transaction to a primary seen for the first time adds one meanwhile.
        for plain in list(cluster.plain.values()):
            await plain.connection_pool.disconnect(inuse_connections=False)
        return
    await client.connection_pool.disconnect(inuse_connections=False)


def _host_port(seed: str) -> tuple[str, int]:
    parts = urlsplit(seed)
    assert parts.hostname is not None and parts.port is not None  # checked by parse_target
    return parts.hostname, parts.port
