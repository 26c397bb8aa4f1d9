"""The Math Magic Card terminal renderer draws real engine views from the view alone."""

from __future__ import annotations

from pathlib import Path

from playhall.games.math_card import GAME
from playhall.games.rng import Rng
from playhall_client.render import math_card
from playhall_client.render import render as render_any


def _midgame(seed: int, steps: int) -> dict:
    state = GAME.setup(2, {}, seed)
    rng = Rng(seed)
    for n in range(steps):
        if GAME.outcome(state) is not None:
            break
        seat = GAME.to_act(state)[0]
        moves = GAME.legal_moves(state, seat)
        move = GAME.bot_move(GAME.view(state, seat), seat, moves, n) if rng.below(2) \
            else rng.choice([m for m in moves if m["type"] != "resign"])
        if move.get("template"):
            move = {"type": "pick_deck", "deck": "logic"}
        state = GAME.apply(state, seat, move).state
    return state


def test_deckbuild_view() -> None:
    text = math_card.render(GAME.view(GAME.setup(2, {}, 1), 0), 0)
    assert "deckbuild" in text and "counting" in text and "40-60" in text


def test_midgame_view_shows_board_and_only_own_hand() -> None:
    state = _midgame(3, 40)
    seat = 0
    view = GAME.view(state, seat)
    text = math_card.render(view, seat)
    assert "lane 2 (public)" in text and "Seat 2:" in text and "Your hand:" in text
    assert "Seat 1 (you):" in text and "Seat 0" not in text and "seat 0" not in text
    assert f"VP {view['estimate']['vp'][0]} to {view['estimate']['vp'][1]}" in text
    for cid in view["players"][0]["hand"]:
        assert view["pool"][cid]["name"] in text
    spectator = math_card.render(GAME.view(state, None), None)
    assert "Your hand" not in spectator
    assert render_any("math_card", view, seat) == text


def test_hidden_puzzle_is_drawn_as_a_question_mark() -> None:
    state = _midgame(3, 10)
    state["areas"]["left"].append({"card": "000021", "owner": 1, "under": "000012"})
    mine = math_card.render(GAME.view(state, 1), 1)
    theirs = math_card.render(GAME.view(state, 0), 0)
    assert "Puzzle Assertion (???) over 9" in mine
    assert "Puzzle Assertion (???) over ?" in theirs


def test_finished_game_shows_the_result() -> None:
    state = _midgame(5, 2000)
    assert GAME.outcome(state) is not None
    text = math_card.render(GAME.view(state, None), None)
    assert "Game over" in text and "VP" in text


def test_every_legal_move_has_a_distinct_label() -> None:
    for seed, steps in ((3, 0), (3, 25), (8, 60)):
        state = _midgame(seed, steps)
        for seat in (0, 1):
            moves = GAME.legal_moves(state, seat)
            labels = [math_card.move_label(m) for m in moves]
            assert all(labels) and len(set(labels)) == len(labels)


def test_renderer_imports_only_the_standard_library() -> None:
    source = Path(math_card.__file__).read_text()
    assert "playhall." not in source.replace("playhall_client", "")
