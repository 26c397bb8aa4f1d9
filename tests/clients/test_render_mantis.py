"""The Mantis terminal renderer draws real engine views, from the view alone."""

from __future__ import annotations

import ast
from pathlib import Path

from playhall.games.mantis import GAME
from playhall.games.mantis.cards import BACK, BACK_NAMES
from playhall_client.render import mantis
from playhall_client.render import move_label as generic_move_label
from playhall_client.render import render as generic_render


def _midgame() -> dict:
    state = GAME.setup(3, GAME.normalize_options({}), 21)
    for _ in range(6):
        seat = GAME.to_act(state)[0]
        state = GAME.apply(state, seat, GAME.legal_moves(state, seat)[1]).state
    return state


def test_render_shows_board_turn_and_top_back() -> None:
    state = _midgame()
    view = GAME.view(state, 1)
    text = mantis.render(view, 1)
    top = BACK_NAMES[BACK[state["deck"][state["next"]]]]
    assert f"Top card back: {' / '.join(top)}" in text
    assert f"{view['cards_left']} cards left" in text
    assert "seat 2 (you)" in text  # the wire's seat 1, as people count
    rows = [line for line in text.splitlines() if "score" in line and "tank" in line]
    assert len(rows) == 3
    turn = view["turn"]
    assert rows[turn].startswith(">")
    for n, tank in enumerate(view["tanks"]):
        faces = {code.split(":")[0] for code in tank}
        assert all(f"{face}×" in rows[n] for face in faces)
        assert f"score {view['scores'][n]:>3}" in rows[n]
    assert text.startswith("Mantis — first to 10 points")
    assert text.splitlines()[2].startswith("Last: seat ")
    # Through the package's dispatcher too.
    assert generic_render("mantis", view, 1) == text


def test_spectator_and_finished_game() -> None:
    state = GAME.setup(2, GAME.normalize_options({"target": 1}), 3)
    spectator = mantis.render(GAME.view(state, None), None)
    assert "(you)" not in spectator
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        state = GAME.apply(state, seat, {"type": "score"}).state
    outcome = GAME.outcome(state)
    assert outcome is not None
    (winner,) = outcome.winners
    assert "Game over (target reached)" in mantis.render(GAME.view(state, None), None)
    assert "You win." in mantis.render(GAME.view(state, winner), winner)
    assert f"Seat {winner + 1} wins." in mantis.render(GAME.view(state, 1 - winner), 1 - winner)


def test_move_labels_are_distinct_and_readable() -> None:
    state = GAME.setup(4, GAME.normalize_options({}), 9)
    seat = GAME.to_act(state)[0]
    labels = [mantis.move_label(m) for m in GAME.legal_moves(state, seat)]
    assert len(set(labels)) == 4
    assert labels[0].startswith("Score")
    assert labels[1] == f"Steal from seat {GAME.legal_moves(state, seat)[1]['target'] + 1}"
    assert generic_move_label("mantis", {"type": "score"}) == labels[0]


def test_renderer_imports_only_the_standard_library() -> None:
    source = Path(mantis.__file__).read_text()
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    assert names <= {"__future__", "typing"}


def test_events_read_as_sentences_with_seats_counted_from_1() -> None:
    view = {"you": 0}
    flip = {"type": "flip", "seat": 0, "action": "steal", "target": 1, "card": "x",
            "colour": "blue"}
    assert mantis.describe(flip, view) == "seat 1 (you) tries to steal from seat 2: flips blue"
    stolen = {"type": "stolen", "seat": 0, "from": 1, "colour": "blue", "count": 2}
    assert mantis.describe(stolen, view) == "seat 1 (you) steals 2 blue from seat 2"
    assert mantis.describe({"type": "to_tank", "seat": 1, "card": "x"}, view) == (
        "no match: the card goes into seat 2's tank")
    assert mantis.describe({"type": "game_over"}, view) is None
