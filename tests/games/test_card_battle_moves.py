"""The deck step as moves: what legal_moves offers, malformed and out-of-turn moves, private
events, and the bot."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.games.card_battle import GAME
from playhall.games.card_battle.cards import READY_DECKS
from playhall.games.contract import Rejected
from tests.games.conformance import encode
from tests.games.test_card_battle_support import (
    deck_move,
    fill_deck,
    new_game,
    run_battle,
    start_battle,
)


def test_legal_moves_offer_a_template_and_every_ready_deck() -> None:
    moves = GAME.legal_moves(new_game(), 0)
    assert moves[0] == {"type": "submit_deck", "template": True, "cards": [], "deck_type": "",
                        "strategy": ""}
    assert moves[1:] == [{"type": "pick_deck", "deck": name} for name in READY_DECKS]
    # The view carries what a client needs to fill the template in.
    rules = GAME.view(new_game(), 0)["rules"]
    assert rules["deck_size"] == 20
    assert set(rules["card_types"]) == {"goblin", "skeleton", "archer", "wizard", "knight"}
    assert set(rules["deck_types"]) == {"speedy", "hardy", "angry"}
    assert rules["strategies"] == ["target-mana", "kill-shot", "optimize-damage"]


MALFORMED: list[Any] = [
    "pick_deck",
    None,
    [],
    {},
    {"type": 3},
    {"type": "attack"},
    {"type": "pick_deck"},
    {"type": "pick_deck", "deck": "rush", "junk": 1},
    {"type": "pick_deck", "deck": 7},
    {"type": "submit_deck", "template": True, "cards": [], "deck_type": "", "strategy": ""},
    {"type": "submit_deck", "cards": fill_deck(), "deck_type": "hardy"},
    {"type": "submit_deck", "cards": "goblin" * 20, "deck_type": "hardy", "strategy": "kill-shot"},
    {"type": "submit_deck", "cards": [*fill_deck()[:19], 5], "deck_type": "hardy",
     "strategy": "kill-shot"},
    {"type": "submit_deck", "cards": fill_deck(), "deck_type": None, "strategy": "kill-shot"},
    {"type": "submit_deck", "cards": fill_deck(), "deck_type": "hardy", "strategy": ["x"]},
    {1: "submit_deck"},
]


@pytest.mark.parametrize("move", MALFORMED, ids=[repr(m)[:40] for m in MALFORMED])
def test_malformed_moves_are_bad_move_and_change_nothing(move: Any) -> None:
    state = new_game()
    before = encode(state)
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 0, move)
    assert info.value.code == "bad_move"
    assert encode(state) == before


def test_a_seat_submits_only_once() -> None:
    state = GAME.apply(new_game(), 0, {"type": "pick_deck", "deck": "rush"}).state
    assert GAME.legal_moves(state, 0) == []
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 0, {"type": "pick_deck", "deck": "tank"})
    assert info.value.code == "not_your_turn"
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 7, {"type": "pick_deck", "deck": "tank"})
    assert info.value.code == "not_your_turn"


def test_no_moves_during_the_battle_and_game_over_after() -> None:
    state = start_battle({"type": "pick_deck", "deck": "rush"},
                         {"type": "pick_deck", "deck": "glass-cannon"})
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 1, deck_move(fill_deck()))
    assert info.value.code == "not_your_turn"
    final = run_battle(state)[-1].state
    with pytest.raises(Rejected) as info:
        GAME.apply(final, 0, {"type": "pick_deck", "deck": "rush"})
    assert info.value.code == "game_over"
    assert GAME.auto_delay(final) is None
    with pytest.raises(Rejected) as info:
        GAME.apply_auto(final)
    assert info.value.code == "illegal_move"


def test_submission_events_hide_the_deck_from_the_other_seat() -> None:
    result = GAME.apply(new_game(), 1, deck_move(fill_deck("wizard"), "angry"))
    public = [e for e in result.events if "visible_to" not in e]
    private = [e for e in result.events if "visible_to" in e]
    assert public == [{"type": "deck_submitted", "seat": 1}]
    assert private[0]["visible_to"] == [1]
    assert private[0]["deck"]["cards"][0] == "wizard"
    # The views filter last_events the same way.
    assert GAME.view(result.state, 0)["last_events"] == public
    assert GAME.view(result.state, None)["last_events"] == public
    assert len(GAME.view(result.state, 1)["last_events"]) == 2


def test_bot_picks_a_ready_deck_by_seed_from_its_own_view() -> None:
    state = new_game()
    moves = GAME.legal_moves(state, 0)
    view = GAME.view(state, 0)
    picks = [GAME.bot_move(view, 0, moves, seed) for seed in range(40)]
    assert all(p["type"] == "pick_deck" and p in moves for p in picks)
    assert {p["deck"] for p in picks} == set(READY_DECKS)  # several decks get fielded
    assert picks == [GAME.bot_move(view, 0, moves, seed) for seed in range(40)]
    # The chosen move is accepted as is.
    assert GAME.apply(state, 0, picks[0]).state["players"][0]["deck"]["ready"] == picks[0]["deck"]


def test_setup_refuses_other_seat_counts() -> None:
    for seats in (1, 3):
        with pytest.raises(Rejected):
            GAME.setup(seats, GAME.normalize_options({}), 1)
    assert (GAME.min_seats, GAME.max_seats) == (2, 2)


def test_a_huge_junk_deck_is_refused_with_a_bounded_reason() -> None:
    # 5000 unknown names: the reason counts the deck, names the first ten positions and says
    # how many more there are, instead of echoing the whole payload back.
    with pytest.raises(Rejected) as info:
        GAME.apply(new_game(), 0, deck_move(["x" * 1000] * 5000))
    reason = info.value.reason
    assert info.value.code == "bad_deck"
    assert "the deck has 5000 cards" in reason
    assert "position 10 (" in reason and "position 11 (" not in reason
    assert "and 4990 more" in reason
    assert len(reason) < 1000
