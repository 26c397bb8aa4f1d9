"""The game contract (server/playhall/games/contract.py), checked for every registered game at
each of its quick tables: a new game package is held to it with no line added here.

The checks are :func:`playhall.games.conformance.check_random_game` (its module lists them), the
same ones ``playhall check-game`` runs; here Hypothesis chooses the seeds.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playhall.catalog import get_game
from playhall.games.conformance import Violation, check_random_game

from .conformance import quick_cases

CASES = quick_cases()


@pytest.mark.parametrize("game_id, seats, options", CASES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62))
def test_random_legal_games_keep_the_contract_and_end(
    game_id: str, seats: int, options: dict[str, Any], seed: int
) -> None:
    game = get_game(game_id)
    assert game is not None
    check_random_game(game, seats, options, seed)


def test_a_game_that_misstates_what_a_seat_off_turn_may_do_is_caught() -> None:
    game = copy.copy(get_game("mantis"))
    assert game is not None and game.moves_off_turn == []
    game.moves_off_turn = [{"type": "score"}]  # a seat not being waited on never may
    with pytest.raises(Violation, match="moves_off_turn"):
        check_random_game(game, 2, {}, 1)
