"""The games this server offers, found by looking, not by listing.

Two places are looked in:

- every package under :mod:`playhall.games` that exposes a module-level ``GAME`` (an instance
  of :class:`playhall.games.contract.Game`), the built-in games;
- every entry point of the group ``playhall.games`` (:data:`ENTRY_POINT_GROUP`) of every
  installed distribution: ``pip install my-game`` makes a game available. The entry point's
  name is the game's id and its value names the ``Game`` instance (``my_game:GAME``) or a module
  exposing ``GAME``. The built-in games declare theirs too, so they are found the same way
  once installed; a built-in found both ways is one game.

A plugin may ship its own browser renderer and rules page in its package (``web/<id>.js``,
``rules/<id>.md``; :func:`plugin_packages` says where). A plugin that fails to load (its import
raises, it names no ``Game``, its id is not one) is left out and reported with its distribution
and the reason (a ``game_load_failed`` log line): the server starts with the others. Two
different games claiming one id is :class:`GameConflict`, naming both: the server does not
start.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from types import ModuleType

from playhall import games, log
from playhall.games.contract import Game

logger = log.get("playhall.catalog")

#: The entry point group a distribution declares its games in.
ENTRY_POINT_GROUP = "playhall.games"
#: What a game id may be: it names the game on the wire, in Redis, in URLs and in module paths
#: (the browser's ``app/games/<id>.js``, the terminal's ``playhall_client.render.<id>``).
GAME_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


class GameConflict(RuntimeError):
    """Two different games claim one id."""


@dataclass(frozen=True)
class Found:
    """A game and where it came from: ``source`` says it for people (``built-in
    playhall.games.mantis``, ``my-game 1.0 (entry point my_game = my_game:GAME)``);
    ``module`` is the module that holds its ``GAME``."""

    game: Game
    source: str
    module: str
    built_in: bool = False


@dataclass(frozen=True)
class LoadFailure:
    """A game that could not be loaded: its distribution, its entry point and why."""

    package: str
    entry_point: str
    reason: str


def game_of(module: ModuleType | object) -> Game | None:
    """The game an entry point or a module names: a ``Game`` itself, or a module's ``GAME``."""
    if isinstance(module, Game):
        return module
    game = getattr(module, "GAME", None) if isinstance(module, ModuleType) else None
    return game if isinstance(game, Game) else None


def check_id(game: Game) -> str | None:
    """Why ``game``'s id cannot be used, or None when it can."""
    game_id = getattr(game, "id", None)
    if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
        return f"its id {game_id!r} is not a letter or _ then up to 39 letters, digits or _"
    return None


def built_in() -> list[Found]:
    """The games of the packages under :mod:`playhall.games`."""
    found = []
    for info in pkgutil.iter_modules(games.__path__):
        if info.ispkg:
            name = f"{games.__name__}.{info.name}"
            game = game_of(importlib.import_module(name))
            if game is not None:
                found.append(Found(game, f"built-in {name}", name, built_in=True))
    return found


def refusal(game: Game | None, name: str) -> str | None:
    """Why the game an entry point called ``name`` loaded cannot be offered, or None."""
    if game is None:
        return "it names no playhall.games.contract.Game instance"
    reason = check_id(game)
    if reason is None and game.id != name:
        reason = f"the entry point is named {name!r} but the game's id is {game.id!r}"
    return reason


def plugins() -> tuple[list[Found], list[LoadFailure]]:
    """The games the installed distributions declare, and the ones that failed to load.
    Importing a plugin runs its code: any exception it raises is a failure of that plugin
    alone."""
    found: list[Found] = []
    failures: list[LoadFailure] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        package = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "?"
        declared = f"{ep.name} = {ep.value}"
        try:
            game = game_of(ep.load())
        except Exception as exc:  # a plugin's import may raise anything; it is reported
            failures.append(LoadFailure(package, declared, f"import failed: {exc!r}"))
            continue
        reason = refusal(game, ep.name)
        if reason is not None:
            failures.append(LoadFailure(package, declared, reason))
        else:
            assert game is not None
            found.append(Found(game, f"{package} (entry point {declared})", ep.module))
    return found, failures


def merge(found: list[Found]) -> dict[str, Found]:
    """One game per id, sorted by id; the same game found twice (a built-in also declared as
    an entry point) is one. Raises :class:`GameConflict` naming both sources otherwise."""
    by_id: dict[str, Found] = {}
    for one in found:
        other = by_id.get(one.game.id)
        if other is None:
            by_id[one.game.id] = one
        elif other.game is not one.game:
            raise GameConflict(
                f"two games claim the id {one.game.id!r}: {other.source} and {one.source}"
            )
    return dict(sorted(by_id.items()))


@cache
def catalog() -> dict[str, Found]:
    """Every game this server offers, loaded once (the first call reports failed plugins)."""
    found, failures = plugins()
    for failure in failures:
        logger.error(
            "game_load_failed",
            package=failure.package,
            entry_point=failure.entry_point,
            reason=failure.reason,
        )
    return merge([*built_in(), *found])


def plugin_packages() -> dict[str, str]:
    """Each plugin game's id and the top-level package that holds it: where its own files are
    (``web/<id>.js``, ``rules/<id>.md``: :mod:`playhall.net.web`, :mod:`playhall.net.rules`)."""
    return {
        game_id: found.module.partition(".")[0]
        for game_id, found in catalog().items()
        if not found.built_in
    }


@cache
def all_games() -> dict[str, Game]:
    return {game_id: found.game for game_id, found in catalog().items()}


def get_game(game_id: str) -> Game | None:
    return all_games().get(game_id)
