"""Connections per client address, counted on every server process sharing one Redis: a second
process adds no connections to an address's ``connections_per_address``, a closed connection
frees its place on every process, and the connections of a process that died lapse within
``lease_ms``."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import msgpack
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from websockets.asyncio.client import ClientConnection, connect

from playhall import app
from playhall.net import endpoint as endpoint_module
from playhall.store import outage as outage_module

from .conftest import free_port, server_config
from .helpers import Recorder
from .process import ServerProcess

HEADER = "X-Forwarded-For"


async def _hello(port: int, address: str, stack: AsyncExitStack) -> dict[str, Any]:
    """Open a connection that the proxy says comes from ``address``, say hello on it and keep
    it open (in ``stack``); the hello's reply."""
    ws: ClientConnection = await stack.enter_async_context(
        connect(f"ws://127.0.0.1:{port}/", additional_headers={HEADER: address})
    )
    await ws.send(msgpack.packb({"t": "hello", "id": 1, "protocol": [1]}))
    reply: dict[str, Any] = msgpack.unpackb(await ws.recv())
    return reply


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)  # polling Redis with a deadline


async def _counted(running: app.Running, address: str) -> int:
    """Connections counted against ``address`` and not lapsed (lapsed ones are dropped only
    when the next one is counted)."""
    key = f"{running.config.key_prefix}address:{{{address}}}:conns"  # as docs/operations.md says
    return int(await running.redis.zcount(key, int(time.time() * 1000), "+inf"))


def _refused_for_connections(reply: dict[str, Any]) -> bool:
    return reply.get("code") == "rate_limited" and "connections" in reply.get("reason", "")


@asynccontextmanager
async def _two_processes(redis_url: str, **settings: Any) -> AsyncIterator[list[app.Running]]:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    servers = []
    for name in ("one", "two"):
        config = server_config(redis_url, forwarded_header=HEADER, **settings)
        config.key_prefix, config.instance = prefix, f"{prefix}{name}"
        servers.append(await app.start(config))
    try:
        yield servers
    finally:
        for running in servers:
            await running.drain()


async def test_a_second_process_adds_no_connections_to_an_address(redis_url: str) -> None:
    async with _two_processes(redis_url, connections_per_address=2) as (one, two):
        address = "203.0.113.7"
        async with AsyncExitStack() as first, AsyncExitStack() as others:
            assert (await _hello(one.port, address, first))["t"] == "ok"
            assert (await _hello(one.port, address, others))["t"] == "ok"
            # The other process has no connection from the address, and still refuses a third.
            refused = await _hello(two.port, address, others)
            assert _refused_for_connections(refused), refused
            assert refused["retry_after"] > 0
            assert await _counted(two, address) == 2
            # Another address is not affected.
            assert (await _hello(two.port, "203.0.113.8", others))["t"] == "ok"
            # One closed on the first process frees its place on the second.
            await first.aclose()
            await _eventually(lambda: _eq(_counted(one, address), 1))
            assert (await _hello(two.port, address, others))["t"] == "ok"
            assert await _counted(one, address) == 2


async def _eq(count: Awaitable[int], expected: int) -> bool:
    return await count == expected


async def test_the_connections_of_a_process_that_died_lapse(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    lease = 1500
    settings = ["--connections-per-address", "1", "--forwarded-header", HEADER]
    settings += ["--lease-ms", str(lease)]
    doomed = ServerProcess(free_port(), redis_url, prefix, f"{prefix}doomed", settings)
    config = server_config(
        redis_url, forwarded_header=HEADER, connections_per_address=1, lease_ms=lease
    )
    config.key_prefix, config.instance = prefix, f"{prefix}alive"
    alive = await app.start(config)
    address = "198.51.100.4"
    try:
        await doomed.start()
        async with AsyncExitStack() as stack:
            assert (await _hello(doomed.port, address, stack))["t"] == "ok"
            doomed.kill()  # kill -9: its connection is never released
            async with AsyncExitStack() as refused:  # (closed: it holds alive's one place)
                assert _refused_for_connections(await _hello(alive.port, address, refused))
            started = asyncio.get_running_loop().time()
            await _eventually(lambda: _eq(_counted(alive, address), 0), timeout=lease / 1000 + 5)
            assert asyncio.get_running_loop().time() - started <= lease / 1000 + 1
            assert (await _hello(alive.port, address, stack))["t"] == "ok"
    finally:
        if doomed.process is not None and doomed.process.poll() is None:
            doomed.terminate()
        await alive.drain()


async def test_a_failed_release_is_logged_as_a_bug_or_counted_as_redis_away(
    redis_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection's release that fails is not dropped unseen: a bug is logged, Redis away
    counts in the outage log (the count then lapses within ``lease_ms``)."""
    async with _two_processes(redis_url, connections_per_address=3) as (one, _):
        endpoint_log, outage_log = Recorder(), Recorder()
        monkeypatch.setattr(endpoint_module, "logger", endpoint_log)
        monkeypatch.setattr(outage_module, "logger", outage_log)
        failures = iter([ValueError("a bug"), RedisConnectionError("gone")])
        released: list[str] = []

        async def failing_release(address: str, member: str) -> None:
            released.append(address)
            raise next(failures)

        endpoint = one.endpoint
        endpoint.store.players.release_connection = failing_release  # type: ignore[method-assign]
        outage = endpoint.store.outage
        before = outage.failures_total
        for address in ("192.0.2.1", "192.0.2.2"):
            async with AsyncExitStack() as stack:
                assert (await _hello(one.port, address, stack))["t"] == "ok"
        await _eventually(lambda: _true(len(released) == 2 and not endpoint._releases))
        bugs = endpoint_log.events("connection_release_failed")
        assert [bug["error"] for bug in bugs] == ["ValueError('a bug')"]
        assert outage.failures_total == before + 1
        assert [down["during"] for down in outage_log.events("redis_unavailable")] == [
            "connection release"
        ]


async def _true(value: bool) -> bool:
    return value
