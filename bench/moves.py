"""Move throughput and latency: R rooms x 2 clients over real websockets, persistence on.

    python bench/moves.py --rooms 1 50 500 --seconds 20

Starts a redis-server (append-only, everysec) and the real server as separate processes, the
server pinned to one core (``taskset``), then runs the clients in ``--procs`` load processes
(``--client lean``, the default, is bench/loadgen.py; ``--client websockets`` a client on
websockets' asyncio layer, for comparison: it costs several times the CPU per move).
Each client moves as soon as it is its turn (first legal move) and, when a game ends, the pair
plays a rematch, so rooms stay busy for the whole measurement. At the window's end the pairs
stop moving but keep their connections open a second longer (``loadgen.LINGER``), so the moves
still in flight are measured without the server also answering every client's disconnect.

Reported: moves/s (acknowledged moves in the measured window), p50/p99 from sending a move to
receiving the update it caused, the server's RSS and CPU (user+system seconds / wall), and the
load processes' own CPU (``load_cpu`` in cores, ``load_us_per_move``) and Redis's
(``redis_cpu``), all over the measured window: the load processes and Redis share the other
core, so together they must stay under one core for the numbers to be the server's.
``BENCH_PERF=FILE`` records a native profile of the server with ``perf`` (for the compiled
build: its functions are C symbols), ``BENCH_PYSPY=FILE`` a Python one with py-spy.
``BENCH_CALLGRIND=FILE`` runs the server under valgrind's callgrind, counting only over the
measured window, and reports ``server_instructions_per_move``: the server's whole user-space
cost of a move (network side included, kernel excluded), which unlike moves/s does not depend
on how busy the machine is. The server then runs some 50 times slower, so use few rooms
(at R = 500 its clients would wait on it far past the protocol's timeouts).
``BENCH_CALLGRIND_ARGS`` adds options to callgrind's (``--cache-sim=yes`` counts simulated
cache misses too: ``server_cache_misses_per_move``, first-level and last-level).
``BENCH_TRACE=FILE`` writes the measured window in 100 ms slices (moves, median and highest
latency in each, and what may have slowed the slice: each process's share of its core, each
core's steal, the server's collector pauses; bench/slices.py), to tell a tail of whole slow
slices from one spread over every slice, and one slow slice's cause from another's.
``BENCH_SYSCALLS=1`` counts the server's system calls over the measured window with ``perf
stat`` (kernel tracepoints: root, or ``perf_event_paranoid`` allowing it) and reports
``server_syscalls_per_move``, in all and by call: like the instruction count, a measure of the
server's own path that the machine's load does not move.
Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import multiprocessing as mp
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

import msgpack  # noqa: E402
from loadgen import lean_pair, linger, next_game  # noqa: E402  (bench/loadgen.py: the script's folder)
from slices import Sampler, gc_env, read_pauses, write_slices  # noqa: E402  (bench/slices.py)
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from playhall_protocol import apply_diff  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BenchClient:
    """A load client on the websockets asyncio client: a reader task per connection."""

    def __init__(self, ws: ClientConnection, stats: dict[str, Any], stop_at: float,
                 measure_from: float) -> None:
        self.ws = ws
        self.stats = stats
        self.stop_at = stop_at
        self.measure_from = measure_from
        self.ids = 0
        self.room = ""
        self.version = -1
        self.view: dict[str, Any] = {}
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.sent_at: float | None = None
        self.sent_version = -1
        self.changed = asyncio.Event()

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.ids] = future
        await self.ws.send(msgpack.packb({"t": kind, "id": self.ids, **fields}))
        reply = await future
        if reply["t"] == "error":
            raise RuntimeError(f"{kind}: {reply['code']}: {reply['reason']}")
        return reply

    async def read(self) -> None:
        async for frame in self.ws:
            message = msgpack.unpackb(frame)
            kind = message["t"]
            if kind in ("ok", "error"):
                future = self.pending.pop(message.get("re"), None)
                if future is not None:
                    future.set_result(message)
                continue
            if message.get("room") != self.room:
                continue
            if kind == "snapshot":
                self.view, self.version = message["view"], message["version"]
            elif kind == "update" and message["from"] == self.version:
                self.view = apply_diff(self.view, message["diff"])
                self.version = message["to"]
            elif kind == "update":
                await self.ws.send(msgpack.packb({"t": "sync", "id": 0, "room": self.room,
                                                  "version": self.version}))
                continue
            else:
                continue
            if self.sent_at is not None and self.version > self.sent_version:
                now = time.perf_counter()
                if now >= self.measure_from:
                    self.stats["lat"].append(now - self.sent_at)
                    self.stats["done_at"].append(now)
                self.sent_at = None
            self.changed.set()

    async def play(self, seat: int) -> None:
        while time.perf_counter() < self.stop_at:
            await self.changed.wait()
            self.changed.clear()
            view = self.view
            if view.get("status") == "finished":
                return
            if view.get("you") == seat and seat in view.get("to_act", ()) and self.sent_at is None:
                self.sent_at = time.perf_counter()
                self.sent_version = self.version
                self.ids += 1
                await self.ws.send(msgpack.packb({
                    "t": "move", "id": self.ids, "room": self.room, "version": self.version,
                    "mid": self.ids, "move": view["moves"][0]}))
                if self.sent_at >= self.measure_from:
                    self.stats["moves"] += 1


async def websockets_pair(host: str, port: int, stats: dict[str, Any], stop_at: float,
                          measure_from: float) -> None:
    """Two clients on websockets' asyncio client (``--client websockets``), for comparison."""
    url = f"ws://{host}:{port}/"
    a_ws = await connect(url, compression=None, max_size=2**22)
    b_ws = await connect(url, compression=None, max_size=2**22)
    a = BenchClient(a_ws, stats, stop_at, measure_from)
    b = BenchClient(b_ws, stats, stop_at, measure_from)
    readers = [asyncio.create_task(a.read()), asyncio.create_task(b.read())]
    await a.request("hello", protocol=1, name="a")
    await b.request("hello", protocol=1, name="b")
    reply = await a.request("create", game="mantis", seats=2, options={"target": 105})
    room = reply["room"]
    while time.perf_counter() < stop_at:
        a.room = b.room = room
        a.version = b.version = -1
        await b.request("join", room=room, seat=1)
        await a.request("sync", room=room)
        await a.request("ready", room=room)
        await b.request("ready", room=room)
        await asyncio.gather(a.play(0), b.play(1))
        if time.perf_counter() >= stop_at:
            break
        stats["games"] += 1
        room = await next_game(a, b, room)
    await linger(stop_at)
    await a_ws.close()
    await b_ws.close()
    for task in readers:
        task.cancel()


