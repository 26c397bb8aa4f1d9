"""Ruling 9's three strategies, each link of each tie-break chain on a hand-built field.

Each case is built so that every earlier link of the chain ties and the link under test
decides; the expected slot is read off the rule, not off the implementation.
"""

from __future__ import annotations

from typing import Any

import pytest

from playhall.games.card_battle.targeting import choose_target
from tests.games.test_card_battle_support import battle_state, card, of_type, turn


def c(name: str, hp: int, *, attacked: bool = False, active: bool = True) -> dict[str, Any]:
    return card(name, "hardy", hp=hp, attacked=attacked, active=active)


CASES: list[tuple[str, str, int, list[dict[str, Any]], int]] = [
    # -- target-mana: highest cost; then not attacked; then leftmost -----------------------
    ("target-mana", "highest cost, whatever the HP", 35,
     [c("goblin", 45), c("knight", 1), c("archer", 75)], 1),
    ("target-mana", "cost tie: the one that has not attacked", 35,
     [c("archer", 75, attacked=True), c("archer", 10)], 1),
    ("target-mana", "all tied: leftmost", 35, [c("archer", 75), c("archer", 75)], 0),
    ("target-mana", "inactive cards are not candidates", 35,
     [c("knight", 150, active=False), c("goblin", 45)], 1),
    # -- kill-shot: killable (HP <= attack) by highest HP, else highest HP; then cost; then
    #    not attacked; then leftmost ------------------------------------------------------------
    ("kill-shot", "the strongest killable, not the strongest overall", 35,
     [c("goblin", 10), c("skeleton", 30), c("knight", 150)], 1),
    ("kill-shot", "HP equal to the attack is killable", 35,
     [c("wizard", 36), c("archer", 35)], 1),
    ("kill-shot", "nothing killable: highest HP", 10,
     [c("wizard", 60), c("knight", 150), c("archer", 45)], 1),
    ("kill-shot", "HP tie: highest cost", 35, [c("skeleton", 30), c("wizard", 30)], 1),
    ("kill-shot", "HP and cost tie: not attacked", 35,
     [c("archer", 30, attacked=True), c("archer", 30)], 1),
    ("kill-shot", "all tied: leftmost", 35, [c("archer", 30), c("archer", 30)], 0),
    # -- optimize-damage: least waste max(0, attack - HP); then smallest |HP - attack|; then
    #    cost; then not attacked; then leftmost ------------------------------------------------
    ("optimize-damage", "no waste beats any overkill", 35,
     [c("goblin", 10), c("skeleton", 30), c("knight", 150)], 2),
    ("optimize-damage", "all waste: the least waste", 35, [c("goblin", 10), c("skeleton", 30)],
     1),
    ("optimize-damage", "waste before distance: 40 (waste 0) beats 30 (waste 5)", 35,
     [c("skeleton", 30), c("goblin", 40)], 1),
    ("optimize-damage", "no waste: closest HP to the attack", 35,
     [c("knight", 150), c("wizard", 60), c("archer", 45)], 2),
    ("optimize-damage", "waste and distance tie: highest cost", 35,
     [c("skeleton", 40), c("archer", 40)], 1),
    ("optimize-damage", "and cost tie: not attacked", 35,
     [c("archer", 40, attacked=True), c("archer", 40)], 1),
    ("optimize-damage", "all tied: leftmost", 35, [c("archer", 40), c("archer", 40)], 0),
]


@pytest.mark.parametrize(("strategy", "why", "attack", "field", "expected"), CASES,
                         ids=[f"{s}: {w}" for s, w, *_ in CASES])
def test_ruling_9_tie_break_chain(strategy: str, why: str, attack: int,
                                  field: list[dict[str, Any]], expected: int) -> None:
    assert choose_target(strategy, attack, field) == expected


@pytest.mark.parametrize("strategy", ["target-mana", "kill-shot", "optimize-damage"])
def test_ruling_9_no_active_target_means_none(strategy: str) -> None:
    assert choose_target(strategy, 35, []) is None
    assert choose_target(strategy, 35, [c("knight", 150, active=False)]) is None


def test_ruling_9_attacked_mark_is_set_by_the_battle_itself() -> None:
    # Seat 1 has two equal archers; the right one is fast (speed 30) and attacks before seat
    # 0's archer (25), the left one is slow (speed 1). Target-mana ties on cost, so seat 0's
    # archer must pick the one that has not attacked yet: the right one is skipped, slot 0.
    # Then mirror it: the fast one on the left -> seat 0 picks slot 1.
    for fast_slot, expected in ((1, 0), (0, 1)):
        right = [card("archer", card_id=0, hp=500), card("archer", card_id=1, hp=500)]
        right[fast_slot]["speed"] = 30
        right[1 - fast_slot]["speed"] = 1
        state = battle_state([[card("archer", hp=500)], right],
                             strategies=("target-mana", "kill-shot"))
        attacks = [e for e in of_type(turn(state).events, "attack") if e["seat"] == 0]
        assert attacks[0]["slot"] == expected
