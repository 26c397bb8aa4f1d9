"""Move shapes: enumeration of legal moves and strict parsing of incoming ones.

Moves (ruling 5, ruling 6):

- ``{"type": "mountain", "mandala": 0|1, "colour": c}`` play one card to a mountain, then draw;
- ``{"type": "field", "mandala": 0|1, "colour": c, "count": n}`` play n cards to your field;
- ``{"type": "discard", "colour": c, "count": n}`` discard n cards of one colour, then draw n;
- ``{"type": "choose", "colour": c}`` during a resolution, take a colour from the mountain.

Parsing is separate from legality so that anything malformed is ``bad_move`` and only a
well-formed move the rules forbid is ``illegal_move``.
"""

from __future__ import annotations

from typing import Any

from playhall.games.contract import Move, Rejected, State

from .board import may_go_to_field, may_go_to_mountain, mountain_colours
from .cards import COLOURS, colours_in, total

HAND_LIMIT = 8
DRAW_AFTER_MOUNTAIN = 3

SHAPES: dict[str, tuple[str, ...]] = {
    "mountain": ("mandala", "colour"),
    "field": ("mandala", "colour", "count"),
    "discard": ("colour", "count"),
    "choose": ("colour",),
}


def _is_int(value: Any) -> bool:
    return type(value) is int


def parse(move: Any) -> Move:
    """Check the shape of a move; raise ``bad_move`` for anything malformed."""
    if not isinstance(move, dict) or not isinstance(move.get("type"), str):
        raise Rejected("bad_move", "a move is a dict with a string 'type'")
    kind = move["type"]
    if kind not in SHAPES:
        raise Rejected("bad_move", f"unknown move type {kind!r}")
    expected = {"type", *SHAPES[kind]}
    if set(move) != expected:
        raise Rejected("bad_move", f"a {kind!r} move has exactly the fields {sorted(expected)}")
    if move["colour"] not in COLOURS:
        raise Rejected("bad_move", f"colour must be one of {', '.join(COLOURS)}")
    if "mandala" in move and not (_is_int(move["mandala"]) and move["mandala"] in (0, 1)):
        raise Rejected("bad_move", "mandala must be 0 (left) or 1 (right)")
    if "count" in move and not (_is_int(move["count"]) and move["count"] >= 1):
        raise Rejected("bad_move", "count must be a positive int")
    return {key: move[key] for key in ("type", *SHAPES[kind])}


def action_moves(state: State, player: int) -> list[Move]:
    """Every action open to ``player`` on their turn (ruling 5 with the rule of colour)."""
    hand = state["players"][player]["hand"]
    size = total(hand)
    held = colours_in(hand)
    moves: list[Move] = []
    for index, mandala in enumerate(state["mandalas"]):
        for colour in held:
            if may_go_to_mountain(mandala, colour):
                moves.append({"type": "mountain", "mandala": index, "colour": colour})
    for index, mandala in enumerate(state["mandalas"]):
        for colour in held:
            if may_go_to_field(mandala, player, colour):
                for count in range(1, min(hand[colour], size - 1) + 1):
                    moves.append(
                        {"type": "field", "mandala": index, "colour": colour, "count": count}
                    )
    for colour in held:
        for count in range(1, hand[colour] + 1):
            moves.append({"type": "discard", "colour": colour, "count": count})
    return moves


def choice_moves(state: State) -> list[Move]:
    """The chooser may take any colour left in the resolving mountain."""
    index = state["resolution"]["mandala"]
    return [{"type": "choose", "colour": c} for c in mountain_colours(state["mandalas"][index])]


def check_action(state: State, player: int, move: Move) -> None:
    """Explain why a well-formed action is illegal, or return if it is legal."""
    kind = move["type"]
    if kind == "choose":
        raise Rejected("illegal_move", "there is no mandala to resolve now")
    hand = state["players"][player]["hand"]
    colour = move["colour"]
    count = move.get("count", 1)
    if hand[colour] < count:
        raise Rejected("illegal_move", f"you do not hold {count} {colour} card(s)")
    if kind == "mountain":
        if not may_go_to_mountain(state["mandalas"][move["mandala"]], colour):
            raise Rejected("illegal_move", f"rule of colour: {colour} is in a field there")
    elif kind == "field":
        if not may_go_to_field(state["mandalas"][move["mandala"]], player, colour):
            raise Rejected(
                "illegal_move",
                f"rule of colour: {colour} is in that mountain or your opponent's field",
            )
        if total(hand) - count < 1:
            raise Rejected("illegal_move", "you must keep at least one card in hand")


def check_choice(state: State, move: Move) -> None:
    if move["type"] != "choose":
        raise Rejected("illegal_move", "a mandala is being resolved: choose a colour")
    if move["colour"] not in mountain_colours(state["mandalas"][state["resolution"]["mandala"]]):
        raise Rejected("illegal_move", f"there is no {move['colour']} in that mountain")
