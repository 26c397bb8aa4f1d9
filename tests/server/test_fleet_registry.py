"""The fleet registry: every server process on a Redis keeps an entry with a time to live
(``store/fleet.py``, renewed by ``heartbeat.py``); the registry lists the live ones, a process
killed with ``kill -9`` drops out when its entry's time runs out, a clean shutdown says it is
draining and then leaves at once, and ``/healthz`` is 503 while the process is not listed.
Real Redis, real server processes."""

from __future__ import annotations

import asyncio
import time
import uuid

import redis.asyncio as aioredis

from playhall import __version__, app
from playhall.heartbeat import Heartbeat
from playhall.store.fleet import FleetStore, Member
from playhall.store.keys import Keys
from playhall.store.outage import Outage
from playhall.store.pipe import RedisPipe

from ..cancels import cancelled_while_stopping
from .conftest import free_port, server_config
from .helpers import healthz, silent_websocket, wait_for_redis
from .process import ServerProcess


def fleet_of(redis_url: str, prefix: str) -> tuple[FleetStore, RedisPipe]:
    pipe = RedisPipe(redis_url)
    return FleetStore(pipe, Keys(prefix)), pipe


async def names(fleet: FleetStore) -> list[str]:
    return [m.instance for m in await fleet.members()]


async def test_the_registry_lists_who_beats_and_forgets_who_stops(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    fleet, pipe = fleet_of(redis_url, prefix)
    client = aioredis.Redis.from_url(redis_url)
    try:
        now = time.time()
        await fleet.beat(Member("a", now, "1.0", False), 60_000)
        await fleet.beat(Member("b", now, "1.0", False), 300)
        await fleet.beat(Member("a", now, "1.0", True), 60_000)  # renewed: one entry, updated
        assert await fleet.members() == [Member("a", now, "1.0", True),
                                         Member("b", now, "1.0", False)]
        assert 0 < await client.pttl(f"{prefix}{{fleet}}:b") <= 300
        # The index lives as long as the longest-lived entry: nothing outlives the fleet.
        assert 59_000 < await client.pttl(f"{prefix}{{fleet}}") <= 60_000
        # b's time runs out: the read drops it, from the index too.
        await wait_for_redis(lambda: _listed_is(fleet, ["a"]), timeout=10)
        assert await client.smembers(f"{prefix}{{fleet}}") == {b"a"}
        # An entry this version cannot read is skipped, not fatal.
        await client.set(f"{prefix}{{fleet}}:c", b"{not json")
        await client.sadd(f"{prefix}{{fleet}}", "c")
        assert await names(fleet) == ["a"]
        await fleet.leave("a")
        assert await names(fleet) == []
        assert await client.exists(f"{prefix}{{fleet}}:a") == 0
    finally:
        pipe.close()
        await client.aclose()


async def _listed_is(fleet: FleetStore, wanted: list[str]) -> bool:
    return await names(fleet) == wanted


async def _draining(fleet: FleetStore) -> bool:
    return [(m.instance, m.draining) for m in await fleet.members()] == [("proc-d", True)]


async def test_two_processes_are_listed_and_a_killed_one_drops_out(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    lease_ms = 1500
    extra = ["--lease-ms", str(lease_ms)]
    one = ServerProcess(free_port(), redis_url, prefix, "proc-1", extra)
    two = ServerProcess(free_port(), redis_url, prefix, "proc-2", extra)
    fleet, pipe = fleet_of(redis_url, prefix)
    client = aioredis.Redis.from_url(redis_url)
    try:
        before = time.time()
        await asyncio.gather(one.start(), two.start())
        await wait_for_redis(lambda: _listed_is(fleet, ["proc-1", "proc-2"]), timeout=10)
        for member in await fleet.members():
            assert member.version == __version__ and not member.draining
            assert before - 1 <= member.started <= time.time()
        assert await healthz(one.port) == (200, "ok")
        # kill -9: no goodbye, so the entry stays until its time to live runs out.
        two.kill()
        killed = time.monotonic()
        assert "proc-2" in await names(fleet)
        await wait_for_redis(lambda: _listed_is(fleet, ["proc-1"]), timeout=10)
        gone_after = time.monotonic() - killed
        assert gone_after <= lease_ms / 1000 + 1.0, gone_after
        assert await client.exists(f"{prefix}{{fleet}}:proc-2") == 0
        # The survivor keeps renewing: still listed well past one time to live.
        await asyncio.sleep(lease_ms / 1000)  # waiting out a lease on purpose, no sync stand-in
        assert await names(fleet) == ["proc-1"]
        assert await healthz(one.port) == (200, "ok")
    finally:
        one.terminate()
        if two.process is not None and two.process.poll() is None:
            two.terminate()
        pipe.close()
        await client.aclose()


async def test_draining_flips_readiness_and_a_clean_exit_leaves_at_once(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    # A long time to live: the entry can only go so soon by being deleted.
    server = ServerProcess(free_port(), redis_url, prefix, "proc-d", ["--lease-ms", "60000"])
    fleet, pipe = fleet_of(redis_url, prefix)
    held = None
    try:
        await server.start()
        await wait_for_redis(lambda: _listed_is(fleet, ["proc-d"]), timeout=10)
        assert await healthz(server.port) == (200, "ok")
        held = await silent_websocket(server.port)
        assert server.process is not None
        server.process.terminate()  # SIGTERM: the drain
        async with asyncio.timeout(10):
            while await healthz(server.port) != (503, "draining"):
                await asyncio.sleep(0.02)  # polling the drain's start
        # The registry says so too (the heartbeat that says it follows the 503 at once).
        await wait_for_redis(lambda: _draining(fleet), timeout=5)
        assert await asyncio.to_thread(server.process.wait, 30) == 0
        assert await names(fleet) == []  # gone at once, not after 60 s
    finally:
        if held is not None:
            held.close()
        if server.process is not None and server.process.poll() is None:
            server.terminate()
        pipe.close()


async def test_healthz_is_503_while_the_process_is_not_listed(redis_url: str) -> None:
    running = await app.start(server_config(redis_url))
    try:
        assert running.heartbeat.listed()
        assert await healthz(running.port) == (200, "ok")
        fleet = running.endpoint.store.fleet
        assert running.config.instance in await names(fleet)
        # Its heartbeats stop (as when they no longer reach Redis): not listed, not ready.
        await running.heartbeat.leave()
        assert await healthz(running.port) == (503, "not registered")
        assert running.endpoint.unready() == "not registered"
        assert running.config.instance not in await names(fleet)
        assert await running.heartbeat.beat()  # and back once a heartbeat is stored
        assert await healthz(running.port) == (200, "ok")
    finally:
        await running.drain()


async def test_a_leave_cancelled_while_it_waits_for_the_renewals_ends_cancelled(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    fleet, pipe = fleet_of(redis_url, prefix)
    heartbeat = Heartbeat(fleet, Outage(), "leaver", 60_000)
    try:
        await heartbeat.start()
        assert await names(fleet) == ["leaver"]
        stopper = await cancelled_while_stopping(heartbeat.leave)
        assert stopper.cancelled()
    finally:
        await heartbeat.leave()  # now uncancelled: the entry goes
        assert await names(fleet) == []
        pipe.close()
