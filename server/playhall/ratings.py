"""Ratings: who takes part in a finished game's rating, their places, and the update.

The model is openskill's Plackett-Luce (Weng-Lin): it rates ranked outcomes of any number of
players directly (Mantis's three to six seats as well as the two-seat games), where Glicko-2
would need a free-for-all split into pairwise results. A rating is ``mu`` (the estimate) and
``sigma`` (its uncertainty); a new player starts at 25 and 25/3, openskill's defaults. The
number shown is ``round(60 * mu)`` (1500 to start, the scale players know from chess sites).

Pure functions only: the stored ratings and the once-only write are playhall.results'.

A game is rated when the room asked for it, at least two different people held its seats and
played it to an end (no bot seat, not ended by the server: ``abandoned`` or
``closed_by_operator``). Places come from the outcome alone,
because ``scores`` mean different things in different games: the winners share first place,
the seats that left the game (resigned, timed out) and the players a stand-in was playing for
when it ended share last place, everyone else shares the place between. Nobody won: everyone
shares one place (a draw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from openskill.models import PlackettLuce

MODEL: Final = PlackettLuce()
#: A new player's rating.
START_MU: Final = MODEL.mu
START_SIGMA: Final = MODEL.sigma
#: The shown rating is ``SCALE * mu``.
SCALE: Final = 60

#: The reasons of a game the server ended without a result: nobody won or lost it, and it
#: moves no rating.
NO_RESULT: Final = frozenset({"abandoned", "closed_by_operator"})


@dataclass(frozen=True)
class Rating:
    mu: float = START_MU
    sigma: float = START_SIGMA
    #: When the rating last changed (epoch seconds; 0: never).
    at: float = 0.0
    #: Rated games played (the stored count the once-only write checks).
    games: int = 0

    def live_sigma(self, now: float, per_day: float) -> float:
        """The uncertainty now: it grows with the days since the last rated game,
        ``sqrt(sigma² + per_day² · days)``, and never past a new player's."""
        if not self.at:
            return self.sigma
        days = max(0.0, now - self.at) / 86400
        return min(START_SIGMA, math.sqrt(self.sigma**2 + per_day**2 * days))

    def shown(self) -> int:
        return round(SCALE * self.mu)


def result_of(outcome: dict[str, Any] | None, seat: int, seats: int) -> str:
    """``w`` (among the winners), ``d`` (nobody won) or ``l``; empty for a game the server
    ended (:data:`NO_RESULT`). A one-seat game nobody won was lost to the game itself (Mandala
    solo: Master Yoga won)."""
    if not outcome or outcome.get("reason") in NO_RESULT:
        return ""
    winners = outcome.get("winners") or []
    if not winners:
        return "l" if seats == 1 else "d"
    return "w" if seat in winners else "l"


def places(outcome: dict[str, Any], seats: int, stood_in: frozenset[int]) -> list[int]:
    """Each seat's place (1 best; equal places are ties), as the module's docstring says."""
    winners = set(outcome.get("winners") or [])
    last = set(outcome.get("left") or []) | set(stood_in)
    if not winners:
        return [2 if seat in last else 1 for seat in range(seats)] if last else [1] * seats
    return [1 if s in winners and s not in last else 3 if s in last else 2 for s in range(seats)]


def rated_players(
    rated: bool, seats: list[dict[str, Any]], outcome: dict[str, Any] | None
) -> bool:
    """Whether a finished game with these seats (``player``, ``bot``) is rated at all."""
    if not rated or not outcome or outcome.get("reason") in NO_RESULT:
        return False
    if any(seat.get("bot") or not seat.get("player") for seat in seats):
        return False
    people = [seat["player"] for seat in seats]
    return len(people) >= 2 and len(set(people)) == len(people)


def update(
    before: list[Rating], place: list[int], now: float, per_day: float
) -> list[Rating]:
    """The ratings after a game with these places, each from its live uncertainty."""
    teams = [
        [MODEL.rating(mu=r.mu, sigma=r.live_sigma(now, per_day))] for r in before
    ]
    after = MODEL.rate(teams, ranks=[float(p) for p in place])
    return [
        Rating(team[0].mu, team[0].sigma, now, r.games + 1)
        for team, r in zip(after, before, strict=True)
    ]


def provisional(rating: Rating, now: float, per_day: float, bound: float) -> bool:
    """Whether the rating is still provisional (its live uncertainty above ``bound``)."""
    return rating.games == 0 or rating.live_sigma(now, per_day) > bound
