"""The Card Battle bot: its only decision is the deck, since the battle plays itself.

It picks one of the ready-made decks, chosen by the seed so different bots (and rematches)
field different decks while any one choice stays reproducible. It needs nothing from the view:
the opponent's deck is hidden until both are in, so there is nothing to counter.
"""

from __future__ import annotations

from collections.abc import Sequence

from playhall.games.contract import Move
from playhall.games.rng import Rng, RngState


def choose_deck(moves: Sequence[Move], seed: RngState | int) -> Move:
    """One of the offered ``pick_deck`` moves, by seed; the first move if none is offered."""
    picks = [m for m in moves if m.get("type") == "pick_deck"]
    if not picks:
        return dict(moves[0])
    return dict(Rng(seed).choice(picks))
