"""What forwarding costs: R rooms x 2 players on a fleet of two processes over one Redis, every
player on the room's owner ("owner") against players placed over both processes by a load
balancer ("spread"), persistence on.

    python bench/fleet.py --rooms 50 500 --modes owner placed spread --procs 2 --split --repeat 3
    python bench/fleet.py --rooms 50 --rate 20 --split --modes owner pair --repeat 3

Starts Redis (append-only, everysec; with ``--cluster`` a Redis Cluster of three primaries with a
replica each, bench/redis_cluster.py), two real server processes on one key prefix and, for the
spread runs, HAProxy (Debian's binary, ``balance roundrobin``, no stickiness) in front of both.
The players are bench/loadgen.py's lean clients, as in bench/moves.py: each pair makes a room
(its creator's process holds it), plays, rematches. Modes:

- ``owner``: every client connects to process A (process B runs, idle): one process's cost.
- ``spread``: every client connects to the balancer. The clients connect all at once, so a
  pair's two players land on the two processes or on one about as often: some half of the
  rooms have a player on the process that does not hold them, whose moves are forwarded, and
  whose frames come back through Redis. ``forwarded_per_move`` says how many requests were
  forwarded per move made (the servers' own count: moves, and the joins, rematches and syncs
  of the games), about a quarter.
- ``placed`` (``--procs`` even): the load processes take turns between A and B, each pair
  connected to one process: the fleet's two processes sharing the load, with nothing
  forwarded. What a fleet costs beside forwarding (each process with half the load does less
  per loop pass: fewer moves share a pass's system calls and writes).
- ``direct``: each client connects to A or B, drawn at random, no balancer: spread's
  placement without HAProxy's work on the machine (on two cores it shares them with the
  servers).
- ``pair``: each room's creator connected to A (which holds the room) and the other player to
  B, no balancer: every move of the one is local and every move of the other forwarded, under
  the same load, their latencies reported apart (``p50_local_ms``, ``p50_forwarded_ms``): what
  forwarding adds to a move, beside the floor.

Reported per mode and R: moves/s, p50/p99 (a move sent to its update received), server CPU
per move (both processes, microseconds), Redis CPU per move, HAProxy's CPU, the fleet's moves
per server-CPU-second and its ratio to the owner run's (``efficiency``).

``--split`` puts process A on the first core and B on the second (the load, HAProxy and Redis
on either): each process has a core, as in a fleet. Without it both servers share one core
(``--server-core``) and the load, HAProxy and Redis the other; two busy processes taking turns
on one core cost each other more per move than one process does alone (``placed`` shows it),
which a fleet, a process to a core, does not pay.

``--rate N`` paces the play instead (N moves a second in each room, the load offered whatever
the answers: a move is sent at its time, or when its turn comes if that is later), well below
what the fleet can serve, so p50 shows a move's path and its hops, not a queue (closed-loop
p50 is mostly waiting: R over the throughput, by Little's law).

``--floor`` first measures the hops a forwarded move adds, bare: a PUBLISH to a channel an
echo listens on, which publishes it back on another, timed from the publish to the echo's
answer received. Three ways, idle: redis-py asyncio on both ends with the echo on the asker's
own event loop, then in a process of its own (as a fleet's owner is another process than the
edge; with ``--split`` the echo on A's core and the asker on B's), then the fleet's own parts
on both ends (the command pipe publishes, written at once, and the bus's subscriber reads in
its read callback, on uvloop, as a server does) across two processes. The last is the floor:
redis-py's read path costs more than the servers' (see ``store/subscriber.py``), so its round
trip overstates what a hop costs a fleet.

``--probe N`` also times N fleet round trips a second through each run's Redis during its
measured window, the echo on A's core and the asker on B's, each a process of its own: the
floor under the load the run's moves see (the echo and the asker are mostly idle processes,
which the kernel wakes ahead of a busy one: if anything, the probe is favoured).

``--ping N`` has the servers themselves time N round trips a second to each other over Redis
(``fleet_ping_every``, ``playhall.fleet.ping``), their median over each run's window read from
their ``playhall_fleet_round_trip_seconds`` (interpolated within its 50 µs bucket): the floor in
the processes a forwarded move's hops go through, busy with the run's moves, as those hops are.

``--quota F`` caps each server process at F of a core (a CPU cgroup of its own: the cgroup v2
``cpu.max`` where the cpu controller is enabled, else cgroup v1's ``cpu`` hierarchy; a 5 ms
period, so F is at least 0.2; needs write access to the cgroup tree, as root in a container
has). The closed-loop runs otherwise leave each server some of its core idle (the load, Redis
and HAProxy share the machine's two cores), and a server that is not saturated does more work
per move than one that is: fewer moves share a loop pass's system calls and writes, so a mode
that serves fewer moves a second looks dearer per move for that alone. Capped, every server is
saturated (``throttled``: the share of its periods in the window it used up its quota in), and
moves per server-CPU-second is what F of a core serves: the capacity the fleet's efficiency is
about.

Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

from moves import (  # noqa: E402  (bench/moves.py: the script's folder)
    cpu_seconds,
    free_port,
    load_process,
    other_cores,
    server_command,
    server_env,
    wait_listening,
)
from redis_cluster import Cluster  # noqa: E402  (bench/redis_cluster.py)

if TYPE_CHECKING:
    from playhall.store.embedded import EmbeddedRedis

HAPROXY_CFG = """\
global
    maxconn 8000
