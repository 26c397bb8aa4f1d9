"""A four-turn battle worked out by hand from the rules, checked event by event.

Seat 0: speedy + optimize-damage, deck archer, goblin, skeleton, wizard, then knights.
  Speedy stats (+20 speed): archer 45/35/45 (hp/attack/speed), goblin 15/10/40,
  skeleton 25/25/30, wizard 60/50/35, knight 120/50/25.
Seat 1: hardy + kill-shot, deck skeleton, goblin, wizard, archer, then knights.
  Hardy stats (+30 HP): skeleton 55/25/10, goblin 45/10/20, wizard 90/50/15,
  archer 75/35/25, knight 150/50/5.
No two active cards share a speed in these four turns, so no dice are rolled.
"""

from __future__ import annotations

from typing import Any

from playhall.games.contract import State
from tests.games.test_card_battle_support import deck_move, fill_deck, start_battle, turn


def draw(seat: int, idx: int, name: str, slot: int, cost: int, active: bool,
         mana_left: int, free: bool = False) -> dict[str, Any]:
    return {"type": "draw", "seat": seat, "card": idx, "name": name, "slot": slot,
            "cost": 0 if free else cost, "free": free, "active": active, "mana_left": mana_left}


def stop(seat: int, reason: str, mana_left: int) -> dict[str, Any]:
    return {"type": "draw_stop", "seat": seat, "reason": reason, "mana_left": mana_left}


def queue(*order: tuple[int, int]) -> dict[str, Any]:
    return {"type": "queue", "order": [{"seat": s, "card": c} for s, c in order]}


def hit(seat: int, idx: int, target: int, slot: int, damage: int, hp_after: int) -> dict[str, Any]:
    return {"type": "attack", "seat": seat, "card": idx, "target_seat": 1 - seat,
            "target": target, "slot": slot, "damage": damage, "hp_after": hp_after}


def death(seat: int, idx: int, name: str, slot: int) -> dict[str, Any]:
    return {"type": "death", "seat": seat, "card": idx, "name": name, "slot": slot}


def fields(state: State) -> list[list[tuple[int, int, bool]]]:
    """(card id, current HP, active) for each field, left to right."""
    return [[(c["id"], c["hp"], c["active"]) for c in p["field"]] for p in state["players"]]


