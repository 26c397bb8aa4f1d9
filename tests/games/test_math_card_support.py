"""Helpers for the Math Magic Card tests: hand-built states and boards (no tests here)."""

from __future__ import annotations

from typing import Any

from playhall.games.contract import Applied, Move, State
from playhall.games.math_card import GAME
from playhall.games.math_card.decks import READY_DECKS

FILLER = "000005"  # Number Two: no effect, a safe card to pad decks and hands with


def started(seed: int = 1, decks: tuple[str, str] = ("counting", "logic")) -> State:
    """A real game just after both seats picked a ready-made deck."""
    state = GAME.setup(2, {}, seed)
    for seat in (0, 1):
        state = GAME.apply(state, seat, {"type": "pick_deck", "deck": decks[seat]}).state
    return state


def action_state(hands: tuple[list[str], list[str]] = ([], []), seat: int = 0, first: int = 0,
                 decks: tuple[list[str], list[str]] | None = None, number: int = 3) -> State:
    """A state in ``seat``'s action phase with an empty field and the given hands/decks."""
    state = GAME.setup(2, {}, 7)
    decks = decks or ([FILLER] * 30, [FILLER] * 30)
    for s in (0, 1):
        p = state["players"][s]
        p["decklist"] = sorted(READY_DECKS["counting"])
        p["hand"] = list(hands[s])
        p["deck"] = list(decks[s])
    state["first"] = first
    state["phase"] = "action"
    state["turn"] = {"seat": seat, "number": number, "value_actions": 0, "value_limit": 1,
                     "operator_used": False,
                     "asserted": {"private": False, "left": False, "right": False},
                     "public_value": False, "public_operator": False}
    return state


def put(state: State, lane: int, slot: int, card: str, owner: int) -> None:
    state["lanes"][lane][slot] = {"card": card, "owner": owner}


def put_function(state: State, lane: int, slot: int, card: str, owner: int) -> None:
    state["lanes"][lane][slot] = {"card": card, "owner": owner}
    state["lanes"][lane][slot + 1] = {"card": card, "owner": owner, "part": "value"}


def fill_lane(state: State, lane: int, cards: list[str | None], owner: int) -> None:
    for slot, cid in enumerate(cards):
        state["lanes"][lane][slot] = None if cid is None else {"card": cid, "owner": owner}


def add_assertion(state: State, area: str, card: str, owner: int,
                  under: str | None = None) -> None:
    entry: dict[str, Any] = {"card": card, "owner": owner}
    if under is not None:
        entry["under"] = under
    state["areas"][area].append(entry)


def board(**lanes: list[str | None]) -> dict[str, Any]:
    """A bare board for scoring: ``board(l0=[...], l2=[...])`` with owners by lane side."""
    out: dict[str, Any] = {"lanes": [[None] * 5 for _ in range(5)],
                           "areas": {"left": [], "right": [], "private0": [], "private1": []}}
    for name, cards in lanes.items():
        lane = int(name[1:])
        owner = 0 if lane <= 2 else 1
        fill_lane(out, lane, cards, owner)
    return out


def play(state: State, seat: int, move: Move) -> State:
    return GAME.apply(state, seat, move).state


def applied(state: State, seat: int, move: Move) -> Applied:
    return GAME.apply(state, seat, move)


def types(result: Applied) -> list[str]:
    return [e["type"] for e in result.events]


def count_cards(state: State, seat: int) -> int:
    """Every card ``seat`` owns, wherever it is (conservation)."""
    p = state["players"][seat]
    total = len(p["deck"]) + len(p["hand"]) + len(p["discard"])
    for row in state["lanes"]:
        total += sum(1 for e in row if e is not None and e["owner"] == seat and "part" not in e)
    for entries in state["areas"].values():
        for e in entries:
            if e["owner"] == seat:
                total += 2 if "under" in e else 1
    total += len(state["legends"][seat]) + len(state["rainbow"][seat])
    return total
