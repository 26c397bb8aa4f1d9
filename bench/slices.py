"""What ``BENCH_TRACE`` writes: the measured window in 100 ms slices, each with its moves and
latencies and with what the machine did meanwhile, so a slow slice can be told apart by cause.

At R = 500 every room has a move in flight, so a slice's latency is 500 over that slice's
throughput: it is slow when the server served fewer moves then. Each slice says why it might
have: the share of the slice each process ran on its core and waited for it (``cpu``,
``waiting``: the main thread's ``/proc/<pid>/schedstat``), the share the hypervisor took from
each core (``steal``, ``/proc/stat``, in 10 ms ticks), and the server's collector pauses that
began in it (``gc_ms``). The pauses come from ``gctrace/sitecustomize.py``, which the benchmark
puts on the server's ``PYTHONPATH`` only while tracing.

The sampler reads those files every 10 ms from the benchmark's own process, which runs on the
load generators' core; it costs that core well under 1 %.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

GC_HOOK = Path(__file__).resolve().parent / "gctrace"


def gc_env(env: dict[str, str], out: Path) -> dict[str, str]:
    """The server's environment ``env``, made to time its collections into ``out``."""
    path = os.pathsep.join(p for p in (str(GC_HOOK), env.get("PYTHONPATH", "")) if p)
    return {**env, "BENCH_GC_OUT": str(out), "PYTHONPATH": path}


def read_pauses(out: Path) -> list[tuple[float, float, int]]:
    """The collections the server timed: (start, seconds, generation), ``perf_counter`` time."""
    try:
        return [tuple(p) for p in json.loads(out.read_text())]
    except (OSError, ValueError):
        return []


class Sampler(threading.Thread):
    """Samples every 10 ms, until :meth:`stop`: each process's run and wait time, each core's
    steal."""

    def __init__(self, pids: dict[str, int], every: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.every = every
        self.samples: list[tuple[float, dict[str, tuple[int, int]], list[int]]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            taken: dict[str, tuple[int, int]] = {}
            for name, pid in self.pids.items():
                try:
                    run, wait, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
                except (OSError, ValueError):
                    continue
                taken[name] = (int(run), int(wait))
            steal = [int(line.split()[8]) for line in Path("/proc/stat").read_text().splitlines()
                     if line.startswith("cpu") and line[3:4].isdigit()]
            self.samples.append((time.perf_counter(), taken, steal))
            self._done.wait(self.every)

    def stop(self) -> list[tuple[float, dict[str, tuple[int, int]], list[int]]]:
        self._done.set()
        self.join(5)
        return self.samples


def write_slices(out: Path, results: list[dict[str, Any]], start: float, end: float,
                 samples: list[tuple[float, dict[str, tuple[int, int]], list[int]]],
                 pauses: list[tuple[float, float, int]], width: float = 0.1) -> None:
    """One JSON line per ``width`` seconds from ``start`` to ``end`` (the measured window)."""
    count = max(1, round((end - start) / width))

    def slice_of(at: float) -> int | None:
        index = int((at - start) / width)
        return index if 0 <= index < count else None

    latencies: list[list[float]] = [[] for _ in range(count)]
    for r in results:
        for at, lat in zip(r["done_at"], r["lat"], strict=True):
            if (index := slice_of(at)) is not None:
                latencies[index].append(lat)
    shares: list[dict[str, list[float]]] = [{} for _ in range(count)]
    spans = [0.0] * count
    tick = 1 / os.sysconf("SC_CLK_TCK")
    cores = len(samples[0][2]) if samples else 0
    stolen = [[0.0] * cores for _ in range(count)]
    for (t0, a, s0), (t1, b, s1) in zip(samples, samples[1:], strict=False):
        if (index := slice_of(t0)) is None:
            continue
        spans[index] += t1 - t0
        for name in a.keys() & b.keys():
            total = shares[index].setdefault(name, [0.0, 0.0])
            total[0] += (b[name][0] - a[name][0]) / 1e9  # running
            total[1] += (b[name][1] - a[name][1]) / 1e9  # waiting for the core
        for core, (x, y) in enumerate(zip(s0, s1, strict=True)):
            stolen[index][core] += (y - x) * tick
    gc_ms: list[list[float]] = [[] for _ in range(count)]
    for began, seconds, _generation in pauses:
        if (index := slice_of(began)) is not None and seconds >= 0.001:
            gc_ms[index].append(round(seconds * 1e3, 1))
    with out.open("w") as f:
        for index in range(count):
            lats, span = latencies[index], spans[index] or width
            f.write(json.dumps({
                "t": round(index * width, 3),
                "moves": len(lats),
                "p50_ms": round(statistics.median(lats) * 1e3, 2) if lats else None,
                "max_ms": round(max(lats) * 1e3, 2) if lats else None,
                "cpu": {n: round(v[0] / span, 2) for n, v in shares[index].items()},
                "waiting": {n: round(v[1] / span, 2) for n, v in shares[index].items()},
                "steal": [round(s / span, 2) for s in stolen[index]],
                "gc_ms": gc_ms[index],
            }) + "\n")


def attribute(rows: list[dict[str, Any]], over_ms: float) -> dict[str, Any]:
    """The slices whose slowest move took over ``over_ms``, each put down to the first of these
    found in it or the slice before (a move finishing in a slice was mostly waited for in the
    one before): a collector pause (``gc``); the hypervisor taking a tenth of a core or more
    (``steal``); the server runnable but not running for a twentieth of the slice or more,
    another task on its core (``server_preempted``); the load core busy, load generators and
    Redis together at 90 % of it or more (``load_core``). Else ``unexplained``. A heuristic:
    several causes often overlap, and only the first is counted."""
    causes: dict[str, list[float]] = {
        "gc": [], "steal": [], "server_preempted": [], "load_core": [], "unexplained": []}
    for i, row in enumerate(rows):
        if row["max_ms"] is None or row["max_ms"] <= over_ms:
            continue
        window = rows[max(0, i - 1):i + 1]
        if any(r["gc_ms"] for r in window):
            cause = "gc"
        elif any(s >= 0.1 for r in window for s in r["steal"]):
            cause = "steal"
        elif any(r["waiting"].get("server", 0.0) >= 0.05 for r in window):
            cause = "server_preempted"
        elif any(sum(v for name, v in r["cpu"].items() if name != "server") >= 0.9
                 for r in window):
            cause = "load_core"
        else:
            cause = "unexplained"
        causes[cause].append(row["t"])
    return {"over_ms": over_ms, "slices": sum(len(v) for v in causes.values()),
            **{k: len(v) for k, v in causes.items()}, "at": causes}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Put a BENCH_TRACE file's slow slices down to "
                                                 "their likely causes.")
    parser.add_argument("trace", type=Path)
    parser.add_argument("--over", type=float, default=100.0,
                        help="a slice is slow if its slowest move took over this many ms")
    args = parser.parse_args()
    lines = args.trace.read_text().splitlines()
    print(json.dumps(attribute([json.loads(line) for line in lines], args.over)))
