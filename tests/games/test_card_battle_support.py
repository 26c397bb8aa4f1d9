"""Helpers shared by the Card Battle tests (no tests here): building decks, battle states with
hand-built fields, and running battles to the end while keeping every step's events."""

from __future__ import annotations

from typing import Any

from playhall.games.card_battle import GAME
from playhall.games.card_battle.cards import DECK_SIZE, make_card
from playhall.games.contract import Applied, State


def deck_move(cards: list[str], deck_type: str = "hardy",
              strategy: str = "kill-shot") -> dict[str, Any]:
    """A submit_deck move."""
    return {"type": "submit_deck", "cards": cards, "deck_type": deck_type, "strategy": strategy}


def fill_deck(*head: str, rest: str = "knight") -> list[str]:
    """A 20-card deck that starts with ``head`` and is padded with ``rest``."""
    return [*head, *([rest] * (DECK_SIZE - len(head)))]


def new_game(delay: int = 0, seed: int = 1) -> State:
    return GAME.setup(2, GAME.normalize_options({"turn_delay_ms": delay}), seed)


def start_battle(move0: dict[str, Any], move1: dict[str, Any], seed: int = 1,
                 delay: int = 0) -> State:
    """Both seats submit; returns the state at the start of the battle (turn 0)."""
    state = new_game(delay, seed)
    state = GAME.apply(state, 0, move0).state
    state = GAME.apply(state, 1, move1).state
    assert state["phase"] == "battle"
    return state


def card(name: str, deck_type: str = "hardy", card_id: int = 0, *, hp: int | None = None,
         active: bool = True, attacked: bool = False) -> dict[str, Any]:
    """A field card as the engine builds it, with optional overrides."""
    c = make_card(name, card_id, deck_type)
    if hp is not None:
        c["hp"] = hp
    c["active"] = active
    c["attacked"] = attacked
    return c


def battle_state(fields: list[list[dict[str, Any]]], *, strategies: tuple[str, str] = (
        "kill-shot", "kill-shot"), deck_types: tuple[str, str] = ("hardy", "hardy"),
        hp: tuple[int, int] = (200, 200), drawn: tuple[int, int] = (DECK_SIZE, DECK_SIZE),
        rng: int | None = None, decks: tuple[list[str], list[str]] | None = None) -> State:
    """A battle-phase state with the given fields. By default both decks are already drawn
    out, so a turn is only its attack phase on exactly these fields."""
    cards = decks or (fill_deck(), fill_deck())
    state = start_battle(deck_move(cards[0], deck_types[0], strategies[0]),
                         deck_move(cards[1], deck_types[1], strategies[1]))
    for seat in range(2):
        player = state["players"][seat]
        player["field"] = fields[seat]
        player["hp"] = hp[seat]
        player["next"] = drawn[seat]
    if rng is not None:
        state["rng"] = rng
    return state


def turn(state: State) -> Applied:
    """Play one automatic battle turn."""
    assert GAME.auto_delay(state) is not None
    return GAME.apply_auto(state)


def run_battle(state: State, limit: int = 500) -> list[Applied]:
    """All remaining turns, each step's result kept."""
    steps: list[Applied] = []
    while GAME.outcome(state) is None:
        assert len(steps) < limit, "battle did not end"
        result = turn(state)
        steps.append(result)
        state = result.state
    return steps


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def field_ids(state: State, seat: int) -> list[int]:
    return [c["id"] for c in state["players"][seat]["field"]]
