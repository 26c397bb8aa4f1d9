"""The deck, card counts and drawing (with the reshuffle that announces the final mandala).

Cards are colour names. Piles whose order matters (deck, discard pile) are lists of colours with
the top of the deck at index 0; piles whose order does not (hands, cups, fields) are counts per
colour with all six colours always present as keys, so two equal piles encode to equal bytes.
"""

from __future__ import annotations

from playhall.games.contract import Event, State
from playhall.games.rng import Rng

COLOURS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple")
PER_COLOUR = 18
DECK_SIZE = PER_COLOUR * len(COLOURS)


def new_deck() -> list[str]:
    """The 108 cards in a fixed order, before the seeded shuffle (ruling 1)."""
    return [colour for colour in COLOURS for _ in range(PER_COLOUR)]


def zero_counts() -> dict[str, int]:
    """An empty pile of counts: every colour present so the encoding never depends on history."""
    return {colour: 0 for colour in COLOURS}


def total(counts: dict[str, int]) -> int:
    return sum(counts.values())


def colours_in(counts: dict[str, int]) -> list[str]:
    """The colours a count pile holds, in the canonical colour order."""
    return [colour for colour in COLOURS if counts[colour] > 0]


def end_game(state: State, reason: str) -> None:
    """Mark the game over; the outcome is computed from the state by the engine."""
    state["phase"] = "over"
    state["end"] = reason


def draw_one(state: State, events: list[Event]) -> str | None:
    """Take the top card of the deck, reshuffling the discard pile into a new deck when the deck is
    empty (ruling 8b: from then on the next completed mandala is the last).

    Returns None, and ends the game at once, when a card is needed while deck and discard pile
    are both empty (ruling 8b, last sentence). Callers must stop when they get None.
    """
    if not state["deck"]:
        if not state["discard"]:
            end_game(state, "cards_exhausted")
            events.append({"type": "cards_exhausted"})
            return None
        rng = Rng(state["rng"])
        deck = state["discard"]
        rng.shuffle(deck)
        state["rng"] = rng.state
        state["deck"] = deck
        state["discard"] = []
        state["reshuffled"] = True
        events.append({"type": "reshuffle", "deck_count": len(deck)})
    card: str = state["deck"].pop(0)
    return card