defaults
    mode http
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
frontend hall
    bind 127.0.0.1:{port}
    default_backend fleet
backend fleet
    balance roundrobin
{servers}
"""


class CpuQuota:
    """A CPU cgroup of its own capping a process at ``cores`` of a core (see ``--quota``)."""

    PERIOD_US = 5000

    def __init__(self, name: str, cores: float) -> None:
        quota = round(cores * self.PERIOD_US)
        if quota < 1000:  # the kernel's least quota
            raise ValueError(f"--quota {cores} is under {1000 / self.PERIOD_US} of a core")
        v2 = Path("/sys/fs/cgroup")
        controllers = v2 / "cgroup.subtree_control"
        if controllers.exists() and "cpu" in controllers.read_text().split():
            self.path = v2 / name
            self.path.mkdir()
            (self.path / "cpu.max").write_text(f"{quota} {self.PERIOD_US}")
        else:
            self.path = v2 / "cpu" / name
            self.path.mkdir()
            (self.path / "cpu.cfs_period_us").write_text(str(self.PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota))

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def periods(self) -> tuple[int, int]:
        """Periods so far, and those in which the process used up its quota."""
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["nr_periods"]), int(stat["nr_throttled"])

    def remove(self) -> None:
        """(Once its process has exited.)"""
        self.path.rmdir()


def start_server(port: int, redis_url: str, prefix: str, name: str, core: str,
                 log: Path | None = None, metrics_port: int = 0, ping: float = 0.0) -> Any:
    """A server as bench/moves.py runs it (caps lifted), one of the fleet: its key prefix
    shared, its instance name its own; its log (warnings and worse) in ``log`` if given; its
    metrics on ``metrics_port`` if given (else on a free port nobody reads); pinging the other
    ``ping`` times a second (0: never)."""
    env = {**server_env(), "PLAYHALL_KEY_PREFIX": prefix, "PLAYHALL_INSTANCE": name,
           "PLAYHALL_FLEET_PING_EVERY": str(1 / ping if ping else 0)}
    cmd = server_command(port, redis_url)
    if metrics_port:
        cmd[cmd.index("--metrics-listen") + 1] = f"127.0.0.1:{metrics_port}"
    if shutil.which("taskset") and core:
        cmd = ["taskset", "-c", core, *cmd]
    if log is None:
        return subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    with log.open("ab") as out:
        return subprocess.Popen(cmd, env=env, stderr=out)


class Scraped(NamedTuple):
    """What a run reads of a server's metrics."""

    #: ``playhall_fleet_forwarded_total``.
    forwarded: float
    #: ``playhall_fleet_round_trip_seconds``' cumulative buckets, by upper bound.
    round_trips: dict[float, float]


