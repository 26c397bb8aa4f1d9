"""The tables every game is played at by the suites that play all of them (:func:`quick_cases`;
each game names its own, ``Game.quick_tables``).

The contract's checks themselves live in the server package, :mod:`playhall.games.conformance`,
so that ``playhall check-game`` runs the same ones for a plugin's author; the helpers the games'
own tests use (``encode``, ``step``, ``play_random_game``, ``replay``) are imported from there.
"""

from __future__ import annotations

from typing import Any

import pytest

from playhall.catalog import all_games
from playhall.games.conformance import encode, play_random_game, replay, step, tables

__all__ = ["encode", "play_random_game", "quick_cases", "replay", "step"]


def quick_cases() -> list[Any]:
    """``(game id, seats, options)`` for every registered game and each of its tables, as
    pytest parameters named ``<game>-<seats>`` (and a number when a game has two of a size)."""
    cases = []
    for game in all_games().values():
        seen: dict[int, int] = {}
        for seats, options in tables(game):
            seen[seats] = seen.get(seats, 0) + 1
            name = f"{game.id}-{seats}" + ("" if seen[seats] == 1 else f"-{seen[seats]}")
            cases.append(pytest.param(game.id, seats, options, id=name))
    return cases
