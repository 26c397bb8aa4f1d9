"""Property tests over random legal games in both modes, determinism, malformed moves, the bot."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall.games.contract import Move, Rejected, State
from playhall.games.mandala import GAME
from playhall.games.rng import Rng, seed_state

from .conformance import encode, play_random_game, replay
from .test_mandala_support import check_invariants, counts, position

MODES = [("standard", 2, {}), ("solo", 1, {"mode": "solo"}),
         ("solo-simple", 1, {"mode": "solo", "yoga": "simple"})]
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)


def disguised(state: State, viewer: int | None) -> State:
    """The same position with everything ``viewer`` may not see changed: other players' hands
    and cups re-coloured (sizes kept) and the deck order reversed and re-coloured."""
    other = dict(state)
    other["players"] = [dict(p) for p in state["players"]]
    for index, player in enumerate(other["players"]):
        if index != viewer:
            player["hand"] = counts(purple=sum(player["hand"].values()))
            player["cup"] = counts(purple=sum(player["cup"].values()))
    other["deck"] = ["red"] * len(state["deck"])
    other["rng"] = seed_state(0xFFFF)
    return other


def check_all(state: State) -> None:
    check_invariants(state)
    if state["phase"] == "over":
        return
    for viewer in [*range(state["seats"]), None]:
        view = GAME.view(state, viewer)
        for index, player in enumerate(view["players"]):
            assert ("hand" in player) == (index == viewer)
            assert ("cup" in player) == (index == viewer)
        assert encode(view) == encode(GAME.view(disguised(state, viewer), viewer)), (
            f"viewer {viewer} sees something hidden")


@pytest.mark.parametrize(("name", "seats", "options"), MODES, ids=[m[0] for m in MODES])
@given(seed=SEEDS)
def test_random_games_conserve_cards_keep_colour_rule_hide_cards_and_end(
    name: str, seats: int, options: dict[str, Any], seed: int
) -> None:
    state, outcome, steps = play_random_game(GAME, seats, options, seed, max_steps=3000,
                                             check=check_all)
    assert outcome.reason in ("river_full", "final_mandala", "cards_exhausted")
    assert len(outcome.scores) == 2  # [player 0, player 1]; in solo [human, Master Yoga]
    assert GAME.auto_delay(state) is None
    assert steps > 0


def record_game(
    options: dict[str, Any], seats: int, seed: int, bot_seats: tuple[int, ...] = ()
) -> tuple[State, list[tuple[int | None, Move | str]]]:
    """Play a game (random moves, or the bot for ``bot_seats``) and keep its move list."""
    state = GAME.setup(seats, GAME.normalize_options(options), seed)
    rng = Rng(seed)
    log: list[tuple[int | None, Move | str]] = []
    while GAME.outcome(state) is None:
        if GAME.auto_delay(state) is not None:
            state = GAME.apply_auto(state).state
            log.append((None, {}))
            continue
        seat = GAME.to_act(state)[0]
        moves = GAME.legal_moves(state, seat)
        if seat in bot_seats:
            move = GAME.bot_move(GAME.view(state, seat), seat, moves, rng.next64())
            assert move in moves
        else:
            move = rng.choice(moves)
        state = GAME.apply(state, seat, move).state
        log.append((seat, move))
    return state, log


@pytest.mark.parametrize(("name", "seats", "options"), MODES, ids=[m[0] for m in MODES])
@given(seed=SEEDS)
def test_replay_reaches_byte_identical_state(
    name: str, seats: int, options: dict[str, Any], seed: int
) -> None:
    final, log = record_game(options, seats, seed)
    assert encode(replay(GAME, seats, options, seed, log)) == encode(final)
    assert encode(record_game(options, seats, seed)[0]) == encode(final)


MALFORMED: list[Any] = [
    None, "mountain", [], {}, {"type": 3}, {"type": "pass"},
    {"type": "mountain", "mandala": 0},
    {"type": "mountain", "mandala": 0, "colour": "red", "extra": 1},
    {"type": "mountain", "mandala": 2, "colour": "red"},
    {"type": "mountain", "mandala": True, "colour": "red"},
    {"type": "mountain", "mandala": "0", "colour": "red"},
    {"type": "mountain", "mandala": 0, "colour": "pink"},
    {"type": "mountain", "mandala": 0, "colour": ["red"]},
    {"type": "field", "mandala": 0, "colour": "red"},
    {"type": "field", "mandala": 0, "colour": "red", "count": 0},
    {"type": "field", "mandala": 0, "colour": "red", "count": 1.0},
    {"type": "discard", "colour": "red", "count": "2"},
    {"type": "choose"},
    {"type": "choose", "colour": None},
]


@pytest.mark.parametrize("move", MALFORMED, ids=[repr(m)[:40] for m in MALFORMED])
def test_malformed_moves_are_bad_move(move: Any) -> None:
    state = position()
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, move)
    assert err.value.code == "bad_move"


def test_well_formed_but_forbidden_moves_are_illegal_or_not_your_turn() -> None:
    state = position(hands=(counts(red=2), counts(red=2)))
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "discard", "colour": "blue", "count": 1})
    assert err.value.code == "illegal_move"
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "choose", "colour": "red"})
    assert err.value.code == "illegal_move"
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 1, {"type": "discard", "colour": "red", "count": 1})
    assert err.value.code == "not_your_turn"
    solo = position("solo", slot=1)
    with pytest.raises(Rejected) as err:
        GAME.apply(solo, 0, {"type": "discard", "colour": "red", "count": 1})
    assert err.value.code == "not_your_turn"
    assert GAME.legal_moves(solo, 0) == []


def test_bot_is_deterministic_and_picks_legal_moves() -> None:
    state = GAME.setup(2, GAME.normalize_options({}), 4)
    seat = GAME.to_act(state)[0]
    moves = GAME.legal_moves(state, seat)
    view = GAME.view(state, seat)
    picks = {encode(GAME.bot_move(view, seat, moves, 7)) for _ in range(3)}
    assert len(picks) == 1
    assert GAME.bot_move(view, seat, moves, 7) in moves


def test_bot_takes_the_colour_worth_most_in_a_resolution() -> None:
    # Player 0 picks: blue sits in space 3 of the river (3 cards -> 9 points); red would be new.
    state = position(mountains=([("red", 1), ("blue", 3)], [("red", 1)]),
                     fields=((counts(green=2), counts(yellow=1)),),
                     rivers=(["orange", "purple", "blue"], []))
    state["phase"] = "resolve"
    state["resolution"] = {"mandala": 0, "completer": 0, "chooser": 0, "final": False}
    move = GAME.bot_move(GAME.view(state, 0), 0, GAME.legal_moves(state, 0), 1)
    assert move == {"type": "choose", "colour": "blue"}


def test_bot_beats_random_play_in_the_standard_game() -> None:
    wins = 0
    games = 30
    for seed in range(games):
        bot_seat = seed % 2
        final, _ = record_game({}, 2, 1000 + seed, bot_seats=(bot_seat,))
        outcome = GAME.outcome(final)
        assert outcome is not None
        wins += outcome.winners == [bot_seat]
    assert wins >= games * 0.7, f"bot won only {wins}/{games} against random play"