def other_cores(server_core: str) -> set[int]:
    """Cores for Redis and the load generators: every core but the server's."""
    server = {int(c) for c in server_core.split(",") if c}
    cores = set(os.sched_getaffinity(0)) - server
    return cores or set(os.sched_getaffinity(0))


CLIENTS = {"lean": lean_pair, "websockets": websockets_pair}


def load_process(client: str, port: int, rooms: int, seconds: float, warmup: float,
                 start_at: float, out: Any, cores: set[int], pace: float = 0.0,
                 port_b: int = 0, ports: tuple[int, ...] = ()) -> None:
    """``pace``: the lean client's paced play (a move every ``pace`` seconds per room);
    ``port_b``: each pair's second client connects there (the lean client); ``ports``: each
    client connects to one of them drawn at random (the lean client)."""
    os.sched_setaffinity(0, cores)
    pair = CLIENTS[client]
    if pace or port_b or ports:
        pair = functools.partial(lean_pair, pace=pace, port_b=port_b, ports=ports)

    async def main() -> None:
        while time.time() < start_at:
            await asyncio.sleep(0.01)
        now = time.perf_counter()
        stats: dict[str, Any] = {"moves": 0, "lat": [], "done_at": [], "games": 0, "refused": 0,
                                 "resyncs": 0, "cpu": 0.0}
        stop_at, measure_from = now + warmup + seconds, now + warmup
        # This process's own CPU (user+system, every thread) over the measured window.
        loop = asyncio.get_running_loop()
        cpu = [0.0, 0.0]
        at = loop.time() - now
        loop.call_at(at + measure_from, lambda: cpu.__setitem__(0, time.process_time()))
        loop.call_at(at + stop_at, lambda: cpu.__setitem__(1, time.process_time()))
        await asyncio.gather(*(pair("127.0.0.1", port, stats, stop_at, measure_from)
                               for _ in range(rooms)))
        stats["cpu"] = cpu[1] - cpu[0]
        out.put(stats)

    asyncio.run(main())


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def server_env() -> dict[str, str]:
    """The environment the server runs in: this tree's packages first on its path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        str(ROOT / d) for d in ("protocol", "server", "clients"))}


def server_command(port: int, redis_url: str) -> list[str]:
    """The server as the benchmarks run it, listening on ``port``."""
    # The per-connection rate limit is lifted: at R = 1 one client moves well over a thousand
    # times a second, and a rate-limited move would stall its room (this measures throughput).
    # So are the per-address caps (connections, new players, rooms): every client of the run
    # connects from this host. And the rooms a player may create a minute: a pair plays a
    # rematch (a new room) per finished game, at R = 1 several a second.
    return [sys.executable, "-m", "playhall.cli", "serve", "--port", str(port), "--redis-url",
            redis_url, "--bot-delay", "0", "--log-level", "warning", "--log-format", "json",
            "--rate", "100000", "--burst", "100000", "--connections-per-address", "0",
            "--new-players-per-minute", "0", "--address-rooms-per-minute", "0",
            "--rooms-per-minute", "0",
            # The metrics and admin listeners on free ports: runs of two trees may share the
            # machine.
            "--metrics-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]


def wait_listening(port: int, tries: int) -> None:
    """Wait until something listens on ``port`` (the server has started), at most ``tries``
    times 50 ms."""
    for _ in range(tries):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)


def run(rooms: int, seconds: float, warmup: float, procs: int, server_core: str,
        fsync: str, client: str = "lean") -> dict[str, Any]:
    from playhall.store.embedded import EmbeddedRedis

    # This process moves to the load cores first, so that all it starts inherits them: Redis
    # with every thread (pinning its pid after the start moved only its main thread, and left
    # the append-only file's fsync thread free to run on the server's core), the load
    # processes, and the trace sampler. The server alone is then put on its core (taskset).
    os.sched_setaffinity(0, other_cores(server_core))
    data = Path(tempfile.mkdtemp(prefix="playhall-bench-"))
    redis = EmbeddedRedis(data / "redis", port=free_port(), fsync=fsync)
    redis.start()
    port = free_port()
    env = server_env()
    cmd = server_command(port, redis.url)
    counted = os.environ.get("BENCH_CALLGRIND")
    instructions = 0
    totals: dict[str, int] = {}
    if counted:  # instrumented from the measured window only (see the module docstring)
        cmd = [*callgrind_command(counted), *cmd]
    elif shutil.which("taskset") and server_core:
        cmd = ["taskset", "-c", server_core, *cmd]
    traced = os.environ.get("BENCH_TRACE")
    pauses_file = data / "gc.json"
    if traced:
        env = gc_env(env, pauses_file)
    server = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, 200 if not counted else 2000)
        queue: Any = mp.Queue()
        start_at = time.time() + 1.0
        share = [rooms // procs + (1 if i < rooms % procs else 0) for i in range(procs)]
        cores = other_cores(server_core)
        workers = [
            mp.Process(target=load_process,
                       args=(client, port, n, seconds, warmup, start_at, queue, cores))
            for n in share
            if n
        ]
        for w in workers:
            w.start()
        time.sleep(max(0.0, start_at - time.time()) + warmup)
        spy = None
        if os.environ.get("BENCH_PYSPY"):  # a sampling profile of the server (taskset execs it)
            spy = subprocess.Popen(
                ["py-spy", "record", "-r", "200", "-d", str(int(seconds)), "-f", "raw",
                 "-o", os.environ["BENCH_PYSPY"], "-p", str(server.pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        perf = None
        if os.environ.get("BENCH_PERF"):  # a native profile of the server (the compiled build)
            perf = subprocess.Popen(
                ["perf", "record", "-F", "299", "--call-graph", "dwarf,16384",
                 "-o", os.environ["BENCH_PERF"], "-p", str(server.pid), "--", "sleep",
                 str(seconds)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        syscalls = None
        if os.environ.get("BENCH_SYSCALLS"):
            syscalls = subprocess.Popen(
                ["perf", "stat", "-x", ",", "-e", ",".join(SYSCALL_EVENTS), "-p",
                 str(server.pid), "--", "sleep", str(seconds)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        redis_pid = redis.process.pid if redis.process is not None else None
        redis0 = cpu_seconds(redis_pid) if redis_pid else 0.0
        if counted:
            callgrind_start(server.pid)
        sampler = None
        if traced:
            pids = {"server": server.pid, **{f"load{i}": w.pid for i, w in enumerate(workers)
                                              if w.pid is not None}}
            if redis_pid:
                pids["redis"] = redis_pid
            sampler = Sampler(pids)
            sampler.start()
        (user0, sys0), t0 = cpu_split(server.pid), time.perf_counter()
        time.sleep(seconds)
        (user1, sys1), t1 = cpu_split(server.pid), time.perf_counter()
        samples = sampler.stop() if sampler is not None else []
        if counted:
            totals = callgrind_stop(server.pid, counted)
            instructions = totals["Ir"]
        redis1 = cpu_seconds(redis_pid) if redis_pid else 0.0
        rss = rss_mb(server.pid)
        results = [queue.get(timeout=120) for _ in workers]
        for profiler in (spy, perf):
            if profiler is not None:
                profiler.wait(60)
        calls = syscall_counts(syscalls.communicate(timeout=60)[1]) if syscalls else {}
        for w in workers:
            w.join(30)
    finally:
        server.terminate()
        server.wait(30)
        pauses = read_pauses(pauses_file)  # written as the server exits
        redis.stop()
        shutil.rmtree(data, ignore_errors=True)
    if traced:
        write_slices(Path(traced), results, t0, t1, samples, pauses)
    lat = sorted(x for r in results for x in r["lat"])
    moves = sum(r["moves"] for r in results)
    counts = {}
    if counted:
        counts["server_instructions_per_move"] = (
            round(instructions / moves) if moves else None)
        if "D1mr" in totals and moves:  # --cache-sim=yes: misses of reads and writes
            first = sum(totals[k] for k in ("I1mr", "D1mr", "D1mw"))
            last = sum(totals[k] for k in ("ILmr", "DLmr", "DLmw"))
            counts["server_cache_misses_per_move"] = {
                "first_level": round(first / moves), "last_level": round(last / moves)}
    if calls and moves:
        counts["server_syscalls_per_move"] = {
            name: round(n / moves, 2) for name, n in calls.items() if n}
    load_cpu = sum(r["cpu"] for r in results)
    return {
        "rooms": rooms,
        "client": client,
        "moves_per_s": round(moves / seconds),
        "p50_ms": round(statistics.median(lat) * 1e3, 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1e3, 2) if lat else None,
        "server_cpu": round((user1 + sys1 - user0 - sys0) / (t1 - t0), 2),
        # The kernel's share (socket reads and writes, polling) of the server's CPU.
        "server_sys_cpu": round((sys1 - sys0) / (t1 - t0), 2),
        "server_rss_mb": round(rss, 1),
        "load_cpu": round(load_cpu / seconds, 2),
        "redis_cpu": round((redis1 - redis0) / (t1 - t0), 2),
        "load_us_per_move": round(load_cpu / moves * 1e6, 1) if moves else None,
        "refused": sum(r["refused"] for r in results),
        "resyncs": sum(r["resyncs"] for r in results),
        "games_finished": sum(r["games"] for r in results),
        "seconds": seconds,
        **counts,
    }


#: What BENCH_SYSCALLS counts: every system call, and the ones a move's path makes by name.
SYSCALL_EVENTS = ["raw_syscalls:sys_enter", *(f"syscalls:sys_enter_{name}" for name in (
    "read", "write", "writev", "recvfrom", "sendto", "epoll_wait", "epoll_pwait",
    "epoll_ctl", "getpid", "futex", "clock_gettime"))]


def syscall_counts(report: str) -> dict[str, int]:
    """``perf stat -x ,`` output (count, unit, event, ...) as {call: count}; ``all`` for every
    system call."""
    counts: dict[str, int] = {}
    for line in report.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0].isdigit():
            event = fields[2]
            name = "all" if event == "raw_syscalls:sys_enter" else event.rpartition("_enter_")[2]
            counts[name] = int(fields[0])
    return counts


def callgrind_command(out: str) -> list[str]:
    """What runs a program under callgrind, counting nothing until :func:`callgrind_start`,
    into ``out`` (its earlier dumps removed first), with ``BENCH_CALLGRIND_ARGS``'s options."""
    for old in Path(out).parent.glob(Path(out).name + "*"):
        old.unlink()
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
            *os.environ.get("BENCH_CALLGRIND_ARGS", "").split()]


