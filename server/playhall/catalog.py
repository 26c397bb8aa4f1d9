"""The games this server offers, found by looking, not by listing.

Every package under :mod:`playhall.games` that exposes a module-level ``GAME`` (an instance of
:class:`playhall.games.contract.Game`) is offered. Adding a game is adding a package: nothing in
the server names a game.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from playhall import games
from playhall.games.contract import Game
from playhall.rooms import clocks


@cache
def all_games() -> dict[str, Game]:
    found: dict[str, Game] = {}
    for info in pkgutil.iter_modules(games.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{games.__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            if game.id in found:
                raise RuntimeError(f"two games claim the id {game.id!r}")
            found[game.id] = game
    return dict(sorted(found.items()))


def get_game(game_id: str) -> Game | None:
    return all_games().get(game_id)


def describe(game: Game) -> dict[str, Any]:
    """What the lobby's ``games`` shows of ``game``: its own options, then the clock's, which
    every game accepts (``rooms.clocks.OPTIONS``)."""
    out = game.describe()
    out["options"] = [*out["options"], *(option.describe() for option in clocks.OPTIONS)]
    return out
