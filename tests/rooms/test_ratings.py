"""playhall.ratings: who is rated, their places, the update and the growing uncertainty."""

from __future__ import annotations

import math
from typing import Any

import pytest

from playhall import ratings
from playhall.ratings import Rating

PEOPLE = [{"player": "a", "bot": False}, {"player": "b", "bot": False}]


def test_only_games_between_different_people_played_to_an_end_are_rated() -> None:
    won = {"winners": [0], "scores": [1, 0], "reason": "target_reached"}
    assert ratings.rated_players(True, PEOPLE, won)
    assert not ratings.rated_players(False, PEOPLE, won)  # the room did not ask for it
    assert not ratings.rated_players(True, [PEOPLE[0], {"player": None, "bot": True}], won)
    assert not ratings.rated_players(True, PEOPLE[:1], won)  # solo
    assert not ratings.rated_players(True, [PEOPLE[0], PEOPLE[0]], won)  # one person twice
    for reason in ("abandoned", "closed_by_operator"):  # the server ended it: no result
        ended: dict[str, Any] = {"winners": [], "scores": [], "reason": reason}
        assert not ratings.rated_players(True, PEOPLE, ended)


@pytest.mark.parametrize(
    "outcome, stood_in, expected",
    [
        ({"winners": [1]}, (), [2, 1, 2]),
        ({"winners": [0, 2]}, (), [1, 2, 1]),
        ({"winners": []}, (), [1, 1, 1]),  # a draw
        ({"winners": [0], "left": [2]}, (), [1, 2, 3]),
        ({"winners": [0]}, (1,), [1, 3, 2]),  # a stand-in finished seat 1's game
        ({"winners": [1]}, (1,), [2, 3, 2]),  # ... and won it: still last
        ({"winners": []}, (2,), [1, 1, 2]),
    ],
)
def test_places(outcome: dict, stood_in: tuple[int, ...], expected: list[int]) -> None:
    assert ratings.places(outcome, 3, frozenset(stood_in)) == expected


def test_results_of_seats() -> None:
    assert [ratings.result_of({"winners": [1]}, s, 2) for s in (0, 1)] == ["l", "w"]
    assert ratings.result_of({"winners": []}, 0, 2) == "d"
    assert ratings.result_of({"winners": [], "reason": "abandoned"}, 0, 2) == ""
    assert ratings.result_of({"winners": [], "reason": "closed_by_operator"}, 0, 1) == ""
    # Mandala solo: nobody won means Master Yoga (who has no seat) did.
    assert ratings.result_of({"winners": [], "reason": "harvest"}, 0, 1) == "l"
    assert ratings.result_of({"winners": [0], "reason": "harvest"}, 0, 1) == "w"


def test_the_winner_gains_what_the_loser_loses_and_both_grow_surer() -> None:
    a, b = ratings.update([Rating(), Rating()], [1, 2], 1000.0, 0.25)
    assert a.mu > ratings.START_MU > b.mu
    assert math.isclose(a.mu - ratings.START_MU, ratings.START_MU - b.mu, rel_tol=1e-9)
    assert a.sigma < ratings.START_SIGMA and b.sigma < ratings.START_SIGMA
    assert (a.games, a.at) == (1, 1000.0)


def test_uncertainty_grows_with_days_without_a_game_up_to_a_new_players() -> None:
    day = 86400.0
    rating = Rating(30.0, 3.0, at=0.0 + day, games=40)
    assert rating.live_sigma(day, 0.25) == 3.0
    assert math.isclose(rating.live_sigma(day + 365 * day, 0.25), math.sqrt(9 + 0.0625 * 365))
    assert rating.live_sigma(day + 10_000 * day, 0.25) == ratings.START_SIGMA
    assert not ratings.provisional(rating, day, 0.25, 6.0)
    assert ratings.provisional(rating, day + 3 * 365 * day, 0.25, 6.0)
    assert ratings.provisional(Rating(), 0.0, 0.25, 9.0)  # never rated: provisional anyway
