"""Text rendering of room views for the terminal client.

A game may ship ``playhall_client.render.<game_id>`` with two functions working on the view
alone (the client knows no rules):

- ``render(view: dict, seat: int | None) -> str``: the board as text;
- ``move_label(move: dict) -> str``: a short human label for a legal move.

Games without one are shown by the generic renderer below.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def _module(game_id: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"{__name__}.{game_id.replace('-', '_')}")
    except ModuleNotFoundError:
        return None


def render(game_id: str, view: dict[str, Any], seat: int | None) -> str:
    module = _module(game_id)
    if module is not None:
        return str(module.render(view, seat))
    return generic(view)


def move_label(game_id: str, move: dict[str, Any]) -> str:
    module = _module(game_id)
    if module is not None:
        return str(module.move_label(move))
    return " ".join(f"{k}={v}" for k, v in move.items())


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
