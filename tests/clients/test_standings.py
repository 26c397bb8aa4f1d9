"""The terminal's lines for a player's finished games: a game the server ended (abandoned, or
closed by an operator) is shown as what it was, never as a draw or a loss."""

from __future__ import annotations

from typing import Any

import pytest

from playhall_client.standings import game_line


def game(reason: str, winners: list[int], seats: int = 2) -> dict[str, Any]:
    people = [{"player": f"p{i}", "name": f"P{i}"} for i in range(seats)]
    outcome = {"winners": winners, "scores": [], "reason": reason}
    return {"at": 0.0, "game": "mantis", "room": "r1", "seats": people, "outcome": outcome}


@pytest.mark.parametrize(
    ("reason", "winners", "seats", "result"),
    [
        ("target_reached", [0], 2, "won"),
        ("target_reached", [1], 2, "lost"),
        ("target_reached", [], 2, "draw"),
        ("harvest", [], 1, "lost"),  # solo: the game itself won
        ("abandoned", [], 2, "abandoned"),
        ("closed_by_operator", [], 2, "closed by operator"),
        ("closed_by_operator", [], 1, "closed by operator"),
    ],
)
def test_a_games_result_as_its_player_reads_it(
    reason: str, winners: list[int], seats: int, result: str
) -> None:
    line = game_line(game(reason, winners, seats), "p0", str.title, now=30.0)
    assert f": {result} ({reason})" in line
