"""Card Battle's fixed data: the five cards, the deck types, the strategies, the ready-made decks,
and deck validation.

Everything here is a constant or a pure function of its arguments, so the battle code and the
views share one source of truth for the numbers (the seed's card table, ruling 1's costs).
"""

from __future__ import annotations

from typing import Any

from playhall.games.contract import Rejected

DECK_SIZE = 20
FIELD_SLOTS = 5
START_HP = 200
MAX_MANA = 10

#: Base stats per card name (seed table; costs as ruling 1 fixes them).
CARD_TYPES: dict[str, dict[str, int]] = {
    "goblin": {"hp": 15, "attack": 10, "speed": 20, "cost": 1},
    "skeleton": {"hp": 25, "attack": 25, "speed": 10, "cost": 2},
    "archer": {"hp": 45, "attack": 35, "speed": 25, "cost": 4},
    "wizard": {"hp": 60, "attack": 50, "speed": 15, "cost": 6},
    "knight": {"hp": 120, "attack": 50, "speed": 5, "cost": 10},
}

#: The stat each deck type raises, and by how much (ruling 4: hardy raises max and current HP).
DECK_TYPES: dict[str, dict[str, int]] = {
    "speedy": {"speed": 20},
    "hardy": {"hp": 30},
    "angry": {"attack": 20},
}

STRATEGIES: tuple[str, ...] = ("target-mana", "kill-shot", "optimize-damage")

#: How many unknown card positions a refusal names before it only counts the rest.
_MAX_LISTED = 10


#: Ready-made decks (ruling 3 asks for at least these four), true to the seed's descriptions.
#: Orders were chosen with the free equalization draw (ruling 6) in mind: a deck whose top cards
#: are dear draws few cards itself and then receives free ones whenever the other side drew
#: more, so cheap-first orders mostly hand the opponent free cards. Measured matchups are in
#: docs/games/card_battle.md.
READY_DECKS: dict[str, dict[str, Any]] = {
    "balanced": {
        "title": "Balanced",
        "deck_type": "hardy",
        "strategy": "kill-shot",
        # Four of each card, a full curve repeated: 4, 6, 2, 1, 10.
        "cards": ["archer", "wizard", "skeleton", "goblin", "knight"] * 4,
    },
    "rush": {
        "title": "Rush",
        "deck_type": "speedy",
        "strategy": "optimize-damage",
        # Only the cheap fast cards; skeletons lead because goblins (15 HP) die to anything.
        "cards": ["skeleton", "skeleton", "goblin"] * 6 + ["skeleton", "skeleton"],
    },
    "tank": {
        "title": "Tank",
        "deck_type": "hardy",
        "strategy": "target-mana",
        # Archers and knights in turn: an archer is affordable on turn 1, knights come free
        # through equalization or from turn 7 on.
        "cards": ["archer", "knight"] * 10,
    },
    "glass-cannon": {
        "title": "Glass Cannon",
        "deck_type": "angry",
        "strategy": "kill-shot",
        # Wizards only (70 attack when angry). Nothing is affordable on turns 1-2, so the first
        # wizards usually arrive free when the opponent fields more cards.
        "cards": ["wizard"] * 20,
    },
}


def mana_for_turn(turn: int) -> int:
    """Ruling 2: turn t (from 1) has min(10, 3 + t) mana."""
    return min(MAX_MANA, 3 + turn)


def make_card(name: str, index: int, deck_type: str) -> dict[str, Any]:
    """A card as it lies on the field: base stats plus the deck type's bonus (ruling 4).

    ``id`` is the card's position in its owner's deck (0-19), unique per seat, so events and
    views can name a card even after others died and slid left.
    """
    stats = dict(CARD_TYPES[name])
    for stat, bonus in DECK_TYPES[deck_type].items():
        stats[stat] += bonus
    return {
        "id": index,
        "name": name,
        "cost": stats["cost"],
        "hp": stats["hp"],
        "max_hp": stats["hp"],
        "attack": stats["attack"],
        "speed": stats["speed"],
        "active": False,
        "attacked": False,
    }


def validate_deck(cards: Any, deck_type: Any, strategy: Any) -> dict[str, Any]:
    """Check a submitted deck and return it as stored state; refuse it with every problem named.

    Wrong JSON shapes (not a list, a card that is not a string, a missing or non-string type or
    strategy) are malformed moves (``bad_move``). Well-formed but wrong content (a count other
    than 20, an unknown card name, an unknown type or strategy) is ``bad_deck``, and the reason
    lists each problem with 1-based positions so a person can fix the deck in one go.
    """
    if not isinstance(cards, list):
        raise Rejected("bad_move", "'cards' must be a list of card names")
    for position, name in enumerate(cards, start=1):
        if not isinstance(name, str):
            raise Rejected("bad_move", f"card at position {position} is not a string")
    if not isinstance(deck_type, str):
        raise Rejected("bad_move", "'deck_type' must be a string")
    if not isinstance(strategy, str):
        raise Rejected("bad_move", "'strategy' must be a string")
    problems: list[str] = []
    if len(cards) != DECK_SIZE:
        problems.append(f"the deck has {len(cards)} cards; exactly {DECK_SIZE} are required")
    unknown = [
        f"position {i} ({name[:20]!r})"
        for i, name in enumerate(cards, start=1)
        if name not in CARD_TYPES
    ]
    if unknown:
        # A hostile payload may hold thousands of junk names: name the first few, count the rest.
        shown = unknown[:_MAX_LISTED] + (
            [f"and {len(unknown) - _MAX_LISTED} more"] if len(unknown) > _MAX_LISTED else []
        )
        problems.append(
            "unknown card at " + ", ".join(shown) + f" (cards are: {', '.join(CARD_TYPES)})"
        )
    if deck_type not in DECK_TYPES:
        problems.append(f"unknown deck type {deck_type[:20]!r} (choose {', '.join(DECK_TYPES)})")
    if strategy not in STRATEGIES:
        problems.append(f"unknown strategy {strategy[:20]!r} (choose {', '.join(STRATEGIES)})")
    if problems:
        raise Rejected("bad_deck", "; ".join(problems))
    return {"cards": list(cards), "deck_type": deck_type, "strategy": strategy, "ready": None}


def ready_deck(name: str) -> dict[str, Any]:
    """A ready-made deck as stored state (its name kept so views can show which one it was)."""
    preset = READY_DECKS[name]
    return {
        "cards": list(preset["cards"]),
        "deck_type": preset["deck_type"],
        "strategy": preset["strategy"],
        "ready": name,
    }
