"""Leaving a game (``Game.leave``): the rules' "All games: leaving" section and Mantis Ruling 10.

A player may resign at any time while the game is on, and a clock may end a player's game
(reason ``timeout``). In a two-player game the other player wins; in Mandala solo Master Yoga
wins; in Mantis with three or more players the seat drops out and play goes on without it.
"""

from __future__ import annotations

from typing import Any

import pytest

from playhall.catalog import get_game
from playhall.games.contract import Game, Rejected, State
from playhall.games.mantis import GAME as MANTIS
from playhall.games.mantis.engine import final_result

from .conformance import encode

TWO_SEAT_TABLES = [
    ("card_battle", {"turn_delay_ms": 0}),
    ("mandala", {}),
    ("mandragora", {}),
    ("mantis", {}),
    ("math_card", {}),
]


def _game(game_id: str) -> Game:
    game = get_game(game_id)
    assert game is not None
    return game


def _setup(game: Game, seats: int, options: dict[str, Any], seed: int = 7) -> State:
    return game.setup(seats, game.normalize_options(options), seed)


@pytest.mark.parametrize("game_id, options", TWO_SEAT_TABLES)
@pytest.mark.parametrize("reason", ["resignation", "timeout"])
@pytest.mark.parametrize("seat", [0, 1])
def test_leaving_a_two_player_game_hands_the_other_the_win(
    game_id: str, options: dict[str, Any], reason: str, seat: int
) -> None:
    """Rules, "leaving": in a two-player game the other player wins, whoever's turn it is."""
    game = _game(game_id)
    state = _setup(game, 2, options)
    before = encode(state)
    applied = game.leave(state, seat, reason)
    assert encode(state) == before, "leave changed the state it was given"
    outcome = game.outcome(applied.state)
    assert outcome is not None
    assert outcome.winners == [1 - seat]
    assert outcome.reason == reason
    assert outcome.left == (seat,)
    assert outcome.as_dict()["left"] == [seat]
    assert game.to_act(applied.state) == []
    assert game.auto_delay(applied.state) is None
    assert applied.events == [
        {"type": "left", "seat": seat, "reason": reason},
        {"type": "game_over", **outcome.as_dict()},
    ]
    with pytest.raises(Rejected) as refused:
        game.leave(applied.state, 1 - seat, reason)
    assert refused.value.code == "game_over"


def test_card_battle_player_may_leave_while_the_battle_runs() -> None:
    """Leaving is open "at any time while the game is on": also while nobody is to act."""
    game = _game("card_battle")
    state = _setup(game, 2, {"turn_delay_ms": 0})
    for seat in (0, 1):
        state = game.apply(state, seat, {"type": "pick_deck", "deck": "balanced"}).state
    assert game.to_act(state) == [] and game.auto_delay(state) is not None
    state = game.leave(state, 0, "resignation").state
    outcome = game.outcome(state)
    assert outcome is not None and outcome.winners == [1]
    assert game.auto_delay(state) is None, "the battle goes on after a player left"


@pytest.mark.parametrize("reason", ["resignation", "timeout"])
def test_mandala_solo_leaving_gives_master_yoga_the_win(reason: str) -> None:
    """Rules, "leaving": in Mandala solo, Master Yoga wins (he has no seat: no winner listed)."""
    game = _game("mandala")
    state = _setup(game, 1, {"mode": "solo", "yoga_delay_ms": 0})
    applied = game.leave(state, 0, reason)
    outcome = game.outcome(applied.state)
    assert outcome is not None
    assert (outcome.winners, outcome.reason, outcome.left) == ([], reason, (0,))
    assert game.view(applied.state, 0)["outcome"]["left"] == [0]
    with pytest.raises(Rejected) as refused:
        game.leave(state, 1, reason)  # Master Yoga's player slot is not a seat
    assert refused.value.code == "bad_move"


@pytest.mark.parametrize("game_id, options", TWO_SEAT_TABLES)
@pytest.mark.parametrize("seat, reason", [(0, "bored"), (0, None), (5, "timeout"), (-1, "timeout")])
def test_a_bad_leave_is_refused_and_changes_nothing(
    game_id: str, options: dict[str, Any], seat: Any, reason: Any
) -> None:
    game = _game(game_id)
    state = _setup(game, 2, options)
    before = encode(state)
    with pytest.raises(Rejected) as refused:
        game.leave(state, seat, reason)
    assert refused.value.code == "bad_move"
    assert encode(state) == before


