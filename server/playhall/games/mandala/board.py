"""One mandala: its mountain (ordered colour stacks) and the two fields, and the rule of colour.

A mandala is ``{"mountain": [{"colour": c, "count": n}, ...], "fields": [counts, counts]}``.
The mountain is a list because its order is the order of arrival (ruling 3), which Master Yoga's
"leftmost" choices depend on. Field index is the player index (in solo, 1 is Master Yoga).
"""

from __future__ import annotations

from typing import Any

from .cards import COLOURS, colours_in, total, zero_counts

Mandala = dict[str, Any]


def new_mandala() -> Mandala:
    return {"mountain": [], "fields": [zero_counts(), zero_counts()]}


def mountain_colours(mandala: Mandala) -> list[str]:
    """Colours in the mountain, left to right."""
    return [stack["colour"] for stack in mandala["mountain"]]


def in_mountain(mandala: Mandala, colour: str) -> bool:
    return any(stack["colour"] == colour for stack in mandala["mountain"])


def in_field(mandala: Mandala, player: int, colour: str) -> bool:
    return bool(mandala["fields"][player][colour] > 0)


def field_size(mandala: Mandala, player: int) -> int:
    return total(mandala["fields"][player])


def colours_present(mandala: Mandala) -> list[str]:
    """Every colour in any of the three areas, in canonical order."""
    return [
        c
        for c in COLOURS
        if in_mountain(mandala, c) or in_field(mandala, 0, c) or in_field(mandala, 1, c)
    ]


def is_complete(mandala: Mandala) -> bool:
    """All six colours across its three areas (ruling 6)."""
    return len(colours_present(mandala)) == len(COLOURS)


def may_go_to_mountain(mandala: Mandala, colour: str) -> bool:
    """Rule of colour (ruling 4): a mountain takes a colour found in neither field."""
    return not in_field(mandala, 0, colour) and not in_field(mandala, 1, colour)


def may_go_to_field(mandala: Mandala, player: int, colour: str) -> bool:
    """Rule of colour (ruling 4): your field takes a colour found neither in the mountain nor in
    the opponent's field (your own field may already hold it)."""
    return not in_mountain(mandala, colour) and not in_field(mandala, 1 - player, colour)


def add_to_mountain(mandala: Mandala, colour: str, count: int = 1) -> None:
    """Stack on the colour's pile, or open a new pile at the right end."""
    for stack in mandala["mountain"]:
        if stack["colour"] == colour:
            stack["count"] += count
            return
    mandala["mountain"].append({"colour": colour, "count": count})


def take_stack(mandala: Mandala, colour: str) -> int:
    """Remove a colour's whole pile from the mountain; returns how many cards it held."""
    for i, stack in enumerate(mandala["mountain"]):
        if stack["colour"] == colour:
            del mandala["mountain"][i]
            return int(stack["count"])
    raise KeyError(colour)


def clear_fields(mandala: Mandala) -> list[str]:
    """Empty both fields; returns their cards (for the discard pile)."""
    cards: list[str] = []
    for field in mandala["fields"]:
        for colour in colours_in(field):
            cards.extend([colour] * field[colour])
            field[colour] = 0
    return cards
