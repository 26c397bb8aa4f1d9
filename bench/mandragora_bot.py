"""Mandragora bot benchmark: the bot against a uniformly random player.

Plays N games (default 200) alternating the bot's seat and who moves first (see
``playhall.games.mandragora.arena.play_one``), prints the bot's win rate and its think time per
decision. Results go in docs/benchmarks/mandragora-bot.md.

    python bench/mandragora_bot.py [--games 200] [--budget NODES]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from playhall.games.mandragora import bot
from playhall.games.mandragora.arena import play_many


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--budget", type=int, default=bot.NODE_BUDGET,
                        help="search nodes per decision (default: the bot's own)")
    args = parser.parse_args()

    started = time.perf_counter()
    result = play_many(args.games, args.budget, clock=time.perf_counter)
    elapsed = time.perf_counter() - started
    think_ms = sorted(t * 1000 for t in result.think_seconds)

    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, "
          f"Python {sys.version.split()[0]}")
    print(f"budget: {args.budget} nodes per decision")
    print(f"games: {result.games}  wins: {result.wins}  draws: {result.draws}  "
          f"losses: {result.losses}")
    print(f"win rate: {result.win_rate:.1%}")
    print(f"bot decisions: {len(think_ms)}  think ms: mean {statistics.fmean(think_ms):.2f}  "
          f"median {statistics.median(think_ms):.2f}  "
          f"p95 {think_ms[int(0.95 * (len(think_ms) - 1))]:.2f}  max {think_ms[-1]:.2f}")
    print(f"wall time: {elapsed:.1f} s")


if __name__ == "__main__":
    main()
