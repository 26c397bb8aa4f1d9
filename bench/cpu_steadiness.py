"""How steady this machine's CPU speed is, core by core, at the time scale of a latency tail.

    python bench/cpu_steadiness.py --seconds 20

Runs the same fixed loop on every core at once (one process per core, pinned) and counts how
many rounds of it each 100 ms window gets through. On a machine of its own the counts barely
move; on a shared VM they can halve from one window to the next (another tenant on the same
physical core), and a server pinned to that core then serves half as many moves in that window.
At R = 500 a move's latency is R / throughput (Little's law), so such a window doubles the
latency of every move in flight: p99 measures these windows as much as the server.
bench/moves.py's numbers belong next to this script's (docs/benchmarks.md).

Reported per core: the rounds per window at the 10th, 50th and 90th percentiles, and the
slowest window; ``slow_share`` is the fraction of windows under 75 % of that core's median.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time
from typing import Any

WINDOW = 0.1  # seconds
ROUND = 2000  # loop steps per round: ~10-20 us, fine enough to resolve a window


def count_windows(core: int, seconds: float, start_at: float, out: Any) -> None:
    os.sched_setaffinity(0, {core})
    clock = time.perf_counter
    while time.time() < start_at:
        time.sleep(0.001)
    end = clock() + seconds
    counts: list[int] = []
    while clock() < end:
        window_end = clock() + WINDOW
        rounds = 0
        while clock() < window_end:
            for _ in range(ROUND):
                pass
            rounds += 1
        counts.append(rounds)
    out.put((core, counts))


def summary(counts: list[int]) -> dict[str, Any]:
    ordered = sorted(counts)
    n = len(ordered)
    median = statistics.median(ordered)
    return {
        "windows": n,
        "p10": ordered[n // 10],
        "p50": median,
        "p90": ordered[n * 9 // 10],
        "slowest": ordered[0],
        "slow_share": round(sum(1 for c in counts if c < 0.75 * median) / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    queue: Any = mp.Queue()
    start_at = time.time() + 0.5
    workers = [mp.Process(target=count_windows, args=(core, args.seconds, start_at, queue))
               for core in cores]
    for w in workers:
        w.start()
    results = dict(queue.get(timeout=args.seconds + 60) for _ in workers)
    for w in workers:
        w.join(10)
    for core in cores:
        print(json.dumps({"core": core, "window_s": WINDOW, **summary(results[core])}))


if __name__ == "__main__":
    main()
