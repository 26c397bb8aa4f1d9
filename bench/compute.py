"""Micro-benchmark of the pure per-move work of a room: the room view of every seat, the diff
between consecutive views, and packing the record for Redis.

    python bench/compute.py [--games 20] [--repeat 7] [--target 105]

Each game is a real random 2-seat Mantis game (the server benchmark's shape: two people, target
105, so it runs until the deck is empty), played through the actor's own record update
(``played`` + ``remember``). Records are built before the timers start. Then, per game and in
version order, as the actor does it:

- view: ``room_view`` for seat 0 and seat 1 of each version (so caches see what they would
  see on the server: consecutive versions, each seen by both seats);
- diff: ``make_diff`` between each seat's view of a version and of the version before;
- pack: ``RoomRecord.pack`` of each record.

Reported: the median over ``--repeat`` runs of the mean microseconds per call. Every run uses
games not seen before, so no cache is warm from an earlier run.

Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

from playhall.games.mantis import GAME  # noqa: E402
from playhall.games.rng import Rng, int_key  # noqa: E402
from playhall.rooms import views  # noqa: E402
from playhall.rooms.record import PLAYING, RoomRecord, Seat  # noqa: E402
from playhall.rooms.replay import game_fields, played  # noqa: E402
from playhall_protocol import make_diff  # noqa: E402

SEATS = (0, 1)


def game_records(seed: int, target: int) -> list[RoomRecord]:
    """Every version of one room from the start of a random game to its end."""
    options = GAME.normalize_options({"target": target})
    seats = (Seat("p0", "Ann", ready=True), Seat("p1", "Bob", ready=True))
    record = RoomRecord(
        id=f"room{seed}",
        game=GAME.id,
        options=options,
        seats=seats,
        secret=int_key(seed),
        creator="p0",
        status=PLAYING,
        created=1.7e9,
    )
    state = GAME.setup(2, options, seed)
    record = record.evolve(**game_fields(GAME, state, options, len(seats), record.created))
    records = [record]
    rng = Rng(seed ^ 0x5EED)
    mid = 0
    while record.status == PLAYING:
        assert record.state is not None
        seat = GAME.to_act(record.state)[0]
        legal = GAME.legal_moves(record.state, seat)
        applied = GAME.apply(record.state, seat, legal[rng.below(len(legal))])
        mid += 1
        player = record.seats[seat].player
        assert player is not None
        seen = record.remember(player, mid, record.version + 1)
        record = played(record, GAME, applied, seen)
        records.append(record)
    return records


def run(records: list[RoomRecord]) -> tuple[float, float, float, int, int, int]:
    """Seconds spent in views, diffs and packs over one game, and the numbers of calls."""
    t0 = time.perf_counter()
    built: list[list[dict[str, Any]]] = []
    memo = views.ViewMemo()  # one room's, as its audience keeps it
    for record in records:
        built.append([views.room_view(record, GAME, seat, memo) for seat in SEATS])
    t1 = time.perf_counter()
    for old, new in zip(built, built[1:], strict=False):
        for seat in SEATS:
            make_diff(old[seat], new[seat])
    t2 = time.perf_counter()
    for record in records:
        record.pack()
    t3 = time.perf_counter()
    n = len(records)
    return t1 - t0, t2 - t1, t3 - t2, n * len(SEATS), (n - 1) * len(SEATS), n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20, help="games per run")
    parser.add_argument("--repeat", type=int, default=7, help="runs (the median is reported)")
    parser.add_argument("--target", type=int, default=105)
    args = parser.parse_args()

    results: dict[str, list[float]] = {"view": [], "diff": [], "pack": []}
    seed = 1
    for _ in range(args.repeat):
        games = []
        for _ in range(args.games):
            games.append(game_records(seed, args.target))
            seed += 1
        totals = [0.0, 0.0, 0.0]
        counts = [0, 0, 0]
        for records in games:
            tv, td, tp, nv, nd, np_ = run(records)
            totals[0] += tv
            totals[1] += td
            totals[2] += tp
            counts[0] += nv
            counts[1] += nd
            counts[2] += np_
        for name, total, count in zip(results, totals, counts, strict=True):
            results[name].append(total / count * 1e6)
    for name, values in results.items():
        print(
            f"{name:>5}: median {statistics.median(values):6.2f} us/call "
            f"(min {min(values):6.2f}, max {max(values):6.2f}, {args.repeat} runs)"
        )


if __name__ == "__main__":
    main()
