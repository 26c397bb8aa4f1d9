"""Master Yoga, the solo opponent: his move procedure (rulings 11-12) and his colour choice
(ruling 13). Both are fixed procedures, not a bot: the engine runs them as automatic steps.
"""

from __future__ import annotations

from playhall.games.contract import Event, State

from .board import (
    Mandala,
    add_to_mountain,
    colours_present,
    field_size,
    in_field,
    in_mountain,
    is_complete,
    mountain_colours,
)
from .cards import COLOURS, draw_one
from .turns import YOGA

HUMAN = 0


def sixth_colour_to_mountain(mandala: Mandala) -> bool:
    """Ruling 12: compare before placing. To the mountain when (Yoga's field is larger and the
    mountain has an even number of colours) or (his field is not larger and it has an odd number);
    the parity decides who gets the last pick, which is what makes the placement pay off."""
    yoga, human = field_size(mandala, YOGA), field_size(mandala, HUMAN)
    even = len(mandala["mountain"]) % 2 == 0
    return (yoga > human and even) or (yoga <= human and not even)


def _place(mandala: Mandala, colour: str, where: str, state: State) -> None:
    if where == "mountain":
        add_to_mountain(mandala, colour)
    elif where == "field":
        mandala["fields"][YOGA][colour] += 1
    else:
        state["discard"].append(colour)


def _first_card(mandala: Mandala, colour: str) -> tuple[str, bool]:
    """Where the first card of a move goes, and whether the move goes on (ruling 11)."""
    if in_mountain(mandala, colour):
        return "mountain", False
    if in_field(mandala, HUMAN, colour):
        return "discard", False
    present = colours_present(mandala)
    if colour not in present and len(present) == len(COLOURS) - 1:
        return ("mountain" if sixth_colour_to_mountain(mandala) else "field"), False
    return "field", True


def _later_card(mandala: Mandala, colour: str) -> tuple[str, bool]:
    """Where a later card goes, and whether the move goes on (ruling 11)."""
    if in_mountain(mandala, colour) or in_field(mandala, HUMAN, colour):
        return "discard", False
    return "field", True


def yoga_move(state: State, index: int, events: list[Event]) -> bool:
    """Play one Yoga move on mandala ``index``. Returns True if he completed it. Every card drawn
    is a public event. Stops early (returning False) if the game ended for want of cards."""
    mandala = state["mandalas"][index]
    first = True
    while True:
        colour = draw_one(state, events)
        if colour is None:
            return False
        where, go_on = (_first_card if first else _later_card)(mandala, colour)
        first = False
        _place(mandala, colour, where, state)
        complete = where != "discard" and is_complete(mandala)
        events.append(
            {
                "type": "yoga_draw",
                "mandala": index,
                "colour": colour,
                "to": where,
                "completes": complete,
            }
        )
        if complete:
            return True
        if not go_on:
            return False


def _highest(colours: list[str], river: list[str]) -> str:
    """The colour in the highest (most valuable) river space; all must be in that river."""
    return max(colours, key=river.index)


def yoga_choice(state: State, index: int) -> str:
    """Yoga's pick among the mountain's colours (ruling 13; ``simple`` option: leftmost,
    preferring colours not in his river). Candidates are kept in mountain order, so "leftmost"
    is always the first survivor."""
    candidates = mountain_colours(state["mandalas"][index])
    his = state["players"][YOGA]["river"]
    yours = state["players"][HUMAN]["river"]
    new_to_him = [c for c in candidates if c not in his]
    if state["yoga"] == "simple":
        return (new_to_him or candidates)[0]
    if new_to_him:
        new_to_both = [c for c in new_to_him if c not in yours]
        if new_to_both:
            return new_to_both[0]
        return _highest(new_to_him, yours)
    new_to_you = [c for c in candidates if c not in yours]
    return _highest(new_to_you or candidates, his)