def callgrind_start(pid: int) -> None:
    """Counting from now on, from zero (the measured window's start)."""
    subprocess.run(["callgrind_control", "-z", "-i", "on", str(pid)], check=True,
                   capture_output=True)


def callgrind_stop(pid: int, out: str) -> dict[str, int]:
    """The counts since :func:`callgrind_start`, dumped now (``callgrind_totals``)."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
    return callgrind_totals(Path(out))


def callgrind_totals(out: Path) -> dict[str, int]:
    """Event totals (``Ir``, and the cache events with ``--cache-sim=yes``) in callgrind's dump
    of the measured window: the one ``callgrind_control -d`` made (``out`` with a numbered
    suffix; ``out`` itself is written when the server exits)."""
    dumps = [p for p in out.parent.glob(out.name + ".*") if p.suffix[1:].isdigit()]
    if len(dumps) != 1:
        raise ValueError(f"expected one numbered dump of {out}, found {dumps}")
    events: list[str] = []
    for line in dumps[0].read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            return dict(zip(events, map(int, line.split()[1:]), strict=False))
    raise ValueError(f"no totals in {dumps[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, nargs="+", default=[1, 50, 500])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="load-generating processes")
    parser.add_argument("--server-core", default="0", help="taskset core list for the server")
    parser.add_argument("--fsync", default="everysec", choices=["everysec", "always"])
    parser.add_argument("--client", default="lean", choices=sorted(CLIENTS),
                        help="load client: lean (asyncio.Protocol) or websockets")
    parser.add_argument("--repeat", type=int, default=1, help="runs per R; the median is shown")
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    for rooms in args.rooms:
        runs = [run(rooms, args.seconds, args.warmup, args.procs, args.server_core, args.fsync,
                    args.client)
                for _ in range(args.repeat)]
        runs.sort(key=lambda r: r["moves_per_s"])
        best = runs[len(runs) // 2]
        best["runs_moves_per_s"] = [r["moves_per_s"] for r in runs]
        # Each run's p99 beside its moves/s (same order): a target on both holds run by run.
        best["runs_p99_ms"] = [r["p99_ms"] for r in runs]
        print(json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
