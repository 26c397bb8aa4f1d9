"""What the game generator costs per deal: a Mantis setup and a Math Magic Card deck shuffle.

Times, with ``timeit`` (the median of ``--repeat`` runs, each the mean of ``--number`` calls):

- a Mantis setup at 2 and at 6 seats (the 105-card deck shuffled, the first player drawn);
- shuffling one Math Magic Card deck of 20 cards, the generator built from its stored state
  as the engine does (``Rng(state["rng"])``, ``shuffle``, ``state["rng"] = rng.state``).

``--count`` instead runs each ``--number`` times under valgrind's callgrind and prints the
instructions per call (callgrind counts only while the deal runs: ``--collect-atstart=no`` and
``CALLGRIND_TOGGLE`` are not reachable from Python, so the script runs each deal in a process of
its own and subtracts the same process doing no deal).

Run: ``python bench/deal_cost.py`` or ``python bench/deal_cost.py --count``. Not part of the
tests: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable

from playhall.games.mantis import GAME as MANTIS
from playhall.games.rng import Rng

#: The generator's starting point for every deal (any key: the cost does not depend on it).
SEED = 12345
DECK = [f"c{i}" for i in range(20)]


def mantis_setup(seats: int) -> Callable[[], object]:
    options = MANTIS.normalize_options({})
    return lambda: MANTIS.setup(seats, options, SEED)


def math_card_shuffle() -> Callable[[], object]:
    state: dict[str, object] = {"rng": Rng(SEED).state}

    def shuffle() -> object:
        deck = list(DECK)
        rng = Rng(state["rng"])  # type: ignore[arg-type]
        rng.shuffle(deck)
        state["rng"] = rng.state
        return deck

    return shuffle


DEALS: dict[str, Callable[[], Callable[[], object]]] = {
    "mantis setup, 2 seats": lambda: mantis_setup(2),
    "mantis setup, 6 seats": lambda: mantis_setup(6),
    "math card deck shuffle (20)": math_card_shuffle,
}


def timed(number: int, repeat: int) -> None:
    print(f"{'deal':<30} {'median µs':>10} {'min µs':>8}")
    for name, make in DEALS.items():
        runs = timeit.repeat(make(), number=number, repeat=repeat)
        per = [r / number * 1e6 for r in runs]
        print(f"{name:<30} {statistics.median(per):>10.1f} {min(per):>8.1f}")


def _instructions(deal: str, number: int) -> int:
    """Instructions callgrind counts for a process that runs ``deal`` ``number`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--one", deal, "--number", str(number)],
            check=True, capture_output=True,
        )
        with open(out) as f:
            summary = re.search(r"^summary: (\d+)", f.read(), re.M)
        assert summary is not None
        return int(summary.group(1))


def counted(number: int) -> None:
    print(f"{'deal':<30} {'instructions/call':>18}")
    for name in DEALS:
        base = _instructions(name, 0)
        total = _instructions(name, number)
        print(f"{name:<30} {(total - base) / number:>18,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--count", action="store_true", help="instructions under callgrind")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child of --count
    args = parser.parse_args()
    if args.one is not None:
        deal = DEALS[args.one]()
        for _ in range(args.number):
            deal()
    elif args.count:
        counted(min(args.number, 200))
    else:
        timed(args.number, args.repeat)


if __name__ == "__main__":
    main()
