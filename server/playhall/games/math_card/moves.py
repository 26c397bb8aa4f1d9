"""Move shapes: what fields each move type carries, checked before any rule is looked at.

A malformed move (unknown type, missing or extra field, wrong type, unknown card id) is refused
with ``bad_move`` here, so the rule code below only ever sees well-formed moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playhall.games.contract import Rejected

from .board import LANES, valid_calc_position, valid_position
from .cards import CARDS

Check = Callable[[Any], bool]


def _card(x: Any) -> bool:
    return isinstance(x, str) and x in CARDS


def _int(x: Any) -> bool:
    return type(x) is int


def _lane(x: Any) -> bool:
    return _int(x) and 0 <= x < LANES


def _cycle(x: Any) -> bool:
    return isinstance(x, list) and len(x) <= 3 and all(valid_position(p) for p in x)


def _str(x: Any) -> bool:
    return isinstance(x, str)


#: type -> (required fields, optional fields)
SHAPES: dict[str, tuple[dict[str, Check], dict[str, Check]]] = {
    "pick_deck": ({"deck": _str}, {}),
    "submit_deck": ({"cards": lambda x: isinstance(x, list)}, {}),
    "set_value": ({"card": _card, "lane": _lane}, {}),
    "set_operator": ({"card": _card, "lane": _lane}, {}),
    "set_function": ({"card": _card, "lane": _lane}, {}),
    "move_value": ({"from": valid_position, "lane": _lane}, {}),
    "assert": (
        {"card": _card, "area": lambda x: x in ("private", "left", "right")},
        {"under": _card},
    ),
    "function_calc": (
        {"card": _card, "input": valid_calc_position, "output": valid_calc_position},
        {},
    ),
    "function_effect": ({"card": _card}, {}),
    "legend": ({"card": _card}, {"replace": lambda x: _int(x) and 0 <= x < 4}),
    "use": ({"card": _card}, {}),
    "end_turn": ({}, {}),
    "choose": ({"card": _card}, {}),
    "decline": ({}, {}),
    "swap": ({"a": valid_position, "b": valid_position}, {}),
    "move_assertion": (
        {
            "area": lambda x: x in ("left", "right"),
            "index": _int,
            "to": lambda x: x in (0, 1) and _int(x),
        },
        {},
    ),
    "rearrange": ({"cycle": _cycle}, {}),
    "resign": ({}, {}),
}


def check_shape(move: Any) -> str:
    """The move's type if it is well formed; otherwise Rejected("bad_move")."""
    if not isinstance(move, dict) or not isinstance(move.get("type"), str):
        raise Rejected("bad_move", "a move is a dict with a string 'type'")
    kind = move["type"]
    if kind not in SHAPES:
        raise Rejected("bad_move", f"unknown move type {kind!r}")
    required, optional = SHAPES[kind]
    for name, ok in required.items():
        if name not in move:
            raise Rejected("bad_move", f"{kind} needs a {name!r} field")
        if not ok(move[name]):
            raise Rejected("bad_move", f"{kind}: bad {name!r}: {move[name]!r}")
    for name, value in move.items():
        if name == "type" or name in required:
            continue
        if name not in optional:
            raise Rejected("bad_move", f"{kind}: unexpected field {name!r}")
        if not optional[name](value):
            raise Rejected("bad_move", f"{kind}: bad {name!r}: {value!r}")
    return kind
