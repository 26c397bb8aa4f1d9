"""Target choice for the three strategies (ruling 9), each with its full tie-break chain.

Every strategy is a sort key over the candidate cards; the best key wins. The last links of
every chain are the same (highest cost where the strategy says so, then a card that has not
attacked this turn, then the leftmost), so a choice is always unique.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Card = dict[str, Any]
Key = tuple[int, ...]


def _target_mana(attack: int, card: Card, slot: int) -> Key:
    # Highest cost; then not attacked this turn; then leftmost.
    return (card["cost"], not card["attacked"], -slot)


def _kill_shot(attack: int, card: Card, slot: int) -> Key:
    # Killable first (current HP <= attack); within the chosen pool the highest current HP;
    # then highest cost; then not attacked; then leftmost. Ranking "killable" above everything
    # is the same as "if any target is killable, choose among those only".
    return (card["hp"] <= attack, card["hp"], card["cost"], not card["attacked"], -slot)


def _optimize_damage(attack: int, card: Card, slot: int) -> Key:
    # Least wasted damage max(0, attack - HP); then smallest |HP - attack|; then highest cost;
    # then not attacked; then leftmost. Keys are maximised, hence the negations.
    return (
        -max(0, attack - card["hp"]),
        -abs(card["hp"] - attack),
        card["cost"],
        not card["attacked"],
        -slot,
    )


_KEYS: dict[str, Callable[[int, Card, int], Key]] = {
    "target-mana": _target_mana,
    "kill-shot": _kill_shot,
    "optimize-damage": _optimize_damage,
}


def choose_target(strategy: str, attack: int, field: list[Card]) -> int | None:
    """The slot index the attacker strikes on the enemy ``field``, or ``None`` when the enemy
    has no active card (the attack then hits the enemy player). Inactive cards are never
    candidates (ruling 7)."""
    key = _KEYS[strategy]
    candidates = [slot for slot, card in enumerate(field) if card["active"]]
    if not candidates:
        return None
    return max(candidates, key=lambda slot: key(attack, field[slot], slot))
