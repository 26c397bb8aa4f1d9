"""Completion and resolution of a mandala (ruling 6), and the end checks that follow (ruling 8).

A resolution is a little sub-game of alternating picks, each a move by the chooser (or, for
Master Yoga, an automatic step), so it lives in the state as ``state["resolution"]``:
``{"mandala", "completer", "chooser", "final"}``. ``final`` is fixed at the moment of completion,
which is after the completing action's draw (ruling 6): True when the deck has been rebuilt from
the discard pile by then, that draw's own reshuffle included (ruling 8b).
"""

from __future__ import annotations

from playhall.games.contract import Event, State

from .board import add_to_mountain, clear_fields, field_size, mountain_colours, take_stack
from .cards import draw_one, end_game
from .turns import advance

RIVER_SPACES = 6


def first_chooser(state: State, mandala: int, completer: int) -> int:
    """More field cards picks first; on a tie, the player who did not complete it (ruling 6)."""
    m = state["mandalas"][mandala]
    mine, theirs = field_size(m, completer), field_size(m, 1 - completer)
    if mine > theirs:
        return completer
    return 1 - completer


def start_resolution(
    state: State, mandala: int, completer: int, final: bool, events: list[Event]
) -> None:
    """Enter the resolution of a just-completed mandala."""
    chooser = first_chooser(state, mandala, completer)
    state["phase"] = "resolve"
    state["resolution"] = {
        "mandala": mandala,
        "completer": completer,
        "chooser": chooser,
        "final": final,
    }
    events.append(
        {
            "type": "complete",
            "mandala": mandala,
            "by": completer,
            "first_chooser": chooser,
            "final": final,
        }
    )
    m = state["mandalas"][mandala]
    if field_size(m, 0) == 0 and field_size(m, 1) == 0:
        # Nobody has a claim: the whole mountain is discarded without any picks (ruling 6).
        cards = [s["colour"] for s in m["mountain"] for _ in range(s["count"])]
        state["discard"].extend(cards)
        m["mountain"] = []
        events.append({"type": "mountain_discarded", "mandala": mandala, "count": len(cards)})
        finish_resolution(state, events)


def pick(state: State, colour: str, events: list[Event]) -> None:
    """The chooser takes every card of ``colour`` from the mountain (ruling 6)."""
    res = state["resolution"]
    player = res["chooser"]
    m = state["mandalas"][res["mandala"]]
    count = take_stack(m, colour)
    owner = state["players"][player]
    to_river = to_cup = discarded = 0
    if field_size(m, player) == 0:
        discarded = count
        state["discard"].extend([colour] * count)
    elif colour in owner["river"]:
        to_cup = count
    else:
        # A full river holds all six colours, so a new colour always finds a free space.
        owner["river"].append(colour)
        to_river, to_cup = 1, count - 1
    owner["cup"][colour] += to_cup
    events.append(
        {
            "type": "take",
            "player": player,
            "mandala": res["mandala"],
            "colour": colour,
            "count": count,
            "river": to_river,
            "cup": to_cup,
            "discarded": discarded,
        }
    )
    if m["mountain"]:
        res["chooser"] = 1 - player
    else:
        finish_resolution(state, events)


def finish_resolution(state: State, events: list[Event]) -> None:
    """Discard both fields, check the end (ruling 8), refill the mountain, pass the turn."""
    res = state["resolution"]
    index = res["mandala"]
    m = state["mandalas"][index]
    state["discard"].extend(clear_fields(m))
    state["resolution"] = None
    events.append({"type": "resolved", "mandala": index})
    if any(len(p["river"]) >= RIVER_SPACES for p in state["players"]):
        end_game(state, "river_full")
        return
    if res["final"]:
        end_game(state, "final_mandala")
        return
    refill = []
    for _ in range(2):
        card = draw_one(state, events)
        if card is None:
            return
        add_to_mountain(m, card)
        refill.append(card)
    events.append(
        {"type": "refill", "mandala": index, "cards": refill, "mountain": mountain_colours(m)}
    )
    advance(state)
