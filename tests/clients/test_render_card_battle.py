"""The Card Battle terminal renderer draws real engine views and labels real moves."""

from __future__ import annotations

from playhall.games.card_battle import GAME
from playhall.games.contract import State
from playhall_client.render import card_battle, move_label, render


def _new() -> State:
    return GAME.setup(2, GAME.normalize_options({"turn_delay_ms": 0}), 5)


def test_deck_step_shows_choices_and_hides_the_other_deck() -> None:
    state = GAME.apply(_new(), 0, {"type": "submit_deck", "cards": ["knight"] * 20,
                                   "deck_type": "angry", "strategy": "target-mana"}).state
    mine = render("card_battle", GAME.view(state, 0), 0)
    theirs = card_battle.render(GAME.view(state, 1), 1)
    assert "Angry + Target Mana" in mine and ">knight<" in mine
    assert "deck submitted (hidden)" in theirs
    assert "knight" not in theirs.split("Ready-made decks")[0]
    assert "Ready-made decks: Balanced (hardy + kill-shot)" in theirs
    assert "choosing a deck" in mine


def test_battle_view_shows_fields_log_and_result() -> None:
    state = GAME.apply(_new(), 0, {"type": "pick_deck", "deck": "tank"}).state
    state = GAME.apply(state, 1, {"type": "pick_deck", "deck": "rush"}).state
    state = GAME.apply_auto(state).state
    text = render("card_battle", GAME.view(state, None), None)
    # Turn 1, 4 mana: Tank (hardy) draws its archer (4) onto an empty field: active, 75 HP
    # max (the * marks the hardy bonus). Rush draws two skeletons (2 + 2), so Tank is behind
    # and draws its knight free: the next card is the second archer.
    assert "Card Battle - turn 1 - battle - you are spectator" in text
    assert "Archer#0 hp" in text and "/75* atk 35 spd 25 active" in text
    assert "Turn 1: 4 mana" in text and "(archer) (knight) >archer<" in text
    # Seats as people count them: s1 is the wire's seat 0.
    assert "s1 Knight#1 drawn free (waiting)" in text
    assert "s2 Skeleton#0 drawn for 2 mana (active)" in text
    # Speedy skeleton (speed 30) before the archer (25); it hits the archer 75 -> 50, then the
    # archer (35) kills the skeleton (25 HP) -> -10.
    assert "attack order: s2 Skeleton#0, s1 Archer#0" in text
    assert "s2 Skeleton#0 hits s1 Archer#0 for 25 -> 50 HP" in text
    assert "s1 Archer#0 hits s2 Skeleton#0 for 35 -> -10 HP" in text
    assert "s2 Skeleton#0 is destroyed" in text
    while GAME.outcome(state) is None:
        state = GAME.apply_auto(state).state
    final = card_battle.render(GAME.view(state, 0), 0)
    winner = GAME.outcome(state).winners[0]  # type: ignore[union-attr]
    assert f"Seat {winner + 1} wins (knockout)" in final


def test_move_labels() -> None:
    moves = GAME.legal_moves(_new(), 1)
    labels = [move_label("card_battle", m) for m in moves]
    assert labels[0].startswith("Build your own deck")
    assert "Play the ready-made deck Glass Cannon" in labels
    assert card_battle.move_label({"type": "submit_deck", "cards": ["goblin"] * 20,
                                   "deck_type": "speedy", "strategy": "kill-shot"}) == \
        "Submit a 20-card speedy deck (kill-shot)"
