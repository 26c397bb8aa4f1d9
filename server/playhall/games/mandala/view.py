"""What one viewer may see (ruling 7): everything public, plus the viewer's own hand and cup.

Hidden piles show as counts. Master Yoga's cup is hidden from the human like any opponent's cup
(his choices never depend on it). When the game is over every cup is revealed, as at the
table when scores are counted; hands and the deck stay hidden.
"""

from __future__ import annotations

from typing import Any

from playhall.games.contract import State, View, clone

from .cards import COLOURS, total
from .moves import HAND_LIMIT
from .scoring import outcome, score
from .turns import YOGA, acting_player, is_solo


def _viewer(state: State, seat: Any) -> int | None:
    """A seat index, or None for a spectator; anything that is not a seat sees as a spectator."""
    if type(seat) is int and 0 <= seat < state["seats"]:
        return seat
    return None


def _player(state: State, index: int, viewer: int | None, over: bool) -> dict[str, Any]:
    p = state["players"][index]
    yoga = is_solo(state) and index == YOGA
    out: dict[str, Any] = {
        "player": index,
        "seat": None if yoga else index,
        "name": "Master Yoga" if yoga else f"Player {index + 1}",
        "river": list(p["river"]),
        "hand_count": total(p["hand"]),
        "cup_count": total(p["cup"]),
    }
    if index == viewer:
        out["hand"] = dict(p["hand"])
    if index == viewer or over:
        out["cup"] = dict(p["cup"])
        out["score"] = score(p)
    return out


def _mandala(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "mountain": [dict(stack) for stack in m["mountain"]],
        "fields": [dict(f) for f in m["fields"]],
        "field_sizes": [total(f) for f in m["fields"]],
    }


def _turn(state: State) -> int | None:
    """The player whose action or pick it is (1 in solo = Master Yoga)."""
    if state["phase"] == "resolve":
        return int(state["resolution"]["chooser"])
    if state["phase"] in ("action", "yoga"):
        return acting_player(state)
    return None


def build_view(state: State, seat: Any, to_act: list[int]) -> View:
    viewer = _viewer(state, seat)
    over = state["phase"] == "over"
    result = outcome(state)
    discard = {colour: 0 for colour in COLOURS}
    for card in state["discard"]:
        discard[card] += 1
    return {
        "mode": state["mode"],
        "yoga_rule": state["yoga"] if is_solo(state) else None,
        "you": viewer,
        "colours": list(COLOURS),
        "phase": state["phase"],
        "turn": _turn(state),
        "to_act": list(to_act),
        "yoga_next": ("left", "right")[state["slot"] - 1]
        if is_solo(state) and state["phase"] == "yoga"
        else None,
        "players": [_player(state, i, viewer, over) for i in range(len(state["players"]))],
        "mandalas": [_mandala(m) for m in state["mandalas"]],
        "deck_count": len(state["deck"]),
        "discard_count": len(state["discard"]),
        "discard": discard,
        "reshuffled": state["reshuffled"],
        "resolution": dict(state["resolution"]) if state["resolution"] else None,
        "hand_limit": HAND_LIMIT,
        "last": clone(state["last"]),
        "outcome": result.as_dict() if result else None,
    }