def counts(metrics_port: int) -> Scraped:
    """The server's forwarded requests and round-trip buckets, read from its metrics
    listener with prometheus_client's own parser."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    forwarded, buckets = None, {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "playhall_fleet_forwarded_total":
                forwarded = sample.value
            elif sample.name == "playhall_fleet_round_trip_seconds_bucket":
                buckets[float(sample.labels["le"])] = sample.value
    if forwarded is None:
        raise RuntimeError("no playhall_fleet_forwarded_total in the server's metrics")
    return Scraped(forwarded, buckets)


def histogram_quantile(q: float, before: list[Scraped], after: list[Scraped]) -> float | None:
    """The ``q`` quantile of the round trips the servers timed between two scrapes (each a
    list with one scrape per server), interpolated within its bucket as Prometheus'
    ``histogram_quantile`` does; None if none were timed."""
    bounds = sorted(after[0].round_trips)
    cumulative = [sum(a.round_trips.get(b, 0.0) - s.round_trips.get(b, 0.0)
                      for s, a in zip(before, after, strict=True))
                  for b in bounds]
    if not cumulative or not cumulative[-1]:
        return None
    rank = q * cumulative[-1]
    lower, below = 0.0, 0.0
    for upper, count in zip(bounds, cumulative, strict=True):
        if count >= rank:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (rank - below) / (count - below)
        lower, below = upper, count
    return lower


def redis_processes(store: EmbeddedRedis | Cluster) -> list[int]:
    """The pids whose CPU is Redis's: the one server, or every node of the Cluster."""
    if isinstance(store, Cluster):
        return [node.pid for node in store.nodes]
    return [store.process.pid] if store.process is not None else []


