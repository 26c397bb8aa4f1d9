"""The Card Battle engine: the hidden deck step (moves), then the battle as automatic steps.

Phases: ``"deck"`` (both seats act, each once: submit or pick a deck), ``"battle"`` (nobody
acts; each automatic step plays one turn, paced by the ``turn_delay_ms`` room option), and
``"over"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall.games.contract import (
    Applied,
    Game,
    Move,
    Option,
    Options,
    Outcome,
    Rejected,
    State,
    View,
    clone,
)
from playhall.games.rng import RngState, seed_state

from .battle import play_turn
from .bot import choose_deck
from .cards import READY_DECKS, START_HP, ready_deck, validate_deck
from .view import make_view

#: The exact keys each move type carries (anything else is malformed).
_MOVE_KEYS: dict[str, frozenset[str]] = {
    "submit_deck": frozenset({"type", "cards", "deck_type", "strategy"}),
    "pick_deck": frozenset({"type", "deck"}),
}

#: Listed in legal_moves; the view's ``rules`` block says what may be filled in.
SUBMIT_TEMPLATE: Move = {
    "type": "submit_deck",
    "template": True,
    "cards": [],
    "deck_type": "",
    "strategy": "",
}


def _check_shape(move: Any) -> str:
    """Return the move type, or refuse a malformed move with ``bad_move``."""
    if not isinstance(move, dict):
        raise Rejected("bad_move", "a move must be a dict")
    kind = move.get("type")
    if not isinstance(kind, str) or kind not in _MOVE_KEYS:
        raise Rejected(
            "bad_move", f"unknown move type {str(kind)[:30]!r} (expected submit_deck or pick_deck)"
        )
    keys = set(move)
    if keys != _MOVE_KEYS[kind]:
        missing = sorted(_MOVE_KEYS[kind] - keys, key=str)
        extra = sorted(str(k)[:20] for k in keys - _MOVE_KEYS[kind])[:10]
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unexpected {', '.join(extra)}"] if extra else []
        )
        raise Rejected("bad_move", f"{kind}: {'; '.join(parts)}")
    return kind


class CardBattle(Game):
    """Card Battle for exactly two seats."""

    id = "card_battle"
    title = "Card Battle"
    min_seats = 2
    max_seats = 2
    quick_tables = ((2, {"turn_delay_ms": 0}),)
    moves_off_turn: list[Move] | None = []  # only a seat still choosing its deck moves
    options: Sequence[Option] = (
        Option(
            "turn_delay_ms",
            1500,
            "pause between battle turns so people can watch (0: all at once)",
            minimum=0,
            maximum=60000,
            label="pause between turns",
            unit="ms",
        ),
    )

    def setup(self, seats: int, options: Options, seed: bytes | int) -> State:
        if seats != 2:
            raise Rejected("bad_option", "Card Battle is for exactly 2 seats")
        player: dict[str, Any] = {
            "deck": None,
            "next": 0,
            "hp": START_HP,
            "mana": 0,
            "max_mana": 0,
            "field": [],
        }
        return {
            "phase": "deck",
            "turn": 0,
            "turn_delay_ms": options["turn_delay_ms"],
            "rng": seed_state(seed),
            "players": [clone(player), clone(player)],
            "result": None,
            "last_events": [],
        }

    def to_act(self, state: State) -> list[int]:
        if state["phase"] != "deck":
            return []
        return [seat for seat, p in enumerate(state["players"]) if p["deck"] is None]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat not in self.to_act(state):
            return []
        return [dict(SUBMIT_TEMPLATE)] + [
            {"type": "pick_deck", "deck": name} for name in READY_DECKS
        ]

    def apply(self, state: State, seat: int, move: Any) -> Applied:
        if state["phase"] == "over":
            raise Rejected("game_over", "the battle is over")
        kind = _check_shape(move)
        if state["phase"] != "deck":
            raise Rejected("not_your_turn", "the battle runs by itself; no moves are taken")
        if seat not in self.to_act(state):
            raise Rejected("not_your_turn", f"seat {seat!r} has no deck to submit")
        if kind == "pick_deck":
            name = move["deck"]
            if not isinstance(name, str):
                raise Rejected("bad_move", "'deck' must be a string")
            if name not in READY_DECKS:
                raise Rejected(
                    "bad_deck",
                    f"unknown ready-made deck {name[:20]!r} (choose {', '.join(READY_DECKS)})",
                )
            deck = ready_deck(name)
        else:
            deck = validate_deck(move["cards"], move["deck_type"], move["strategy"])
        new = clone(state)
        new["players"][seat]["deck"] = deck
        events: list[dict[str, Any]] = [
            {"type": "deck_submitted", "seat": seat},
            {"type": "deck_accepted", "seat": seat, "deck": clone(deck), "visible_to": [seat]},
        ]
        if all(p["deck"] is not None for p in new["players"]):
            new["phase"] = "battle"
            events.append(
                {"type": "decks_revealed", "decks": [clone(p["deck"]) for p in new["players"]]}
            )
        new["last_events"] = events
        return Applied(new, clone(events))

    def auto_delay(self, state: State) -> float | None:
        if state["phase"] != "battle":
            return None
        return float(state["turn_delay_ms"]) / 1000.0

    def apply_auto(self, state: State) -> Applied:
        if state["phase"] != "battle":
            raise Rejected("illegal_move", "no battle turn is pending")
        new = clone(state)
        events = play_turn(new)
        new["last_events"] = events
        return Applied(new, clone(events))

    def view(self, state: State, seat: int | None) -> View:
        return make_view(state, seat, self.to_act(state))

    def outcome(self, state: State) -> Outcome | None:
        result = state["result"]
        if result is None:
            return None
        left = tuple(result.get("left", ()))
        return Outcome(list(result["winners"]), list(result["scores"]), result["reason"], left)

    def ended(self, state: State, left: int, reason: str) -> State:
        """A player leaves (while choosing decks or during the battle): the other wins."""
        new = clone(state)
        new["phase"] = "over"
        hps = [p["hp"] for p in new["players"]]
        new["result"] = {"winners": [1 - left], "scores": hps, "reason": reason, "left": [left]}
        return new

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        return choose_deck(moves, seed)
