"""The fleet behind the shipped HAProxy configuration (a real HAProxy, ``balancer.py``, in front
of real server processes on one real Redis): websockets are dealt round robin with no
stickiness, a process whose /healthz says it is not ready leaves the rotation and comes back
when it is, and a handshake that meets a draining process is retried on another.

(Which process a connection landed on is read from each process's own ``playhall_connections``
gauge: /metrics on its game port, behind a token.)"""

from __future__ import annotations

import asyncio
import itertools
from contextlib import AsyncExitStack

from websockets.asyncio.client import ClientConnection, connect

from .balancer import Fleet, StartFleet
from .faults import ResetProxy
from .helpers import healthz, silent_websocket
from .metrics_scrape import http_get, scrape

TOKEN = "fleet-test-token"
EXTRA = ["--metrics-token", TOKEN]


async def connections(fleet: Fleet) -> list[int]:
    """Each process's open websockets, in the fleet's order."""
    scrapes = await asyncio.gather(*(scrape(p.port, TOKEN) for p in fleet.processes))
    return [int(s.get("playhall_connections")) for s in scrapes]


async def open_one(fleet: Fleet, stack: AsyncExitStack) -> int:
    """Open a websocket through the balancer; the index of the process it landed on."""
    before = await connections(fleet)
    ws: ClientConnection = await stack.enter_async_context(connect(fleet.url, open_timeout=10))
    assert ws.response is not None and ws.response.status_code == 101
    async with asyncio.timeout(10):  # until one process counts it
        while True:
            now = await connections(fleet)
            grown = [i for i, (a, b) in enumerate(zip(before, now, strict=True)) if b > a]
            if grown:
                (index,) = grown
                return index
            await asyncio.sleep(0.02)  # polling the processes' counts


async def test_consecutive_websockets_go_round_the_processes(balanced: StartFleet) -> None:
    fleet = await balanced(3, EXTRA)
    async with AsyncExitStack() as stack:
        landed = [await open_one(fleet, stack) for _ in range(6)]
        # No stickiness: each connection on the next process, every process in turn.
        assert all(a != b for a, b in itertools.pairwise(landed)), landed
        assert sorted(landed) == [0, 0, 1, 1, 2, 2], landed
        assert await connections(fleet) == [2, 2, 2]
    status, _, body = await http_get(fleet.balancer.port, "/healthz")
    assert (status, body) == (200, "ok\n")


async def test_an_unready_process_leaves_the_rotation_and_comes_back(
    balanced: StartFleet, proxy: ResetProxy
) -> None:
    # Process 1 reaches Redis through the fault proxy; a short lease makes its silence count
    # (/healthz 503) a second after Redis stops answering.
    fleet = await balanced(2, [*EXTRA, "--lease-ms", "1000"], redis_urls=[None, proxy.url])
    first, second = (p.port for p in fleet.processes)
    proxy.go_down()
    async with asyncio.timeout(15):
        while (await healthz(second))[0] != 503:
            await asyncio.sleep(0.05)  # polling the process's readiness
    await fleet.balancer.wait_until(lambda s: s == {first: "UP", second: "DOWN"})
    async with AsyncExitStack() as stack:
        landed = [await open_one(fleet, stack) for _ in range(4)]
        assert landed == [0, 0, 0, 0]
    proxy.come_up()
    await fleet.balancer.wait_until(lambda s: s == {first: "UP", second: "UP"})
    async with AsyncExitStack() as stack:
        landed = [await open_one(fleet, stack) for _ in range(2)]
        assert sorted(landed) == [0, 1], landed


async def test_a_handshake_that_meets_a_draining_process_is_retried_on_another(
    balanced: StartFleet,
) -> None:
    fleet = await balanced(2, EXTRA)
    draining = fleet.processes[1]
    held = await silent_websocket(draining.port)  # keeps its drain going for 5 s
    try:
        assert draining.process is not None
        draining.process.terminate()  # SIGTERM: the drain
        async with asyncio.timeout(10):
            while await healthz(draining.port) != (503, "draining"):
                await asyncio.sleep(0.02)  # polling the drain's start
        # The balancer's checks have not noticed yet (two failures, 2 s apart): every other
        # handshake goes to the draining process, is refused 503 there, and is redispatched.
        async with AsyncExitStack() as stack:
            sockets = [
                await stack.enter_async_context(connect(fleet.url, open_timeout=10))
                for _ in range(4)
            ]
            assert all(ws.response is not None and ws.response.status_code == 101
                       for ws in sockets)
            async with asyncio.timeout(10):  # all four on the process that is not draining
                while (await scrape(fleet.processes[0].port, TOKEN)).get(
                    "playhall_connections"
                ) != 4:
                    await asyncio.sleep(0.02)
    finally:
        held.close()
