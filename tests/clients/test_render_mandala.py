"""The Mandala terminal renderer draws real engine views, and only what the view holds."""

from __future__ import annotations

from playhall.games.mandala import GAME
from playhall_client.render import mandala as render_mandala
from playhall_client.render import move_label, render


def test_standard_view_shows_own_hand_and_board_not_the_opponents_hand() -> None:
    state = GAME.setup(2, GAME.normalize_options({}), 3)
    seat = GAME.to_act(state)[0]
    other = 1 - seat
    state["players"][seat]["hand"] = {c: 0 for c in state["players"][seat]["hand"]}
    state["players"][seat]["hand"].update(purple=6)
    state["players"][other]["hand"] = {c: 0 for c in state["players"][other]["hand"]}
    state["players"][other]["hand"].update(orange=6)
    text = render("mandala", GAME.view(state, seat), seat)
    assert "purplex6" in text and "orangex6" not in text
    assert "LEFT MANDALA" in text and "RIGHT MANDALA" in text
    assert f"Player {seat + 1} (you) to play" in text
    for stack in state["mandalas"][0]["mountain"]:
        assert f"{stack['colour']}x{stack['count']}" in text
    spectator = render("mandala", GAME.view(state, None), None)
    assert "purplex6" not in spectator and "(you)" not in spectator


def test_solo_view_shows_master_yoga_and_his_draws() -> None:
    state = GAME.setup(1, GAME.normalize_options({"mode": "solo"}), 3)
    state = GAME.apply(state, 0, GAME.legal_moves(state, 0)[0]).state
    result = GAME.apply_auto(state)
    text = render_mandala.render(GAME.view(result.state, 0), 0)
    assert "solo vs Master Yoga" in text
    assert "Master Yoga plays his right move" in text
    drawn = [e["colour"] for e in result.events if e["type"] == "yoga_draw"]
    assert drawn and f"Master Yoga drew {drawn[0]}" in text


def test_resolution_and_game_over_are_announced() -> None:
    state = GAME.setup(2, GAME.normalize_options({}), 3)
    state["phase"] = "resolve"
    state["resolution"] = {"mandala": 1, "completer": 0, "chooser": 1, "final": True}
    text = render("mandala", GAME.view(state, 1), 1)
    assert "Resolving the right mandala: Player 2 (you) chooses" in text
    assert "<< resolving" in text
    state["phase"], state["end"], state["resolution"] = "over", "final_mandala", None
    state["players"][0]["river"] = ["red"]
    state["players"][0]["cup"]["red"] = 5
    text = render("mandala", GAME.view(state, None), None)
    assert "Game over: Player 1 won (final_mandala)" in text and "score 5" in text


def test_move_labels() -> None:
    assert move_label("mandala", {"type": "mountain", "mandala": 0, "colour": "red"}) == (
        "red to the left mountain (then draw)")
    assert move_label("mandala", {"type": "field", "mandala": 1, "colour": "blue",
                                  "count": 2}) == "2 blue to your right field"
    assert move_label("mandala", {"type": "discard", "colour": "green", "count": 1}) == (
        "discard 1 green (then draw as many)")
    assert move_label("mandala", {"type": "choose", "colour": "purple"}) == "take purple"
    state = GAME.setup(2, GAME.normalize_options({}), 9)
    seat = GAME.to_act(state)[0]
    labels = [move_label("mandala", m) for m in GAME.legal_moves(state, seat)]
    assert len(set(labels)) == len(labels)  # every legal move reads differently
