"""The Mantis deck as small ints, with decode tables built once at import.

Ruling 1: for each of the 35 three-colour combinations of the 7 colours there are 3 cards, one
with each of the combination's colours as its face; the back shows the combination.

A card is an int ``0..104``: ``card // 3`` is the index of its back combination (in
``itertools.combinations`` order over :data:`COLOURS`) and ``card % 3`` says which of the
back's colours is the face. States stay tiny (one small int per card) and the engine never
recomputes anything about a card: every question is one list index into a table below.

Views show a card as a *code* string ``"<face>:<c1>,<c2>,<c3>"`` (back colours in
:data:`COLOURS` order), e.g. ``"blue:red,green,blue"``. A string is immutable, so one shared
object per card can go into every view without copying, and clients split it without knowing
any rule.
"""

from __future__ import annotations

from itertools import combinations
from typing import Final

#: The seven colours in the rulings' order; a colour is referred to by its index elsewhere.
COLOURS: Final[list[str]] = ["red", "orange", "yellow", "green", "blue", "purple", "pink"]

#: The 35 backs, each a sorted triple of colour indices.
BACKS: Final[list[list[int]]] = [list(combo) for combo in combinations(range(len(COLOURS)), 3)]

DECK_SIZE: Final = 3 * len(BACKS)  # 105

#: Face colour index of each card.
FACE: Final[list[int]] = [BACKS[card // 3][card % 3] for card in range(DECK_SIZE)]

#: Back combination index (0..34) of each card.
BACK: Final[list[int]] = [card // 3 for card in range(DECK_SIZE)]

#: Back colours of each back combination as names, ready to copy into a view.
BACK_NAMES: Final[list[list[str]]] = [[COLOURS[c] for c in back] for back in BACKS]

#: The view code of each card (see the module docstring).
CODE: Final[list[str]] = [
    f"{COLOURS[FACE[card]]}:{','.join(BACK_NAMES[BACK[card]])}" for card in range(DECK_SIZE)
]

#: Code -> card, for the bot, which works from views only.
CARD_OF_CODE: Final[dict[str, int]] = {code: card for card, code in enumerate(CODE)}


def card_of(back: int, face: int) -> int:
    """The card with back combination ``back`` whose face is colour ``face`` (which must be
    one of the back's colours)."""
    return 3 * back + BACKS[back].index(face)
