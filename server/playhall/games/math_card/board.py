"""The field's geometry: lanes, slots, who fills from where, nearest, adjacency.

Works on any mapping with ``"lanes"`` (5 lists of 5 slots) so the same code serves the engine's
state and the bot's view. A slot is ``None`` or ``{"card": id, "owner": seat}``; the value half of
a function card in operator-value use adds ``"part": "value"``.

Coordinates (project decision, see the rules page): lanes 0-1 are seat 0's private lanes (1 next
to the public lane), 2 is public, 3-4 are seat 1's (3 next to the public lane). In a private lane
slot 0 is the owner's left; in the public lane slot 0 is seat 0's left. Even slots hold values,
odd slots operators.
"""

from __future__ import annotations

from typing import Any

from .cards import CARDS, can_be_value, card, is_operator

PUBLIC = 2
LANES = 5
SLOTS = 5
#: The assertion areas as the state and the view key them.
AREA_KEYS = ("left", "right", "private0", "private1")
Slot = dict[str, Any] | None
Lanes = list[list[Slot]]


def private_lanes(seat: int) -> list[int]:
    return [0, 1] if seat == 0 else [3, 4]


def placeable_lanes(seat: int) -> list[int]:
    """Lanes a seat may set values and operators into (ruling 3)."""
    return [*private_lanes(seat), PUBLIC]


def lane_owner(lane: int) -> int | None:
    if lane == PUBLIC:
        return None
    return 0 if lane < PUBLIC else 1


def fill_order(lane: int, seat: int) -> list[int]:
    """Slots in the order ``seat`` fills them: from its own end (ruling 2)."""
    if lane == PUBLIC and seat == 1:
        return [4, 3, 2, 1, 0]
    return [0, 1, 2, 3, 4]


def is_value_slot(slot: int) -> bool:
    return slot % 2 == 0


def first_empty(lanes: Lanes, lane: int, seat: int) -> int | None:
    """The nearest slot: the first empty one from the placer's end (ruling 3)."""
    for slot in fill_order(lane, seat):
        if lanes[lane][slot] is None:
            return slot
    return None


def value_target(lanes: Lanes, lane: int, seat: int) -> int | None:
    """Where a value would go in ``lane`` under nearest, or None."""
    slot = first_empty(lanes, lane, seat)
    return slot if slot is not None and is_value_slot(slot) else None


def operator_target(lanes: Lanes, lane: int, seat: int) -> int | None:
    slot = first_empty(lanes, lane, seat)
    return slot if slot is not None and not is_value_slot(slot) else None


def function_target(lanes: Lanes, lane: int, seat: int) -> int | None:
    """Operator slot for an operator-value function card: private lanes only, nearest operator
    slot with an empty value slot after it (ruling 10)."""
    if lane not in private_lanes(seat):
        return None
    slot = operator_target(lanes, lane, seat)
    if slot is None or lanes[lane][slot + 1] is not None:
        return None
    return slot


def move_targets(seat: int, lane: int) -> list[int]:
    """Adjacent private lanes of ``seat`` a value in ``lane`` may move to (ruling 7)."""
    mine = private_lanes(seat)
    inner = 1 if seat == 0 else 3
    if lane == PUBLIC:
        return [inner]
    if lane in mine:
        return [other for other in mine if other != lane]
    return []


def moved_slot(seat: int, lane: int, slot: int) -> int:
    """The same physical slot in seat's private lane: public slots are in seat 0's coordinates."""
    if lane == PUBLIC and seat == 1:
        return SLOTS - 1 - slot
    return slot


def is_plain_value(entry: Slot) -> bool:
    """A card alone in a value slot (not a function card's value half)."""
    return entry is not None and "part" not in entry and can_be_value(entry["card"])


def value_positions(lanes: Lanes) -> list[list[int]]:
    return [
        [lane, slot]
        for lane in range(LANES)
        for slot in range(0, SLOTS, 2)
        if is_plain_value(lanes[lane][slot])
    ]


def operator_positions(lanes: Lanes) -> list[list[int]]:
    """Operator cards on the field (function cards excluded)."""
    out = []
    for lane in range(LANES):
        for slot in range(1, SLOTS, 2):
            entry = lanes[lane][slot]
            if entry is not None and is_operator(entry["card"]):
                out.append([lane, slot])
    return out


def field_count(state: dict[str, Any]) -> int:
    """Cards on the field: lanes (a function card once), assertions (with a puzzle's hidden
    card), legends of both seats."""
    count = sum(1 for row in state["lanes"] for e in row if e is not None and "part" not in e)
    for entries in state["areas"].values():
        count += sum(2 if e.get("under") or e.get("hidden") else 1 for e in entries)
    count += sum(len(x) for x in state["legends"]) + sum(len(x) for x in state["rainbow"])
    return count


def public_full(lanes: Lanes) -> bool:
    return all(entry is not None for entry in lanes[PUBLIC])


def valid_position(pos: Any) -> bool:
    """A well-formed ``[lane, slot]`` pair (type check for moves)."""
    return (
        isinstance(pos, list)
        and len(pos) == 2
        and all(type(x) is int for x in pos)
        and 0 <= pos[0] < LANES
        and 0 <= pos[1] < SLOTS
    )


def value_of(entry: Slot) -> int | None:
    """A plain value card's printed value."""
    if not is_plain_value(entry):
        return None
    assert entry is not None
    return card(entry["card"])["value"]


# -- temporary calculations (ruling 10): value cards anywhere on the field ---------------------
#
# A calculation position is ``[lane, slot]`` (ints) for a value card alone in a value slot, or
# ``[area, index]`` (an ``AREA_KEYS`` name and an int) for a value-assertion card lying in an
# assertion area, where it counts as a value card too.


def valid_calc_position(pos: Any) -> bool:
    """A well-formed calculation position: a lane position or ``[area, index]``."""
    return valid_position(pos) or (
        isinstance(pos, list)
        and len(pos) == 2
        and pos[0] in AREA_KEYS
        and type(pos[1]) is int
        and pos[1] >= 0
    )


def _area_value(entry: dict[str, Any]) -> int | None:
    row = CARDS[entry["card"]]
    return row["value"] if row["kind"] == "value_assertion" else None


def calc_value(field: dict[str, Any], pos: list[Any]) -> int | None:
    """The printed value of the value card at a calculation position, or None if none is there."""
    where, index = pos
    if isinstance(where, int):
        return value_of(field["lanes"][where][index])
    entries = field["areas"][where]
    return _area_value(entries[index]) if index < len(entries) else None


def calc_positions(field: dict[str, Any]) -> list[list[Any]]:
    """Every position holding a value card a calculation may use, lanes first."""
    out: list[list[Any]] = list(value_positions(field["lanes"]))
    for area in AREA_KEYS:
        out += [
            [area, i] for i, e in enumerate(field["areas"][area]) if _area_value(e) is not None
        ]
    return out


def take_calc_cards(field: dict[str, Any], positions: list[list[Any]]) -> list[dict[str, Any]]:
    """Remove the cards at ``positions`` from the field and return their entries in that order.
    Area entries are popped from the highest index down, so two in one area stay addressed
    as the move named them."""
    taken = []
    for where, index in positions:
        if isinstance(where, int):
            taken.append(field["lanes"][where][index])
            field["lanes"][where][index] = None
        else:
            taken.append(field["areas"][where][index])
    for where, index in sorted((p for p in positions if isinstance(p[0], str)),
                               key=lambda p: p[1], reverse=True):
        del field["areas"][where][index]
    return taken
