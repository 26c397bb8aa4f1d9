"""Text rendering of room views for the terminal client.

A game may ship ``playhall_client.render.<game_id>`` with functions working on the game's view
(the room view's ``state``) alone; the client knows no rules:

- ``render(view: dict, seat: int | None) -> str``: the board as text;
- ``move_label(move: dict, view: dict | None = None) -> str``: a short human label for a legal
  move (``view`` lets it name cards rather than print ids);
- optionally ``outcome_text(view: dict) -> str``: who won, for games whose outcome a client
  cannot read from ``winners`` alone (Mandala solo: Master Yoga has no seat);
- optionally ``decks_text(view: dict) -> str | None``: the ready-made decks' contents;
- optionally ``describe(event: dict, view: dict) -> str | None``: one line for one of the game's
  events (None: the event's fields are shown as they are).

Seats are numbered from 1 wherever a person reads them: the wire's seat 0 is "seat 1"
(:func:`seat_label`; the game modules, which import only the standard library, write
``seat {n + 1}``). Only the wire, and JSON a person types for a move, keep the protocol's 0-based
seats.

Games without a module are shown by the generic renderer below. A module that fails to import
raises :class:`RendererError` here, so the caller can say so instead of silently falling back.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class RendererError(Exception):
    """A game's renderer module exists but could not be imported."""


def _module(game_id: str) -> ModuleType | None:
    name = f"{__name__}.{game_id.replace('-', '_')}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None  # this game has no renderer
        raise RendererError(f"the {game_id} renderer cannot be imported: {exc}") from exc
    except Exception as exc:
        raise RendererError(f"the {game_id} renderer cannot be imported: {exc!r}") from exc


def seat_label(seat: int) -> str:
    """A seat as people count: the wire's seat 0 is "seat 1"."""
    return f"seat {seat + 1}"


def render(game_id: str, view: dict[str, Any], seat: int | None) -> str:
    module = _module(game_id)
    if module is not None:
        return str(module.render(view, seat))
    return generic(view)


def move_label(game_id: str, move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    module = _module(game_id)
    if module is not None:
        return str(module.move_label(move, view))
    return " ".join(f"{k}={v}" for k, v in move.items())


def outcome_text(game_id: str, view: dict[str, Any]) -> str | None:
    """The game's own reading of its outcome, or None (then ``winners`` says it all)."""
    module = _module(game_id)
    reader = getattr(module, "outcome_text", None)
    return None if reader is None else str(reader(view))


def describe(game_id: str, event: dict[str, Any], view: dict[str, Any]) -> str | None:
    """The game's own line for one of its events, or None when it has none for it."""
    module = _module(game_id)
    describer = getattr(module, "describe", None)
    if describer is None:
        return None
    text = describer(event, view)
    return None if text is None else str(text)


def decks_text(game_id: str, view: dict[str, Any]) -> str | None:
    """The ready-made decks' contents as text, or None when the game has none."""
    module = _module(game_id)
    lister = getattr(module, "decks_text", None)
    if lister is not None:
        text = lister(view)
        return None if text is None else str(text)
    decks = view.get("ready_decks")
    return None if not decks else "Ready-made decks:\n" + generic(decks, 1)


def generic(data: Any, indent: int = 0) -> str:
    """An indented outline of any plain data."""
    pad = "  " * indent
    if isinstance(data, dict):
        lines = []
        for key, value in data.items():
            if isinstance(value, dict | list) and value:
                lines.append(f"{pad}{key}:")
                lines.append(generic(value, indent + 1))
            else:
                lines.append(f"{pad}{key}: {value}")
        return "\n".join(lines)
    if isinstance(data, list):
        if all(not isinstance(v, dict | list) for v in data):
            return pad + ", ".join(str(v) for v in data)
        return "\n".join(generic(v, indent) for v in data)
    return f"{pad}{data}"
