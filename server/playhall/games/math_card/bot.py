"""Placeholder until the heuristic bot lands: first legal non-resign move."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def choose(view: dict[str, Any], seat: int, moves: Sequence[dict[str, Any]], seed: int
           ) -> dict[str, Any]:
    for m in moves:
        if m["type"] != "resign" and not m.get("template"):
            return dict(m)
    return dict(moves[0])
