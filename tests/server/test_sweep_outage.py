"""The expiry sweep outlives Redis failing under it: a stall (``CLIENT PAUSE ... WRITE``, what a
Redis failover does) or a connection reset while it loads a room that is due is counted in the
outage log, and the sweep goes on: the room is closed once Redis answers again. Over a real
Redis (paused for real, or behind a fault-injecting proxy), with the server as a process of its
own, whose log the test reads."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from playhall_client import Client

from .conftest import free_port
from .faults import ResetProxy
from .helpers import wait_for_redis
from .process import ServerProcess

#: Waiting rooms close one second after they were left alone, evicted at once; Redis may take
#: 0.3 s to answer (a stalled one fails commands that soon).
FLAGS = [
    "--waiting-ttl", "1", "--abandoned-ttl", "1", "--idle-evict", "0.1",
    "--redis-timeout", "0.3",
]  # fmt: skip


@pytest.mark.parametrize("fault", ["pause", "reset"])
async def test_the_expiry_sweep_goes_on_after_redis_failed_it(
    redis_url: str, proxy: ResetProxy, tmp_path: Path, fault: str
) -> None:
    prefix = f"w{uuid.uuid4().hex[:8]}:"
    server = ServerProcess(
        free_port(), proxy.url, prefix, "sweep", FLAGS, log_path=tmp_path / "server.log"
    )
    redis = aioredis.Redis.from_url(redis_url)
    await server.start()
    try:
        alice = await Client.connect(server.url, name="alice")
        room = (await alice.create("mantis", 2)).room
        if fault == "reset":
            # The next room script naming the room's fence is the sweep taking its lease to
            # load it (a commit names it too, but the room has none left to make).
            proxy.arm(b"EVALSHA", f"{prefix}fence:{{{room}}}".encode())
        alice.reconnect = False
        await alice.close()
        if fault == "pause":
            async def evicted() -> bool:
                return not await redis.exists(f"{prefix}lease:{{{room}}}")

            await wait_for_redis(evicted, 10)
            due = await redis.zscore(f"{prefix}expiry", room)
            assert due is not None
            # Writes wait from before the room is due until a second after: the sweep's
            # loading of the room fails (Redis does not answer in time).
            pause_ms = int((due - time.time() + 1.0) * 1000)
            await redis.execute_command("CLIENT", "PAUSE", pause_ms, "WRITE")
        else:
            async with asyncio.timeout(10):
                await proxy.cut.wait()

        async def closed() -> bool:
            return not await redis.exists(f"{prefix}room:{{{room}}}")

        await wait_for_redis(closed, 15)
    finally:
        await redis.execute_command("CLIENT", "UNPAUSE")
        await redis.aclose()
        await asyncio.to_thread(server.terminate)  # (the proxy runs on this loop)
    lines = server.log_lines()
    assert {"expiry sweep"} <= {line.get("during") for line in lines}
    assert not [line for line in lines if "exception" in line], "a traceback was logged"