def test_hand_worked_four_turn_battle() -> None:
    state = start_battle(
        deck_move(fill_deck("archer", "goblin", "skeleton", "wizard"), "speedy",
                  "optimize-damage"),
        deck_move(fill_deck("skeleton", "goblin", "wizard", "archer"), "hardy", "kill-shot"))

    # Turn 1, 4 mana.
    # Seat 0 draws the archer (4) onto an empty field: active, 0 mana left; the goblin (1) no
    # longer fits. Seat 1 draws the skeleton (2, active) and the goblin (1, inactive), 1 left;
    # the wizard (6) does not fit. Counts 1 vs 2: seat 0 draws the goblin free (inactive).
    # Queue: archer (45) then skeleton (10); the goblins are inactive.
    # Archer, 35, optimize: only target the skeleton (55, waste 0) -> 20.
    # Skeleton, 25, kill-shot: the archer (45) is not killable; highest HP is the archer -> 20.
    # End: both goblins wake.
    result = turn(state)
    assert result.events == [
        {"type": "turn_start", "turn": 1, "mana": 4},
        draw(0, 0, "archer", 0, 4, True, 0), stop(0, "unaffordable", 0),
        draw(1, 0, "skeleton", 0, 2, True, 2), draw(1, 1, "goblin", 1, 1, False, 1),
        stop(1, "unaffordable", 1),
        draw(0, 1, "goblin", 1, 1, False, 0, free=True),
        queue((0, 0), (1, 0)),
        hit(0, 0, 0, 0, 35, 20),
        hit(1, 0, 0, 0, 25, 20),
        {"type": "activate", "seat": 0, "cards": [1]},
        {"type": "activate", "seat": 1, "cards": [1]},
    ]
    state = result.state
    assert fields(state) == [[(0, 20, True), (1, 15, True)], [(0, 20, True), (1, 45, True)]]

    # Turn 2, 5 mana.
    # Seat 0 draws the skeleton (2, inactive), 3 left; the wizard (6) does not fit. Seat 1's
    # wizard (6) does not fit: nothing. Counts 3 vs 2: seat 1 draws the wizard free (inactive).
    # Queue by speed: archer 45, goblin 40 (seat 0), goblin 20, skeleton 10 (seat 1).
    # Archer 35, optimize: skeleton 20 wastes 15, goblin 45 wastes 0 -> goblin, 45 -> 10.
    # Goblin 10, optimize: skeleton 20 (waste 0, distance 10), goblin 10 (waste 0, distance
    #   0) -> goblin #1 dies at slot 1; seat 1: [skeleton, wizard].
    # Seat 1's goblin is dead: skipped.
    # Skeleton 25, kill-shot: killable are the archer (20) and the goblin (15); the skeleton is
    #   inactive. Highest HP: the archer dies at slot 0; seat 0: [goblin, skeleton].
    result = turn(state)
    assert result.events == [
        {"type": "turn_start", "turn": 2, "mana": 5},
        draw(0, 2, "skeleton", 2, 2, False, 3), stop(0, "unaffordable", 3),
        stop(1, "unaffordable", 5),
        draw(1, 2, "wizard", 2, 6, False, 5, free=True),
        queue((0, 0), (0, 1), (1, 1), (1, 0)),
        hit(0, 0, 1, 1, 35, 10),
        hit(0, 1, 1, 1, 10, 0), death(1, 1, "goblin", 1),
        hit(1, 0, 0, 0, 25, -5), death(0, 0, "archer", 0),
        {"type": "activate", "seat": 0, "cards": [2]},
        {"type": "activate", "seat": 1, "cards": [2]},
    ]
    state = result.state
    assert fields(state) == [[(1, 15, True), (2, 25, True)], [(0, 20, True), (2, 90, True)]]

    # Turn 3, 6 mana.
    # Seat 0 draws the wizard (6, inactive), 0 left; a knight (10) does not fit. Seat 1 draws
    # the archer (4, inactive), 2 left; a knight does not fit. Counts 3 vs 3.
    # Queue: goblin 40, skeleton 30 (seat 0), wizard 15, skeleton 10 (seat 1).
    # Goblin 10, optimize: skeleton 20 (distance 10), wizard 90 (distance 80) -> skeleton 10.
    # Skeleton 25, optimize: skeleton 10 wastes 15, wizard 90 wastes 0 -> wizard 65.
    # Wizard 50, kill-shot: killable goblin 15, skeleton 25 (wizard #3 inactive) -> the
    #   skeleton (higher HP) dies at slot 1; seat 0: [goblin, wizard].
    # Skeleton 25, kill-shot: killable goblin 15 -> dies at slot 0; seat 0: [wizard].
    result = turn(state)
    assert result.events == [
        {"type": "turn_start", "turn": 3, "mana": 6},
        draw(0, 3, "wizard", 2, 6, False, 0), stop(0, "unaffordable", 0),
        draw(1, 3, "archer", 2, 4, False, 2), stop(1, "unaffordable", 2),
        queue((0, 1), (0, 2), (1, 2), (1, 0)),
        hit(0, 1, 0, 0, 10, 10),
        hit(0, 2, 2, 1, 25, 65),
        hit(1, 2, 2, 1, 50, -25), death(0, 2, "skeleton", 1),
        hit(1, 0, 1, 0, 25, -10), death(0, 1, "goblin", 0),
        {"type": "activate", "seat": 0, "cards": [3]},
        {"type": "activate", "seat": 1, "cards": [3]},
    ]
    state = result.state
    assert fields(state) == [[(3, 60, True)], [(0, 10, True), (2, 65, True), (3, 75, True)]]

    # Turn 4, 7 mana. Knights (10) fit nowhere. Counts 1 vs 3: seat 0 draws two knights free,
    # both inactive (the wizard is there).
    # Queue: wizard 35 (seat 0), archer 25, wizard 15, skeleton 10 (seat 1).
    # Wizard 50, optimize: skeleton 10 wastes 40; wizard 65 (distance 15) and archer 75
    #   (distance 25) waste 0 -> wizard, 65 -> 15.
    # Archer 35, kill-shot: the wizard (60) is not killable, knights inactive -> wizard 25.
    # Wizard 50, kill-shot: the wizard (25) is killable -> dies; seat 0: two inactive knights.
    # Skeleton 25: no active target -> direct hit, seat 0 200 -> 175.
    result = turn(state)
    assert result.events == [
        {"type": "turn_start", "turn": 4, "mana": 7},
        stop(0, "unaffordable", 7), stop(1, "unaffordable", 7),
        draw(0, 4, "knight", 1, 10, False, 7, free=True),
        draw(0, 5, "knight", 2, 10, False, 7, free=True),
        queue((0, 3), (1, 3), (1, 2), (1, 0)),
        hit(0, 3, 2, 1, 50, 15),
        hit(1, 3, 3, 0, 35, 25),
        hit(1, 2, 3, 0, 50, -25), death(0, 3, "wizard", 0),
        {"type": "direct_hit", "seat": 1, "card": 0, "target_seat": 0, "damage": 25,
         "hp_after": 175},
        {"type": "activate", "seat": 0, "cards": [4, 5]},
    ]
    state = result.state
    assert fields(state) == [[(4, 120, True), (5, 120, True)],
                             [(0, 10, True), (2, 15, True), (3, 75, True)]]
    assert [p["hp"] for p in state["players"]] == [175, 200]
    assert [p["next"] for p in state["players"]] == [6, 4]
