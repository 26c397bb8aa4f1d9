"""The Mandragora terminal renderer draws real engine views: every stack in order, scores,
whose turn, the last move and the result, using nothing but the view."""

from __future__ import annotations

import ast
from pathlib import Path

from playhall.games.mandragora import GAME
from playhall_client.render import mandragora
from playhall_client.render import move_label as generic_move_label
from playhall_client.render import render as generic_render


def test_render_shows_board_in_seed_layout_with_ordered_stacks() -> None:
    state = GAME.setup(2, GAME.normalize_options({"pattern": "D", "first": 0}), 1)
    state = GAME.apply(state, 0, {"type": "sow", "area": 2}).state  # K>3 M>4 P>5
    text = mandragora.render(GAME.view(state, 1), 1)
    lines = text.splitlines()
    top = next(line for line in lines if "8:" in line)
    middle = next(line for line in lines if "2:" in line and "4:" in line)
    bottom = next(line for line in lines if "1:" in line and "0:" in line)
    assert lines.index(top) < lines.index(middle) < lines.index(bottom)
    # Seed layout: 9 8 7 6 left to right on top, 1 3 5 0 along the bottom.
    assert top.index("9:") < top.index("8:") < top.index("7:") < top.index("6:")
    assert bottom.index("1:") < bottom.index("3:") < bottom.index("5:") < bottom.index("0:")
    assert "3:MCMK" in bottom and "4:KMKM" in middle and "5:MMMP" in bottom and "2:." in middle
    # Seats as people count them: the wire's seat 1 is "seat 2".
    assert "seat 2 (you): 0 pts" in text
    assert "To move: seat 2 (you)" in text
    assert "Last: seat 1 sowed 2: K>3 M>4 P>5" in text
    # Seat 1 may sow 4, 6, 7, 8 (2 is empty): starred, and seat 0's areas are not.
    assert "6:MMM*" in top and "4:KMKM*" in middle and "1:MMM*" not in bottom
    assert "Citrullus" in text


def test_render_shows_the_result_and_works_through_the_generic_entry_point() -> None:
    # Seat 0 sows its last piece 5 -> 0 and cannot move on its extra turn: 4-3 to seat 0.
    state = GAME.setup(2, GAME.normalize_options({"pattern": "A", "first": 1}), 1)
    state["areas"] = ["", "", "", "", "", "C", "", "MMM", "", ""]
    state["turn"], state["scores"] = 0, [0, 3]
    state = GAME.apply(state, 0, {"type": "sow", "area": 5}).state
    text = generic_render("mandragora", GAME.view(state, None), None)
    assert "Game over: seat 1 wins 4-3 (seat 1 had no move)" in text
    assert "*" not in text.split("stacks read")[0]  # nothing may be sown any more


def test_move_label() -> None:
    assert mandragora.move_label({"type": "sow", "area": 4}) == "sow area 4"
    assert generic_move_label("mandragora", {"type": "sow", "area": 7}) == "sow area 7"


def test_renderer_imports_only_the_standard_library() -> None:
    source = Path(mandragora.__file__).read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                alias.name for alias in node.names]
            assert not any(n.startswith("playhall") for n in names), names
