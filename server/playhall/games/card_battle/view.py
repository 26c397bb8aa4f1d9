"""What one viewer may see of a Card Battle state.

The only secret in this game is a submitted deck before both are in (ruling 3): until then a
seat sees its own deck and only a yes/no for the other's. Once the battle starts, everything is
public (decks in order, fields, HP, mana, dice). The RNG state is never shown: it would let a
client predict the dice.
"""

from __future__ import annotations

from typing import Any

from playhall.games.contract import clone

from .cards import (
    CARD_TYPES,
    DECK_SIZE,
    DECK_TYPES,
    FIELD_SLOTS,
    READY_DECKS,
    START_HP,
    STRATEGIES,
    mana_for_turn,
)

State = dict[str, Any]
Event = dict[str, Any]

#: Static facts a client needs to build a deck and draw cards; the same in every view.
RULES: dict[str, Any] = {
    "deck_size": DECK_SIZE,
    "field_slots": FIELD_SLOTS,
    "start_hp": START_HP,
    "card_types": CARD_TYPES,
    "deck_types": DECK_TYPES,
    "strategies": list(STRATEGIES),
    "ready_decks": READY_DECKS,
}


def visible(event: Event, seat: int | None) -> bool:
    """Whether ``seat`` may see ``event`` (no ``visible_to``: everybody)."""
    allowed = event.get("visible_to")
    return allowed is None or seat in allowed


def _player_view(state: State, owner: int, viewer: int | None) -> dict[str, Any]:
    player = state["players"][owner]
    deck = player["deck"]
    shown = deck is not None and (state["phase"] != "deck" or viewer == owner)
    return {
        "seat": owner,
        "hp": player["hp"],
        "mana": player["mana"],
        "max_mana": player["max_mana"],
        "submitted": deck is not None,
        "deck": {k: (list(v) if isinstance(v, list) else v) for k, v in deck.items()}
        if shown
        else None,
        "drawn": player["next"],
        "deck_left": DECK_SIZE - player["next"],
        "field": [dict(card) for card in player["field"]],
    }


def make_view(state: State, seat: int | None, to_act: list[int]) -> dict[str, Any]:
    """The view for ``seat`` (``None``: spectator)."""
    return {
        "game": "card_battle",
        "phase": state["phase"],
        "turn": state["turn"],
        "next_turn_mana": mana_for_turn(state["turn"] + 1),
        "seat": seat,
        "to_act": to_act,
        "turn_delay_ms": state["turn_delay_ms"],
        "players": [_player_view(state, owner, seat) for owner in range(2)],
        "result": dict(state["result"]) if state["result"] is not None else None,
        "last_events": [
            {k: v for k, v in e.items() if k != "visible_to"}
            for e in state["last_events"]
            if visible(e, seat)
        ],
        "rules": clone(RULES),
    }
