"""Deck rules (ruling 17) and the room's ready-made decks."""

from __future__ import annotations

from typing import Any

from playhall.games.contract import Rejected

from .cards import CARDS, deck_vp

MIN_DECK = 40
MAX_DECK = 60


def _expand(counts: dict[str, int]) -> list[str]:
    return [cid for cid, n in counts.items() for _ in range(n)]


#: Two legal 40-card decks; together they hold every card of the pool.
READY_DECKS: dict[str, list[str]] = {
    "counting": _expand(
        {
            "000001": 3,
            "000004": 2,
            "000005": 3,
            "000006": 2,
            "000007": 2,
            "000008": 2,
            "000009": 1,
            "000010": 2,
            "000011": 1,
            "000012": 2,
            "000002": 2,
            "000013": 2,
            "000014": 3,
            "000015": 1,
            "000016": 1,
            "000017": 1,
            "000003": 2,
            "000018": 2,
            "000019": 1,
            "000020": 2,
            "000023": 1,
            "100001": 1,
            "100002": 1,
        }
    ),
    "logic": _expand(
        {
            "000004": 1,
            "000005": 3,
            "000006": 3,
            "000007": 2,
            "000009": 1,
            "000010": 2,
            "000011": 1,
            "000012": 2,
            "000002": 2,
            "000013": 2,
            "000014": 3,
            "000015": 2,
            "000016": 1,
            "000017": 1,
            "000003": 2,
            "000018": 2,
            "000019": 1,
            "000020": 2,
            "000021": 2,
            "000022": 2,
            "100003": 1,
            "100004": 1,
            "100101": 1,
        }
    ),
}


def validate_deck(cards: Any) -> list[str]:
    """The deck as a list of ids, or Rejected("bad_deck") naming what is wrong."""
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise Rejected("bad_move", "cards must be a list of card id strings")
    unknown = sorted({c for c in cards if c not in CARDS})
    if unknown:
        raise Rejected("bad_deck", f"unknown card id(s): {', '.join(unknown)}")
    if not MIN_DECK <= len(cards) <= MAX_DECK:
        raise Rejected(
            "bad_deck", f"deck has {len(cards)} cards; it must have {MIN_DECK}-{MAX_DECK}"
        )
    total = sum(deck_vp(c) for c in cards)
    if total > len(cards):
        raise Rejected("bad_deck", f"assertion VP total {total} exceeds the deck size {len(cards)}")
    return list(cards)
