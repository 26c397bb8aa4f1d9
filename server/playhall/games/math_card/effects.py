"""Card effects and the choices they open, keyed by card id (rulings 10-12).

Everything here works on a *working copy* of the state (the engine clones before calling) and
appends to an event list. Triggered choices go into ``state["pending"]``, a queue answered in
order by the seat each names; the options of a choice are computed when it is answered (the
field may have changed since it was opened), and a choice with no possible answer is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

from playhall.games.contract import Rejected
from playhall.games.rng import Rng

from . import board
from .cards import can_be_assertion, can_be_value, card, has_category

State = dict[str, Any]
Events = list[dict[str, Any]]

HAND_LIMIT = 7

# -- small state operations ------------------------------------------------------------------


def player(state: State, seat: int) -> dict[str, Any]:
    found: dict[str, Any] = state["players"][seat]
    return found


def turn_number(state: State) -> int:
    return int(state["turn"]["number"]) if state["turn"] else 0


def draw(state: State, seat: int, count: int, events: Events, from_discard: bool = False) -> int:
    """Draw from the top of the deck (the list's end). ``from_discard`` applies ruling 5: a deck
    of exactly one card when two are due gives that card and the discard pile's top card."""
    me = player(state, seat)
    drawn: list[str] = []
    discard_top = from_discard and count == 2 and len(me["deck"]) == 1
    for _ in range(count):
        if me["deck"]:
            drawn.append(me["deck"].pop())
        elif discard_top and me["discard"]:
            drawn.append(me["discard"].pop())
    me["hand"].extend(drawn)
    if drawn:
        events.append({"type": "draw", "seat": seat, "cards": drawn, "visible_to": [seat]})
        events.append({"type": "draw_count", "seat": seat, "count": len(drawn)})
    return len(drawn)


def take_from_hand(state: State, seat: int, card_id: str) -> None:
    player(state, seat)["hand"].remove(card_id)


def discard(state: State, owner: int, card_id: str, events: Events) -> None:
    """Put a card on top of its owner's discard pile, then run its discard trigger."""
    player(state, owner)["discard"].append(card_id)
    events.append({"type": "discard", "seat": owner, "card": card_id})
    if card_id == "000004":
        _number_zero(state, owner, events)
    elif card_id == "000011":
        open_choice(state, {"kind": "move_assertion", "seat": owner, "source": card_id}, events)


def gain_pvp(state: State, seat: int, amount: int, events: Events) -> None:
    me = player(state, seat)
    me["pvp"] = max(0, me["pvp"] + amount)
    events.append({"type": "pvp", "seat": seat, "change": amount, "pvp": me["pvp"]})


def open_choice(state: State, choice: dict[str, Any], events: Events) -> None:
    state["pending"].append(choice)
    events.append(
        {
            "type": "choice",
            "kind": choice["kind"],
            "seat": choice["seat"],
            "source": choice["source"],
        }
    )


# -- searches -------------------------------------------------------------------------------

SearchFilter = Callable[[str, dict[str, Any]], bool]

SEARCH_FILTERS: dict[str, SearchFilter] = {
    "natural_assertion": lambda c, _: can_be_assertion(c) and has_category(c, "Natural"),
    "assertion": lambda c, _: can_be_assertion(c),
    "value_card": lambda c, _: can_be_value(c),
    "value_n": lambda c, p: can_be_value(c) and card(c)["value"] == p["n"],
}


def search(
    state: State, seat: int, what: str, source: str, events: Events, n: int | None = None
) -> None:
    """Open a deck search (ruling 12), or report that nothing matches."""
    choice: dict[str, Any] = {"kind": "search", "seat": seat, "source": source, "filter": what}
    if n is not None:
        choice["n"] = n
    if search_options(state, choice):
        open_choice(state, choice, events)
    else:
        events.append({"type": "search_failed", "seat": seat, "source": source})


def search_options(state: State, choice: dict[str, Any]) -> list[str]:
    test = SEARCH_FILTERS[choice["filter"]]
    return sorted({c for c in player(state, choice["seat"])["deck"] if test(c, choice)})


# -- triggers -------------------------------------------------------------------------------


def _number_zero(state: State, owner: int, events: Events) -> None:
    """000004: once per turn (per player), search for an assertion card."""
    me = player(state, owner)
    if me["zero_turn"] == turn_number(state):
        return
    me["zero_turn"] = turn_number(state)
    search(state, owner, "assertion", "000004", events)


def on_set_value(state: State, seat: int, card_id: str, events: Events) -> None:
    """ "When set" effects of value cards, then the legend's (project decision: card first)."""
    if card_id == "000001":
        search(state, seat, "natural_assertion", card_id, events)
    elif card_id == "000004":
        _number_zero(state, seat, events)
    elif card_id == "000008" and board.field_count(state) == 5:
        state["turn"]["value_limit"] += 1
        events.append({"type": "extra_value", "seat": seat})
    elif card_id == "000011":
        open_choice(state, {"kind": "move_assertion", "seat": seat, "source": card_id}, events)
    elif card_id == "000012":
        search(state, seat, "value_n", card_id, events, n=1)
    me = player(state, seat)
    if (
        "000023" in state["legends"][seat]
        and has_category(card_id, "Natural")
        and me["induction_turn"] != turn_number(state)
    ):
        me["induction_turn"] = turn_number(state)
        value = card(card_id)["value"]
        assert value is not None
        search(state, seat, "value_n", "000023", events, n=value + 1)


def on_set_operator(state: State, seat: int, card_id: str, events: Events) -> None:
    if card_id == "000002":
        open_choice(state, {"kind": "swap", "seat": seat, "source": card_id}, events)


def on_assert(state: State, seat: int, card_id: str, events: Events) -> None:
    if card_id in ("000003", "000020"):
        category = "Even" if card_id == "000003" else "Odd"
        open_choice(
            state,
            {"kind": "optional_discard", "seat": seat, "source": card_id, "category": category},
            events,
        )
    elif card_id == "000022":
        open_choice(state, {"kind": "rearrange", "seat": seat, "source": card_id}, events)


def function_effect(state: State, seat: int, card_id: str, events: Events) -> None:
    """A function card's printed effect; the card itself is discarded by the caller."""
    if card_id == "100002":
        if draw(state, seat, 1, events) == 0:
            events.append({"type": "no_effect", "seat": seat, "card": card_id})
    elif card_id == "100003":
        search(state, seat, "value_card", card_id, events)


def use_six(state: State, seat: int, events: Events) -> None:
    """000009: discard it; the opponent discards a card of their choice."""
    take_from_hand(state, seat, "000009")
    events.append({"type": "use", "seat": seat, "card": "000009"})
    discard(state, seat, "000009", events)
    open_choice(state, {"kind": "opponent_discard", "seat": 1 - seat, "source": "000009"}, events)


def turn_start(state: State, seat: int, events: Events) -> None:
    """Turn start phase triggers: Euler's Identity (addition) gives 1 PVP per copy."""
    for cid in state["rainbow"][seat]:
        if cid == "100101":
            gain_pvp(state, seat, 1, events)


# -- answering choices ----------------------------------------------------------------------


def _distinct(cards: list[str], test: Callable[[str], bool] = lambda c: True) -> list[str]:
    return sorted({c for c in cards if test(c)})


def answers(state: State, choice: dict[str, Any]) -> list[dict[str, Any]]:
    """Every legal answer to an open choice, computed from the field as it is now."""
    kind = choice["kind"]
    seat = choice["seat"]
    hand = player(state, seat)["hand"]
    if kind == "search":
        return [{"type": "choose", "card": c} for c in search_options(state, choice)]
    if kind in ("opponent_discard", "hand_limit"):
        return [{"type": "choose", "card": c} for c in _distinct(hand)]
    if kind == "optional_discard":
        options = _distinct(hand, lambda c: has_category(c, choice["category"]))
        return [*({"type": "choose", "card": c} for c in options), {"type": "decline"}]
    if kind == "swap":
        return [
            {"type": "swap", "a": a, "b": b}
            for a, b in combinations(board.value_positions(state["lanes"]), 2)
        ]
    if kind == "move_assertion":
        return [
            {"type": "move_assertion", "area": area, "index": i, "to": to}
            for area in ("left", "right")
            for i in range(len(state["areas"][area]))
            for to in (seat, 1 - seat)
        ]
    if kind == "rearrange":
        ops = board.operator_positions(state["lanes"])
        if len(ops) < 2:
            return []
        out: list[dict[str, Any]] = [{"type": "rearrange", "cycle": []}]
        out += [{"type": "rearrange", "cycle": [a, b]} for a, b in combinations(ops, 2)]
        for a, b, c in combinations(ops, 3):
            out += [
                {"type": "rearrange", "cycle": [a, b, c]},
                {"type": "rearrange", "cycle": [a, c, b]},
            ]
        return out
    raise ValueError(f"unknown choice {kind}")


def settle(state: State, events: Events) -> None:
    """Drop open choices nobody can answer (their effect simply does not happen)."""
    while state["pending"] and not answers(state, state["pending"][0]):
        gone = state["pending"].pop(0)
        events.append({"type": "no_effect", "seat": gone["seat"], "card": gone["source"]})


def resolve(state: State, seat: int, move: dict[str, Any], events: Events) -> None:
    """Apply a legal answer to the first open choice."""
    choice = state["pending"][0]
    kind = choice["kind"]
    if kind != "hand_limit":
        state["pending"].pop(0)
    if kind == "search":
        me = player(state, seat)
        me["deck"].remove(move["card"])
        me["hand"].append(move["card"])
        rng = Rng(state["rng"])
        rng.shuffle(me["deck"])
        state["rng"] = rng.state
        events.append({"type": "search", "seat": seat, "card": move["card"], "visible_to": [seat]})
        events.append({"type": "searched", "seat": seat, "source": choice["source"]})
    elif kind in ("opponent_discard", "hand_limit", "optional_discard"):
        if move["type"] == "decline":
            events.append({"type": "declined", "seat": seat, "source": choice["source"]})
            return
        take_from_hand(state, seat, move["card"])
        discard(state, seat, move["card"], events)
        if kind == "hand_limit":
            gain_pvp(state, seat, -1, events)
            if len(player(state, seat)["hand"]) <= HAND_LIMIT:
                state["pending"].remove(choice)
        elif kind == "optional_discard":
            draw(state, seat, 1, events)
    elif kind == "swap":
        (la, sa), (lb, sb) = move["a"], move["b"]
        lanes = state["lanes"]
        lanes[la][sa], lanes[lb][sb] = lanes[lb][sb], lanes[la][sa]
        events.append({"type": "swap", "seat": seat, "a": move["a"], "b": move["b"]})
    elif kind == "move_assertion":
        entry = state["areas"][move["area"]].pop(move["index"])
        state["areas"][f"private{move['to']}"].append(entry)
        events.append(
            {
                "type": "move_assertion",
                "seat": seat,
                "area": move["area"],
                "index": move["index"],
                "to": move["to"],
                "card": entry["card"],
            }
        )
    elif kind == "rearrange":
        cycle = move["cycle"]
        lanes = state["lanes"]
        moved = [lanes[lane][slot] for lane, slot in cycle]
        for i, (lane, slot) in enumerate(cycle):
            lanes[lane][slot] = moved[i - 1]
        events.append({"type": "rearrange", "seat": seat, "cycle": cycle})
    else:  # pragma: no cover - answers() already refused it
        raise Rejected("illegal_move", f"unknown choice {kind}")
