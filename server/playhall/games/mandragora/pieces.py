"""The five kinds of mandragora piece and what each is worth (rulings 4 and 8).

Pieces are stored as one-letter codes (the letters the setup patterns use) so a state stays small
and msgpack-friendly; the full names exist for views and player-facing text. A piece's value
depends on whether the seat that scores it moved first in the game, so values are looked up per
(piece, moved_first) rather than stored on the piece.
"""

from __future__ import annotations

#: Code -> full name. Ruling 8: the spelling is "Citrullus" (the seed also writes "Citrillus").
NAMES: dict[str, str] = {
    "M": "Mandragora",
    "K": "Korrigan",
    "P": "Pachypodium",
    "C": "Citrullus",
    "A": "Adenium",
}

#: Code -> (value for the seat that moved first, value for the seat that moved second).
_VALUES: dict[str, tuple[int, int]] = {
    "M": (1, 1),
    "K": (2, 3),
    "P": (2, 3),
    "C": (3, 4),
    "A": (3, 4),
}

KINDS: tuple[str, ...] = tuple(NAMES)


def value(piece: str, moved_first: bool) -> int:
    """Points ``piece`` is worth to a seat that did (or did not) make the game's first move."""
    first, second = _VALUES[piece]
    return first if moved_first else second


def value_table(moved_first: bool) -> dict[str, int]:
    """Every kind's value for one seat, as the view shows it (clients know no rules)."""
    return {kind: value(kind, moved_first) for kind in KINDS}
