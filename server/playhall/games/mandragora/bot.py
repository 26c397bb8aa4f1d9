"""The server-side bot: iterative-deepening alpha-beta over the public view.

Mandragora has no hidden information, so the view is the whole position and a plain minimax
search is sound. Extra turns are why this is negamax with a twist: the sign flips only when the
mover actually changes, so a chain of extra turns is searched as consecutive moves by the same
player. The search is bounded by a node budget, not a clock, so the same view and seed always
give the same move (a clock would make the bot's play depend on machine load).
"""

from __future__ import annotations

from collections.abc import Sequence

from playhall.games.contract import Move, View
from playhall.games.rng import Rng, RngState

from . import board, pieces

#: Positions expanded per decision: measured 3.5 ms mean, 7.5 ms p95 per decision on an idle
#: x86_64 core (docs/benchmarks/mandragora-bot.md). The server runs the bot inline, so it must
#: stay small.
#: That reaches 3-4 plies in the middle game (branching is at most five) and deeper near the end.
NODE_BUDGET = 300
MAX_DEPTH = 12
#: Terminal positions dominate any material difference so the bot takes a sure win and avoids a
#: sure loss; the score difference is added so it still prefers winning by more.
WIN = 1000.0
#: Weight of an immediately available extra-turn move in the static evaluation. Such a move is a
#: free point plus tempo; for the side to move it is worth nearly a sure point.
EXTRA_TURN_WEIGHT = 0.5
_TIE = 1e-6


class _Budget(Exception):
    """Raised inside the search when the node budget is spent; the deepest finished iteration
    is used instead."""


class _Search:
    def __init__(self, first: int, budget: int) -> None:
        self.values = (pieces.value_table(first == 0), pieces.value_table(first == 1))
        self.budget = budget
        self.nodes = 0

    def ordered(self, areas: list[str], mover: int) -> list[int]:
        """Selectable areas, extra-turn moves first (they are usually best, so alpha-beta
        prunes more), otherwise in a fixed order for determinism."""
        base = board.BASE[mover]
        choices = board.selectable_areas(areas, mover)
        return sorted(
            choices, key=lambda a: (board.last_target(mover, a, len(areas[a])) != base, a)
        )

    def play(
        self, areas: list[str], scores: list[int], mover: int, area: int
    ) -> tuple[list[str], list[int], int]:
        """The position after ``mover`` sows ``area``, and who moves next."""
        child = list(areas)
        landings = board.sow(child, mover, area)
        base = board.BASE[mover]
        gained = sum(self.values[mover][p] for p, target in landings if target == base)
        new_scores = list(scores)
        new_scores[mover] += gained
        nxt = mover if landings[-1][1] == base else 1 - mover
        return child, new_scores, nxt

    def evaluate(self, areas: list[str], scores: list[int], mover: int) -> float:
        """Static value for ``mover``: score difference plus extra-turn chances on offer."""
        other = 1 - mover
        return (
            scores[mover]
            - scores[other]
            + EXTRA_TURN_WEIGHT
            * (self._extra_turns(areas, mover) - self._extra_turns(areas, other))
        )

    @staticmethod
    def _extra_turns(areas: list[str], seat: int) -> int:
        base = board.BASE[seat]
        return sum(
            1
            for a in board.SELECTABLE[seat]
            if areas[a] and board.last_target(seat, a, len(areas[a])) == base
        )

    def value(
        self, areas: list[str], scores: list[int], mover: int, depth: int, alpha: float, beta: float
    ) -> float:
        """Negamax value for ``mover`` (who is to move and has a move)."""
        self.nodes += 1
        if self.nodes > self.budget:
            raise _Budget
        best = -float("inf")
        for area in self.ordered(areas, mover):
            v = self.child_value(areas, scores, mover, area, depth, alpha, beta)
            if v > best:
                best = v
            if best > alpha:
                alpha = best
            if alpha >= beta:
                break
        return best

    def child_value(
        self,
        areas: list[str],
        scores: list[int],
        mover: int,
        area: int,
        depth: int,
        alpha: float,
        beta: float,
    ) -> float:
        """Value for ``mover`` of sowing ``area``. The sign flips only if the turn passes."""
        child, child_scores, nxt = self.play(areas, scores, mover, area)
        if not board.selectable_areas(child, nxt):  # ruling 6: nxt cannot move, game over
            diff = child_scores[mover] - child_scores[1 - mover]
            return diff + (WIN if diff > 0 else -WIN if diff < 0 else 0.0)
        if depth <= 1:
            v = self.evaluate(child, child_scores, nxt)
            return v if nxt == mover else -v
        if nxt == mover:
            return self.value(child, child_scores, nxt, depth - 1, alpha, beta)
        return -self.value(child, child_scores, nxt, depth - 1, -beta, -alpha)


def choose(
    view: View, seat: int, moves: Sequence[Move], seed: RngState | int, budget: int = NODE_BUDGET
) -> Move:
    """Pick one of ``moves`` for ``seat`` from the view alone; ties broken by ``Rng(seed)``."""
    legal = [m for m in moves if m.get("type") == "sow" and isinstance(m.get("area"), int)]
    if not legal:
        return dict(moves[0])
    # The view lists each stack as a list of codes (bottom first); the search uses strings.
    areas = ["".join(stack) for stack in view["areas"]]
    scores = [int(s) for s in view["scores"]]
    search = _Search(int(view["first"]), budget)
    candidates = [m["area"] for m in legal]
    best_areas = candidates
    for depth in range(1, MAX_DEPTH + 1):
        try:
            best_areas = _root(search, areas, scores, seat, candidates, depth)
        except _Budget:
            break
    pick = best_areas[Rng(seed).below(len(best_areas))] if len(best_areas) > 1 else best_areas[0]
    return next(dict(m) for m in legal if m["area"] == pick)


def _root(
    search: _Search,
    areas: list[str],
    scores: list[int],
    seat: int,
    candidates: list[int],
    depth: int,
) -> list[int]:
    """The candidates that share the best value at ``depth``. Each later move is searched with
    alpha just under the best so far: a worse move fails low, an equal one returns its exact
    value, so ties are found exactly without a full-width search."""
    best = -float("inf")
    tied: list[int] = []
    for area in candidates:
        alpha = best - _TIE if tied else -float("inf")
        v = search.child_value(areas, scores, seat, area, depth, alpha, float("inf"))
        if v > best + _TIE:
            best, tied = v, [area]
        elif v >= best - _TIE:
            tied.append(area)
    return tied
