"""Malformed, out-of-turn and after-the-end moves: clear codes, never a crash or a change."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.games.contract import Rejected
from playhall.games.math_card import GAME
from tests.games.conformance import encode
from tests.games.test_math_card_support import FILLER, action_state, play, started


@pytest.mark.parametrize("move", [
    None, [], "end_turn", {}, {"type": 3}, {"type": "fly"},
    {"type": "end_turn", "junk": 1},
    {"type": "set_value", "card": FILLER},
    {"type": "set_value", "card": FILLER, "lane": "0"},
    {"type": "set_value", "card": FILLER, "lane": True},
    {"type": "set_value", "card": FILLER, "lane": 5},
    {"type": "set_value", "card": 5, "lane": 0},
    {"type": "set_value", "card": "999999", "lane": 0},
    {"type": "move_value", "from": [0], "lane": 1},
    {"type": "move_value", "from": (0, 0), "lane": 1},
    {"type": "move_value", "from": [0, 9], "lane": 1},
    {"type": "assert", "card": "000018", "area": "middle"},
    {"type": "assert", "card": "000018", "area": "left", "under": 7},
    {"type": "legend", "card": "000023", "replace": 4},
    {"type": "rearrange", "cycle": [[0, 1]] * 4},
    {"type": "move_assertion", "area": "left", "index": 0, "to": False},
    {"type": "submit_deck", "cards": "000005"},
])
def test_malformed_moves_are_bad_move(move: Any) -> None:
    state = action_state(hands=([FILLER, "000018", "000023"], []))
    before = encode(state)
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, move)
    assert err.value.code == "bad_move"
    assert encode(state) == before


def test_submit_deck_with_junk_cards_is_bad_move() -> None:
    with pytest.raises(Rejected) as err:
        GAME.apply(GAME.setup(2, {}, 1), 0, {"type": "submit_deck", "cards": [1] * 40})
    assert err.value.code == "bad_move"


def test_out_of_turn_and_wrong_seat() -> None:
    state = action_state(hands=([FILLER], [FILLER]))
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 1, {"type": "end_turn"})
    assert err.value.code == "not_your_turn"
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 2, {"type": "end_turn"})
    assert err.value.code == "not_your_turn"


def test_illegal_moves_name_the_problem() -> None:
    state = action_state(hands=([FILLER], []))
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "set_value", "card": "000006", "lane": 0})
    assert err.value.code == "illegal_move" and "not in your hand" in err.value.reason
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "choose", "card": FILLER})
    assert err.value.code == "illegal_move"
    state = play(state, 0, {"type": "set_value", "card": FILLER, "lane": 0})
    state["players"][0]["hand"].append(FILLER)
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "set_value", "card": FILLER, "lane": 1})
    assert "value action" in err.value.reason


def test_deck_building_is_simultaneous_and_one_shot() -> None:
    state = GAME.setup(2, {}, 4)
    assert GAME.to_act(state) == [0, 1]
    moves = GAME.legal_moves(state, 1)
    assert {"type": "submit_deck", "cards": [], "template": True} in moves
    assert {m["deck"] for m in moves if m["type"] == "pick_deck"} == {"counting", "logic"}
    state = play(state, 1, {"type": "pick_deck", "deck": "logic"})
    assert GAME.to_act(state) == [0]
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 1, {"type": "pick_deck", "deck": "counting"})
    assert err.value.code == "not_your_turn"
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "pick_deck", "deck": "nope"})
    assert err.value.code == "illegal_move"


def test_no_deck_submission_once_play_has_started() -> None:
    state = started()
    seat = GAME.to_act(state)[0]
    with pytest.raises(Rejected) as err:
        GAME.apply(state, seat, {"type": "submit_deck", "cards": [FILLER] * 40})
    assert err.value.code == "illegal_move"


def test_game_over_refuses_everything() -> None:
    state = play(started(), 0, {"type": "resign"})
    assert GAME.to_act(state) == [] and GAME.legal_moves(state, 0) == []
    for move in ({"type": "end_turn"}, {"type": "resign"}, {"type": "fly"}):
        with pytest.raises(Rejected) as err:
            GAME.apply(state, 1, move)
        assert err.value.code == "game_over"


def test_apply_does_not_mutate_its_input() -> None:
    state = started(seed=9)
    before = encode(state)
    seat = GAME.to_act(state)[0]
    for move in GAME.legal_moves(state, seat)[:40]:
        GAME.apply(state, seat, move)
        assert encode(state) == before


def test_two_seats_only() -> None:
    with pytest.raises(Rejected):
        GAME.setup(3, {}, 1)
    assert GAME.describe()["min_seats"] == GAME.describe()["max_seats"] == 2
