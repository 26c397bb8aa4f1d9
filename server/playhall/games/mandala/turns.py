"""Who acts next.

Turns are *slots* in a cycle. In the standard game the slots are the two seats (slot = seat =
player). In the solo game there are three: the human (slot 0), Master Yoga's left-mandala move
(slot 1) and his right-mandala move (slot 2) (ruling 10). Players are indexed 0 and 1 in both
modes; in solo, player 1 is Master Yoga, who has no seat.
"""

from __future__ import annotations

from playhall.games.contract import State

YOGA = 1  # Master Yoga's player index in the solo game


def is_solo(state: State) -> bool:
    return bool(state["mode"] == "solo")


def player_of_slot(state: State, slot: int) -> int:
    if is_solo(state):
        return 0 if slot == 0 else YOGA
    return slot


def acting_player(state: State) -> int:
    return player_of_slot(state, state["slot"])


def begin_slot(state: State, slot: int) -> None:
    """Start a slot: a human action, or a pending automatic Yoga move."""
    state["slot"] = slot
    state["phase"] = "yoga" if is_solo(state) and slot > 0 else "action"


def advance(state: State) -> None:
    """Pass the turn after an action (and its resolution, if any) is finished."""
    begin_slot(state, (state["slot"] + 1) % (3 if is_solo(state) else 2))


def is_bot_player(state: State, player: int) -> bool:
    """True for the player the engine itself plays (Master Yoga in solo)."""
    return is_solo(state) and player == YOGA