# -- Mantis, Ruling 10 -----------------------------------------------------------------------


def _mantis(seats: int, seed: int = 11) -> State:
    return _setup(MANTIS, seats, {}, seed)


def test_ruling_10_a_leaver_drops_out_and_play_goes_on() -> None:
    """Ruling 10: with two or more others still playing, the seat drops out: tank and score pile
    set aside, nobody may steal from them, turns skip them."""
    state = _mantis(4)
    turn = state["turn"]
    leaver = (turn + 1) % 4
    applied = MANTIS.leave(state, leaver, "timeout")
    new = applied.state
    assert applied.events == [{"type": "left", "seat": leaver, "reason": "timeout"}]
    assert MANTIS.outcome(new) is None
    assert new["out"] == [leaver]
    assert new["tanks"][leaver] == state["tanks"][leaver]  # set aside, untouched
    assert MANTIS.view(new, None)["left"] == [leaver]
    # Nobody may steal from them.
    assert {"type": "steal", "target": leaver} not in MANTIS.legal_moves(new, turn)
    with pytest.raises(Rejected) as refused:
        MANTIS.apply(new, turn, {"type": "steal", "target": leaver})
    assert refused.value.code == "illegal_move"
    # Turns skip them: the player before them hands the turn on past them.
    after = MANTIS.apply(new, turn, {"type": "score"}).state
    assert after["turn"] == (leaver + 1) % 4
    # Their tank never changes again.
    assert after["tanks"][leaver] == state["tanks"][leaver]


def test_ruling_10_the_seat_to_act_leaving_passes_the_turn_on() -> None:
    state = _mantis(3)
    turn = state["turn"]
    new = MANTIS.leave(state, turn, "resignation").state
    assert MANTIS.to_act(new) == [(turn + 1) % 3]


def test_ruling_10_when_one_player_remains_that_player_wins_at_once() -> None:
    state = _mantis(3)
    state = MANTIS.leave(state, 0, "resignation").state
    applied = MANTIS.leave(state, 2, "timeout")
    outcome = MANTIS.outcome(applied.state)
    assert outcome is not None
    assert (outcome.winners, outcome.reason, outcome.left) == ([1], "timeout", (0, 2))
    assert applied.events[-1] == {"type": "game_over", **outcome.as_dict()}
    assert MANTIS.to_act(applied.state) == []


def test_ruling_10_with_two_players_leaving_hands_the_other_the_win() -> None:
    state = _mantis(2)
    outcome = MANTIS.outcome(MANTIS.leave(state, 1, "resignation").state)
    assert outcome is not None and outcome.winners == [0] and outcome.left == (1,)


def test_ruling_10_a_leaver_wins_nothing_when_the_deck_runs_out() -> None:
    """Ruling 8's count at the end leaves out the seats that left, whatever their piles."""
    piles = [[1, 2, 3, 4], [5], [6, 7]]
    tanks = [[], [8], [9]]
    assert final_result(piles, tanks)["winners"] == [0]
    result = final_result(piles, tanks, [0])
    assert result["winners"] == [2]
    assert result["scores"] == [4, 1, 2]


def test_ruling_10_a_game_played_out_after_a_leave_lists_the_leaver() -> None:
    state = _mantis(3, seed=3)
    state = MANTIS.leave(state, 1, "resignation").state
    while MANTIS.outcome(state) is None:
        seat = MANTIS.to_act(state)[0]
        assert seat != 1
        state = MANTIS.apply(state, seat, {"type": "score"}).state
    outcome = MANTIS.outcome(state)
    assert outcome is not None and 1 not in outcome.winners and outcome.left == (1,)
    assert MANTIS.view(state, None)["outcome"]["left"] == [1]


def test_ruling_10_a_seat_leaves_once() -> None:
    state = MANTIS.leave(_mantis(4), 2, "resignation").state
    with pytest.raises(Rejected) as refused:
        MANTIS.leave(state, 2, "timeout")
    assert refused.value.code == "illegal_move"
    with pytest.raises(Rejected) as refused:
        MANTIS.leave(state, 4, "timeout")  # a seat the table does not have
    assert refused.value.code == "bad_move"
