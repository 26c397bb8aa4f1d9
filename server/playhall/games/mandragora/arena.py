"""Whole games between the bot and a uniformly random player, for the benchmark
(``bench/mandragora_bot.py``) and the bot's test, so both measure exactly the same thing.

Pure like the rest of the engine: the random player draws from :class:`Rng`, so a match is
reproducible from its index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from playhall.games.rng import Rng

from . import bot
from .engine import MandragoraGame

_GAME = MandragoraGame()


@dataclass
class MatchResult:
    """Tally of a series of games, from the bot's side."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    think_seconds: list[float] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


Clock = Callable[[], float]


def play_one(
    index: int, budget: int = bot.NODE_BUDGET, timing: tuple[Clock, list[float]] | None = None
) -> int:
    """Play game ``index``: the bot sits in seat ``index % 2`` and moves first in games 0, 1,
    4, 5, 8, 9, ..., so every block of four games has the bot in each seat, once first and
    once second. Returns +1 for a bot win, 0 a draw, -1 a loss.

    ``timing`` = (clock, list): the benchmark passes ``time.perf_counter`` to collect the
    bot's wall time per decision. The engine never reads a clock itself.
    """
    bot_seat = index % 2
    first = bot_seat if (index // 2) % 2 == 0 else 1 - bot_seat
    options = _GAME.normalize_options({"first": first})
    state = _GAME.setup(2, options, seed=index)
    rng = Rng(index ^ 0xA5A5)
    while _GAME.outcome(state) is None:
        seat = _GAME.to_act(state)[0]
        moves = _GAME.legal_moves(state, seat)
        if seat == bot_seat:
            started = timing[0]() if timing else 0.0
            move = bot.choose(
                _GAME.view(state, seat),
                seat,
                moves,
                seed=index * 1000 + state["moves"],
                budget=budget,
            )
            if timing:
                timing[1].append(timing[0]() - started)
        else:
            move = rng.choice(moves)
        state = _GAME.apply(state, seat, move).state
    outcome = _GAME.outcome(state)
    assert outcome is not None
    if not outcome.winners:
        return 0
    return 1 if outcome.winners == [bot_seat] else -1


def play_many(games: int, budget: int = bot.NODE_BUDGET, clock: Clock | None = None) -> MatchResult:
    """Games ``0 .. games-1`` (see :func:`play_one`); think times are kept if a clock is given."""
    result = MatchResult()
    for index in range(games):
        score = play_one(index, budget, (clock, result.think_seconds) if clock else None)
        result.games += 1
        if score > 0:
            result.wins += 1
        elif score < 0:
            result.losses += 1
        else:
            result.draws += 1
    return result