def run(mode: str, rooms: int, seconds: float, warmup: float, procs: int,
        server_core: str, rate: float = 0.0, split: bool = False,
        probe: float = 0.0, quota: float = 0.0, ping: float = 0.0,
        cluster: bool = False) -> dict[str, Any]:
    """One run; ``rate``: moves/s per room (0: closed loop); ``split``: process A on the
    first core and B on the second (else both on ``server_core``); ``probe``: fleet round
    trips a second timed through the run's Redis over the measured window, the echo on A's
    core and the asker on B's (the floor under the same load); ``quota``: each server capped at
    that much of a core (0: not capped); ``ping``: the servers' own round trips to each other
    a second (``fleet_ping_every``), their median over the window reported (the floor in the
    servers themselves); ``cluster``: on a Redis Cluster started for the run
    (bench/redis_cluster.py: three primaries, a replica each) in place of one Redis, its
    nodes' CPU counted as Redis's."""
    from playhall.store.embedded import EmbeddedRedis

    cores = sorted(os.sched_getaffinity(0))
    server_cores = [str(cores[0]), str(cores[1])] if split else [server_core, server_core]
    load_cores = set(cores) if split else other_cores(server_core)
    os.sched_setaffinity(0, load_cores)
    data = Path(tempfile.mkdtemp(prefix="playhall-fleet-bench-"))
    store: EmbeddedRedis | Cluster
    if cluster:
        store = Cluster(data / "cluster")
        store.start()
        url = store.url
    else:
        store = EmbeddedRedis(data / "redis", port=free_port(), fsync="everysec")
        url = store.start()
    prefix = f"b{uuid.uuid4().hex[:6]}:"
    ports = [free_port(), free_port()]
    metrics_ports = [free_port(), free_port()]
    servers = [start_server(p, url, prefix, f"{prefix}{n}", core, metrics_port=m,
                            ping=ping)
               for p, n, core, m in zip(ports, "AB", server_cores, metrics_ports, strict=True)]
    balancer = None
    quotas: list[CpuQuota] = []
    try:
        if quota:
            for n, server in zip("AB", servers, strict=True):
                quotas.append(CpuQuota(f"playhall-bench-{prefix[:-1]}{n}", quota))
                quotas[-1].add(server.pid)
        for port in ports:
            wait_listening(port, 400)
        target, port_b = ports[0], 0
        if mode == "pair":
            port_b = ports[1]
        if mode == "spread":
            target = free_port()
            lines = "\n".join(f"    server s{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
            cfg = data / "haproxy.cfg"
            cfg.write_text(HAPROXY_CFG.format(port=target, servers=lines))
            balancer = subprocess.Popen(["haproxy", "-f", str(cfg)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_listening(target, 400)
        queue: Any = mp.Queue()
        start_at = time.time() + 1.0
        share = [rooms // procs + (1 if i < rooms % procs else 0) for i in range(procs)]
        pace = 1.0 / rate if rate else 0.0
        # placed: the load processes take turns between A and B, each pair on one process;
        # direct: each client on A or B drawn at random.
        targets = [ports[i % 2] if mode == "placed" else target for i in range(procs)]
        drawn = tuple(ports) if mode == "direct" else ()
        workers = [mp.Process(target=load_process,
                              args=("lean", to, n, seconds, warmup, start_at, queue,
                                    load_cores, pace, port_b, drawn))
                   for n, to in zip(share, targets, strict=True) if n]
        for worker in workers:
            worker.start()
        if probe:
            workers += start_probe(url, server_cores, start_at + warmup,
                                   start_at + warmup + seconds, probe, queue)
        time.sleep(max(0.0, start_at - time.time()) + warmup)
        pids = [s.pid for s in servers]
        redis_pids = redis_processes(store)
        scraped0 = [counts(m) for m in metrics_ports]
        cpu0 = [cpu_seconds(p) for p in pids]
        redis0 = sum(cpu_seconds(p) for p in redis_pids)
        lb0 = cpu_seconds(balancer.pid) if balancer else 0.0
        periods0 = [q.periods() for q in quotas]
        t0 = time.perf_counter()
        time.sleep(seconds)
        t1 = time.perf_counter()
        cpu1 = [cpu_seconds(p) for p in pids]
        redis1 = sum(cpu_seconds(p) for p in redis_pids)
        lb1 = cpu_seconds(balancer.pid) if balancer else 0.0
        periods1 = [q.periods() for q in quotas]
        scraped1 = [counts(m) for m in metrics_ports]
        results = [queue.get(timeout=120) for worker in workers if worker_puts(worker)]
        for worker in workers:
            if worker_puts(worker):
                worker.join(30)
            else:  # the echo
                worker.terminate()
                worker.join(10)
    finally:
        for proc in (*servers, *([balancer] if balancer else [])):
            proc.terminate()
            proc.wait(30)
        for cap in quotas:
            cap.remove()
        store.stop()
        shutil.rmtree(data, ignore_errors=True)
    wall = t1 - t0
    hops = sorted(x for r in results if isinstance(r, list) for x in r)
    results = [r for r in results if not isinstance(r, list)]
    lat = sorted(x for r in results for x in [*r["lat"], *r.get("lat_b", [])])
    apart = {}
    if mode == "pair":  # the creator's moves (local) and the other player's (forwarded)
        for name, key in (("local", "lat"), ("forwarded", "lat_b")):
            some = sorted(x for r in results for x in r.get(key, []))
            apart[f"p50_{name}_ms"] = round(statistics.median(some) * 1e3, 2) if some else None
            apart[f"p99_{name}_ms"] = (round(some[int(len(some) * 0.99) - 1] * 1e3, 2)
                                       if some else None)
    moves = sum(r["moves"] for r in results)
    forwarded = sum(s.forwarded for s in scraped1) - sum(s.forwarded for s in scraped0)
    inside = {}
    if ping:  # the servers' own round trips to each other over the window
        inf = float("inf")
        timed = (sum(s.round_trips[inf] for s in scraped1)
                 - sum(s.round_trips[inf] for s in scraped0))
        p50 = histogram_quantile(0.5, scraped0, scraped1)
        p99 = histogram_quantile(0.99, scraped0, scraped1)
        inside = {"inside_count": int(timed),
                  "inside_p50_ms": round(p50 * 1e3, 3) if p50 is not None else None,
                  "inside_p99_ms": round(p99 * 1e3, 3) if p99 is not None else None}
    server_cpu = sum(b - a for a, b in zip(cpu0, cpu1, strict=True))
    return {
        "mode": mode + ("-paced" if rate else ""),
        "rooms": rooms,
        "rate_per_room": rate or None,
        "server_cores": server_cores,
        "moves_per_s": round(moves / seconds),
        "p50_ms": round(statistics.median(lat) * 1e3, 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1e3, 2) if lat else None,
        **apart,
        **({f"floor_{k}": v for k, v in quantiles(hops).items()} if hops else {}),
        **inside,
        "server_cpu": [round((b - a) / wall, 2) for a, b in zip(cpu0, cpu1, strict=True)],
        "server_us_per_move": round(server_cpu / moves * 1e6, 1) if moves else None,
        "moves_per_server_cpu_s": round(moves / server_cpu) if server_cpu else None,
        "redis_us_per_move": round((redis1 - redis0) / moves * 1e6, 1) if moves else None,
        # Requests forwarded per move made (moves, and the rematches, joins and syncs of the
        # games): the servers' own count over the measured window.
        "forwarded_per_move": round(forwarded / moves, 3) if moves else None,
        "haproxy_cpu": round((lb1 - lb0) / wall, 2),
        # Capped: the share of each server's periods in the window in which it used up its
        # quota (near 1: saturated; the idle B of ``owner`` near 0).
        "quota": quota or None,
        "throttled": [round((b[1] - a[1]) / max(1, b[0] - a[0]), 2)
                      for a, b in zip(periods0, periods1, strict=True)],
        "refused": sum(r["refused"] for r in results),
        "resyncs": sum(r["resyncs"] for r in results),
        "seconds": seconds,
    }


THERE, BACK = b"bench:there", b"bench:back"


async def fleet_bus(url: str, channel: bytes, handler: Any) -> Any:
    """The fleet's own Redis parts, as a server wires them: the command pipe
    (``store/pipe.py``, which publishes) and a bus (``store/bus.py``, whose subscribed connection
    ``store/subscriber.py`` reads) subscribed to ``channel``, each message handed to
    ``handler`` in the read callback."""
    from playhall.store.bus import Bus
    from playhall.store.outage import Outage
    from playhall.store.pipe import RedisPipe

    pipe = RedisPipe(url, timeout=5.0)
    bus = Bus(url, pipe, Outage(), name="bench-floor", timeout=5.0)
    await bus.subscribe(channel, handler)
    await bus.start()
    return bus, pipe


def _ignore(listeners: Any, failure: BaseException | None) -> None:
    if failure is not None:
        raise failure


async def fleet_echo_until_cancelled(url: str, subscribed: Any = None, there: bytes = THERE,
                                     back: bytes = BACK) -> None:
    """The echo on the fleet's own parts: each message of ``there`` published back on
    ``back`` from the read callback that got it, written at once, as an owner's batch is."""
    bus: Any = None

    def echo(data: bytes) -> None:
        bus.publish_then(back, data, _ignore, at_once=True)

    bus, pipe = await fleet_bus(url, there, echo)
    if subscribed is not None:
        subscribed.set()
    try:
        await asyncio.Event().wait()
    finally:
        await bus.stop()
        pipe.close()


async def fleet_round_trips(url: str, count: int, pace: float = 0.0, until: float = 0.0,
                            there: bytes = THERE, back: bytes = BACK) -> list[float]:
    """Round trips on the fleet's own parts, timed from the publish (written at once, as an
    edge's forward is) to the echo's message in the read callback. ``pace``: one started
    every ``pace`` seconds (on a schedule, as the paced moves are) until ``until``
    (``time.time()``), else ``count`` back to back."""
    loop = asyncio.get_running_loop()
    arrived: list[asyncio.Future[float]] = []

    def answer(data: bytes) -> None:
        if arrived and not arrived[-1].done():
            arrived[-1].set_result(time.perf_counter())

    bus, pipe = await fleet_bus(url, back, answer)
    times = []
    try:
        at = loop.time()
        for i in range(count):
            if pace:
                if time.time() >= until:
                    break
                at += pace
                await asyncio.sleep(max(0.0, at - loop.time()))
            arrived.append(loop.create_future())
            started = time.perf_counter()
            bus.publish_then(there, b"%d" % i, _ignore, at_once=True)
            times.append(await asyncio.wait_for(arrived[-1], 5) - started)
    finally:
        await bus.stop()
        pipe.close()
    return times


def run_on_uvloop(work: Any) -> Any:
    """``work`` (a coroutine) on the loop the servers run."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(work)


def fleet_echo_process(url: str, subscribed: Any, cores: set[int], there: bytes,
                       back: bytes) -> None:
    os.sched_setaffinity(0, cores)
    run_on_uvloop(fleet_echo_until_cancelled(url, subscribed, there, back))


def probe_process(url: str, cores: set[int], start_at: float, until: float, pace: float,
                  there: bytes, back: bytes, out: Any) -> None:
    """The floor under the load: fleet round trips every ``pace`` seconds from
    ``start_at`` to ``until`` (``time.time()``), their times put on ``out``."""
    os.sched_setaffinity(0, cores)

    async def main() -> list[float]:
        while time.time() < start_at:
            await asyncio.sleep(0.01)
        return await fleet_round_trips(url, 10**9, pace, until, there, back)

    out.put(run_on_uvloop(main()))


async def echo_until_cancelled(url: str, subscribed: Any = None) -> None:
    """Publish every message of ``THERE`` back on ``BACK`` (the owner's part of the floor);
    ``subscribed`` (an event) is set once the subscription is made."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    echo = client.pubsub()
    await echo.subscribe(THERE)
    if subscribed is not None:
        subscribed.set()
    try:
        async for message in echo.listen():
            if message["type"] == "message":
                await client.publish(BACK, message["data"])
    finally:
        await echo.aclose()
        await client.aclose()


def echo_process(url: str, subscribed: Any, cores: set[int]) -> None:
    """The echo in a process of its own, as an owner is another process than the edge."""
    os.sched_setaffinity(0, cores)
    asyncio.run(echo_until_cancelled(url, subscribed))


async def publish_round_trips(url: str, count: int) -> list[float]:
    """``count`` bare pub/sub round trips through Redis to an echo (see the module
    docstring), timed from the publish to the echo's answer received."""
    import redis.asyncio as aioredis

    main_client = aioredis.Redis.from_url(url)
    answers = main_client.pubsub()
    await answers.subscribe(BACK)
    times = []
    try:
        for i in range(count):
            started = time.perf_counter()
            await main_client.publish(THERE, b"%d" % i)
            while True:
                message = await answers.get_message(timeout=5)
                if message is not None and message["type"] == "message":
                    break
            times.append(time.perf_counter() - started)
    finally:
        await answers.aclose()
        await main_client.aclose()
    return times


async def round_trips_in_process(url: str, count: int) -> list[float]:
    """The round trips with the echo on the asker's own event loop."""
    subscribed = asyncio.Event()
    echo = asyncio.create_task(echo_until_cancelled(url, subscribed))
    try:
        await subscribed.wait()
        return await publish_round_trips(url, count)
    finally:
        echo.cancel()
        await asyncio.gather(echo, return_exceptions=True)


def floor(count: int, split: bool, server_core: str) -> list[dict[str, Any]]:
    """The floor, idle: redis-py's round trips with the echo in the asker's process and in a
    process of its own, then the fleet's own parts' (``fleet_round_trips``) across two
    processes, as the edge and the owner are, each woken by Redis. With ``split`` the echo
    runs on the first core and the asker on the second, as the owner (A) and the edge (B) do;
    else both on the servers' core."""
    from playhall.store.embedded import EmbeddedRedis

    mine = os.sched_getaffinity(0)
    cores = sorted(mine)
    if split:
        echo_cores, asker_cores = {cores[0]}, {cores[1]}
    else:
        echo_cores = asker_cores = {int(c) for c in server_core.split(",") if c}
    data = Path(tempfile.mkdtemp(prefix="playhall-floor-"))
    redis = EmbeddedRedis(data / "redis", port=free_port())
    redis.start()
    found = []

    def across(echo_target: Any, echo_args: tuple[Any, ...], ask: Any) -> list[float]:
        subscribed = mp.Event()
        echo = mp.Process(target=echo_target, args=(redis.url, subscribed, echo_cores,
                                                    *echo_args))
        echo.start()
        try:
            if not subscribed.wait(30):
                raise RuntimeError("the echo process did not subscribe")
            return sorted(ask())
        finally:
            echo.terminate()
            echo.join(10)

    try:
        os.sched_setaffinity(0, asker_cores)
        found.append(("in one process", sorted(asyncio.run(round_trips_in_process(redis.url,
                                                                                  count)))))
        found.append(("across two processes", across(
            echo_process, (), lambda: asyncio.run(publish_round_trips(redis.url, count)))))
        found.append(("across two processes, the fleet's own parts", across(
            fleet_echo_process, (THERE, BACK),
            lambda: run_on_uvloop(fleet_round_trips(redis.url, count)))))
    finally:
        os.sched_setaffinity(0, mine)
        redis.stop()
        shutil.rmtree(data, ignore_errors=True)
    return [{"floor": f"publish round trip, {where}", "count": count, **quantiles(times)}
            for where, times in found]


def quantiles(times: list[float]) -> dict[str, float]:
    """p50 and p99 in ms of sorted ``times`` (seconds)."""
    return {"p50_ms": round(statistics.median(times) * 1e3, 3),
            "p99_ms": round(times[int(len(times) * 0.99) - 1] * 1e3, 3)}


def start_probe(url: str, server_cores: list[str], start_at: float, until: float,
                rate: float, out: Any) -> list[Any]:
    """The floor under a run's load (see ``run``): the echo process (on A's core, subscribed
    before this returns) and the asker (on B's), on channels of their own."""
    there, back = f"probe:{uuid.uuid4().hex}:there".encode(), b"probe:back"
    subscribed = mp.Event()
    echo = mp.Process(target=fleet_echo_process, name="echo",
                      args=(url, subscribed, {int(server_cores[0])}, there, back))
    echo.start()
    if not subscribed.wait(30):
        raise RuntimeError("the probe's echo did not subscribe")
    asker = mp.Process(target=probe_process, args=(url, {int(server_cores[1])}, start_at,
                                                    until, 1.0 / rate, there, back, out))
    asker.start()
    return [echo, asker]


def worker_puts(worker: Any) -> bool:
    """Whether a process of the run puts its findings on the queue (all but the echo)."""
    return bool(worker.name != "echo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--procs", type=int, default=1, help="load-generating processes")
    parser.add_argument("--server-core", default="1",
                        help="taskset core list for both servers")
    parser.add_argument("--repeat", type=int, default=1,
                        help="interleaved runs per mode and R; medians shown")
    parser.add_argument("--floor", type=int, default=2000,
                        help="bare publish round trips to time first (0: none)")
    parser.add_argument("--probe", type=float, default=0.0,
                        help="also time fleet round trips (the floor) under each run's load, "
                             "this many a second (0: none)")
    parser.add_argument("--ping", type=float, default=0.0,
                        help="the servers time this many round trips to each other a second "
                             "(fleet_ping_every), their median over each run's window reported "
                             "(0: none)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="paced: moves/s per room, well below saturation (0: closed loop)")
    parser.add_argument("--modes", nargs="+",
                        choices=["owner", "spread", "pair", "placed", "direct"],
                        default=["owner", "spread"],
                        help="pair: each room's creator on A, the other player on B (no "
                             "balancer), their latencies apart; placed: each pair on one "
                             "process, the load processes taking turns (no forwarding); direct: "
                             "each client on A or B drawn at random, no balancer")
    parser.add_argument("--quota", type=float, default=0.0,
                        help="cap each server at this much of a core (a CPU cgroup each, "
                             "5 ms period): every server saturated")
    parser.add_argument("--cluster", action="store_true",
                        help="each run on a Redis Cluster (three primaries, a replica each) "
                             "in place of one Redis")
    parser.add_argument("--split", action="store_true",
                        help="process A on the first core, B on the second (the load, "
                             "HAProxy and Redis on any)")
    args = parser.parse_args()
    if "placed" in args.modes and args.procs % 2:
        parser.error("placed needs an even --procs: the load processes take turns between "
                     "the two servers")
    if args.quota:  # (a cgroup made and removed at once: the runs would fail late)
        try:
            CpuQuota(f"playhall-bench-check-{os.getpid()}", args.quota).remove()
        except (OSError, ValueError) as failure:
            parser.error(f"--quota: {failure}")
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    if args.floor:
        for found in floor(args.floor, args.split, args.server_core):
            print(json.dumps(found), flush=True)
    for rooms in args.rooms:
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in args.modes}
        for _ in range(args.repeat):  # interleaved: the machine's drift hits both alike
            for mode in runs:
                runs[mode].append(run(mode, rooms, args.seconds, args.warmup, args.procs,
                                      args.server_core, args.rate, args.split,
                                      args.probe, args.quota, args.ping, args.cluster))
        # Each round's efficiency, its runs side by side (they met the same spell of the
        # machine), before the runs are sorted for their medians.
        in_turn = {mode: [r["moves_per_server_cpu_s"] for r in done] for mode, done in runs.items()}
        medians = {}
        for mode, done in runs.items():
            done.sort(key=lambda r: r["moves_per_s"])
            best = done[len(done) // 2]
            best["runs_moves_per_s"] = [r["moves_per_s"] for r in done]
            best["runs_server_us_per_move"] = [r["server_us_per_move"] for r in done]
            best["runs_p50_ms"] = [r["p50_ms"] for r in done]
            for key in ("p50_local_ms", "p50_forwarded_ms"):
                if key in best:
                    best[f"runs_{key}"] = [r[key] for r in done]
            for key in ("floor_p50_ms", "inside_p50_ms"):
                if key in best:
                    best[f"runs_{key}"] = [r[key] for r in done]
            if "p50_forwarded_ms" in best:  # what forwarding adds, run by run (same load)
                adds = [round(r["p50_forwarded_ms"] - r["p50_local_ms"], 2) for r in done]
                best["runs_forwarding_adds_ms"] = adds
                best["forwarding_adds_ms"] = round(statistics.median(adds), 2)
            medians[mode] = best
        owner = medians.get("owner")
        for mode, median in medians.items():
            if mode != "owner" and owner and owner["moves_per_server_cpu_s"] and median[
                    "moves_per_server_cpu_s"]:
                median["efficiency"] = round(
                    median["moves_per_server_cpu_s"] / owner["moves_per_server_cpu_s"], 2)
                median["runs_efficiency_by_round"] = [
                    round(m / o, 2) if m and o else None
                    for m, o in zip(in_turn[mode], in_turn["owner"], strict=True)]
        for mode in runs:
            print(json.dumps(medians[mode]), flush=True)


if __name__ == "__main__":
    main()
