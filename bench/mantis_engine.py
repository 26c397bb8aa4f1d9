"""Mantis engine benchmark: what one move costs the server.

For every move of many random games (2..6 players) it times what a room does per accepted
move: ``to_act``, ``legal_moves``, ``apply``, ``outcome`` and a view for every seat plus one
spectator; it also times ``apply`` alone. Prints microseconds per move, per seat count and
overall. Run: ``python bench/mantis_engine.py [games_per_seat_count]``.

Random moves are chosen before the timer starts so the generator is not measured.

Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import sys
import time

from playhall.games.mantis import GAME
from playhall.games.rng import Rng


def run(seats: int, games: int) -> tuple[int, float, float]:
    """Play ``games`` random games; return (moves, seconds for the full cycle, for apply)."""
    moves = 0
    full = 0.0
    apply_only = 0.0
    viewers: list[int | None] = [*range(seats), None]
    for seed in range(games):
        state = GAME.setup(seats, GAME.normalize_options({}), seed)
        rng = Rng(seed ^ 0xBE4C)
        while GAME.outcome(state) is None:
            seat = GAME.to_act(state)[0]
            pick = rng.below(seats)  # 0 = score, else steal from a random other seat
            t0 = time.perf_counter()
            GAME.to_act(state)
            legal = GAME.legal_moves(state, seat)
            t1 = time.perf_counter()
            state = GAME.apply(state, seat, legal[pick]).state
            t2 = time.perf_counter()
            GAME.outcome(state)
            for viewer in viewers:
                GAME.view(state, viewer)
            t3 = time.perf_counter()
            full += t3 - t0
            apply_only += t2 - t1
            moves += 1
    return moves, full, apply_only


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    total_moves = 0
    total_full = 0.0
    total_apply = 0.0
    print(f"{'seats':>5} {'moves':>7} {'full µs/move':>13} {'apply µs':>9}")
    for seats in range(2, 7):
        moves, full, apply_only = run(seats, games)
        total_moves += moves
        total_full += full
        total_apply += apply_only
        print(f"{seats:>5} {moves:>7} {full / moves * 1e6:>13.1f} {apply_only / moves * 1e6:>9.1f}")
    print(f"{'all':>5} {total_moves:>7} {total_full / total_moves * 1e6:>13.1f} "
          f"{total_apply / total_moves * 1e6:>9.1f}")
    print("full = to_act + legal_moves + apply + outcome + view for every seat and a spectator")


if __name__ == "__main__":
    main()
