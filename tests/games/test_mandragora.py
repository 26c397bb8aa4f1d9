"""Mandragora Mania, rule by rule: the eight rulings, the seed's examples, and the edge cases
the issue names. Expected values are worked out by hand from the rules text (noted inline), not
copied from the engine's output."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.games.contract import Applied, Rejected, State
from playhall.games.mandragora import GAME
from tests.games.conformance import encode

ALL_PATTERNS = ("A", "B", "C", "D", "E")


def new_game(pattern: str = "A", first: int | str = 0, seed: int = 1) -> State:
    return GAME.setup(2, GAME.normalize_options({"pattern": pattern, "first": first}), seed)


def position(areas: dict[int, str], turn: int, first: int = 0,
             scores: tuple[int, int] = (0, 0)) -> State:
    """A mid-game state: ``areas`` maps area -> stack (bottom first); the rest are empty."""
    state = new_game(first=first)
    state["areas"] = [areas.get(a, "") for a in range(10)]
    state["turn"] = turn
    state["scores"] = list(scores)
    return state


def sow(state: State, seat: int, area: int) -> Applied:
    return GAME.apply(state, seat, {"type": "sow", "area": area})


def landings(result: Applied) -> list[int]:
    return [e["area"] for e in result.events if e["type"] == "land"]


def sown_pieces(result: Applied) -> list[str]:
    return [e["piece"] for e in result.events if e["type"] == "land"]


def legal_areas(state: State, seat: int) -> list[int]:
    return [m["area"] for m in GAME.legal_moves(state, seat)]


def rejection(state: State, seat: int, move: Any) -> str:
    with pytest.raises(Rejected) as caught:
        GAME.apply(state, seat, move)
    return caught.value.code


# -- ruling 1: seats ------------------------------------------------------------------------

def test_ruling_1_seat_0_selects_1_3_5_and_shared_seat_1_selects_6_7_8_and_shared() -> None:
    state = new_game(first=0)
    assert legal_areas(state, 0) == [1, 2, 3, 4, 5]
    assert legal_areas(state, 1) == []  # not seat 1's turn
    for area in (6, 7, 8):
        assert rejection(state, 0, {"type": "sow", "area": area}) == "illegal_move"
    state = new_game(first=1)
    assert legal_areas(state, 1) == [2, 4, 6, 7, 8]
    for area in (1, 3, 5):
        assert rejection(state, 1, {"type": "sow", "area": area}) == "illegal_move"


def test_ruling_1_bases_are_never_selectable() -> None:
    state = position({0: "MMM", 9: "MMM", 1: "M", 6: "M"}, turn=0)
    for seat in (0, 1):
        state["turn"] = seat
        for base in (0, 9):
            assert rejection(state, seat, {"type": "sow", "area": base}) == "illegal_move"


def test_ruling_1_first_mover_is_seeded_random_unless_fixed() -> None:
    firsts = {new_game(first="random", seed=s)["first"] for s in range(40)}
    assert firsts == {0, 1}
    for seed in range(10):
        a, b = new_game(first="random", seed=seed), new_game(first="random", seed=seed)
        assert a["first"] == b["first"] and a["turn"] == a["first"]
    for fixed in (0, 1, "0", "1"):
        for seed in range(10):
            state = new_game(first=fixed, seed=seed)
            assert state["first"] == int(fixed) and GAME.to_act(state) == [int(fixed)]


# -- ruling 2: paths ------------------------------------------------------------------------

@pytest.mark.parametrize(("seat", "area", "expected"), [
    # The position after the first occurrence of the area in the mover's loop (ruling 2).
    (0, 1, [2, 3, 4]),
    (0, 2, [3, 4, 5]),   # seat 0 from 2 goes right
    (0, 3, [4, 5, 0]),
    (0, 4, [5, 0, 6]),   # seat 0 from 4 goes right
    (0, 5, [0, 6, 4]),
    (1, 6, [4, 7, 2]),
    (1, 4, [7, 2, 8]),   # seat 1 from 4 goes left
    (1, 7, [2, 8, 9]),
    (1, 2, [8, 9, 1]),   # seat 1 from 2 goes left
    (1, 8, [9, 1, 2]),
])
def test_ruling_2_paths_and_shared_area_directions(seat: int, area: int,
                                                   expected: list[int]) -> None:
    state = position({area: "MMM", 1 if seat else 6: "M"}, turn=seat)
    assert landings(sow(state, seat, area)) == expected


def test_ruling_2_full_loops_never_touch_the_opponents_base() -> None:
    # 22 pieces from area 5 for seat 0 go twice round 0 6 4 7 2 8 1 2 3 4 5.
    loop0 = [0, 6, 4, 7, 2, 8, 1, 2, 3, 4, 5]
    result = sow(position({5: "M" * 22}, turn=0), 0, 5)
    assert landings(result) == loop0 * 2 and 9 not in landings(result)
    loop1 = [9, 1, 2, 3, 4, 5, 6, 4, 7, 2, 8]
    result = sow(position({8: "M" * 22}, turn=1), 1, 8)
    assert landings(result) == loop1 * 2 and 0 not in landings(result)


def test_ruling_2_a_lap_drops_a_piece_back_into_the_emptied_source() -> None:
    # 12 pieces from area 1: 2 3 4 5 0 6 4 7 2 8 1 2. The 11th piece sown lands back in 1.
    # Sown top first, so the 11th is the second from the bottom (K) and the 12th the bottom (P).
    state = position({1: "PK" + "M" * 10, 6: "M"}, turn=0)
    result = sow(state, 0, 1)
    assert landings(result) == [2, 3, 4, 5, 0, 6, 4, 7, 2, 8, 1, 2]
    after = result.state["areas"]
    assert after[1] == "K"
    # Area 2 receives the 1st, 9th and 12th pieces; area 4 the 3rd and 7th.
    assert after[2] == "MMP" and after[4] == "MM" and after[0] == "M"
    assert result.state["scores"] == [1, 0] and result.state["turn"] == 1


def test_seed_movement_example_1_first_player_area_1_with_3_pieces() -> None:
    result = sow(new_game("A", first=0), 0, 1)
    assert landings(result) == [2, 3, 4]


def test_seed_movement_example_2_second_player_area_6_with_4_pieces() -> None:
    # Pattern A, seat 0 first: sowing 5 (3 pieces) lands on 0, 6, 4, leaving 4 pieces on 6.
    state = sow(new_game("A", first=0), 0, 5).state
    assert state["turn"] == 1 and len(state["areas"][6]) == 4
    assert landings(sow(state, 1, 6)) == [4, 7, 2, 8]


# -- ruling 3: ordered stacks ---------------------------------------------------------------

def test_ruling_3_top_piece_is_sown_first_and_arrivals_go_on_top() -> None:
    # Pattern D area 2 is P M K bottom to top: K is sown first (to 3), then M (4), then P (5).
    state = new_game("D", first=0)
    assert GAME.view(state, None)["areas"][2] == ["P", "M", "K"]
    result = sow(state, 0, 2)
    assert [(e["piece"], e["area"]) for e in result.events if e["type"] == "land"] == [
        ("K", 3), ("M", 4), ("P", 5)]
    view = GAME.view(result.state, None)
    assert view["areas"][3] == ["M", "C", "M", "K"]
    assert view["areas"][5] == ["M", "M", "M", "P"]
    # Sowing 3 now takes K (last in) first: K -> 4, M -> 5, C -> 0, M -> 6.
    state = result.state
    state["turn"] = 0
    assert sown_pieces(sow(state, 0, 3)) == ["K", "M", "C", "M"]


# -- ruling 4: scoring ----------------------------------------------------------------------

# Hand-copied from ruling 4: (value for the first mover, value for the other).
RULING_4_VALUES = {"M": (1, 1), "K": (2, 3), "P": (2, 3), "C": (3, 4), "A": (3, 4)}


@pytest.mark.parametrize("piece", list(RULING_4_VALUES))
@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("first", [0, 1])
def test_ruling_4_piece_values_for_first_and_second_mover(piece: str, seat: int,
                                                          first: int) -> None:
    # One piece on the area just before the mover's base: 5 for seat 0, 8 for seat 1.
    source, base = (5, 0) if seat == 0 else (8, 9)
    state = position({source: piece, 1: "M", 6: "M"}, turn=seat, first=first, scores=(5, 7))
    result = sow(state, seat, source)
    expected = RULING_4_VALUES[piece][0 if seat == first else 1]
    scores = result.state["scores"]
    assert scores[seat] == (5, 7)[seat] + expected
    assert scores[1 - seat] == (5, 7)[1 - seat]
    assert result.state["areas"][base] == piece  # the piece stays in the base
    score_events = [e for e in result.events if e["type"] == "score"]
    assert score_events == [{"type": "score", "seat": seat, "piece": piece, "points": expected,
                             "total": scores[seat]}]


def test_ruling_4_only_pieces_landing_in_the_movers_own_base_score() -> None:
    # Seat 0 sows 4 C's from 3 (first mover, C = 3): 4, 5, 0, 6 -> one C scores.
    result = sow(position({3: "CCCC", 6: "M"}, turn=0, first=0), 0, 3)
    assert result.state["scores"] == [3, 0]
    # Scores are public: every viewer sees them.
    for viewer in (0, 1, None):
        assert GAME.view(result.state, viewer)["scores"] == [3, 0]


# -- ruling 5: extra turns ------------------------------------------------------------------

def test_ruling_5_last_piece_in_own_base_gives_another_turn() -> None:
    state = position({3: "MMM", 6: "M"}, turn=0)  # 4, 5, 0: last in base
    result = sow(state, 0, 3)
    assert result.state["turn"] == 0 and GAME.to_act(result.state) == [0]
    assert {"type": "extra_turn", "seat": 0, "chain": 1} in result.events
    # Passing over the base without ending there gives no extra turn.
    result = sow(position({3: "MMMM", 6: "M"}, turn=0), 0, 3)
    assert result.state["turn"] == 1
    assert not any(e["type"] == "extra_turn" for e in result.events)


def test_ruling_5_extra_turn_chain_of_four() -> None:
    # 5 (1 piece -> 0), 4 (2 -> 5, 0), 5 (1 -> 0), 3 (3 -> 4, 5, 0): four base landings in a row;
    # then 4 (1 -> 5) ends the chain and seat 1 moves.
    state = position({3: "MMM", 4: "MM", 5: "M", 6: "M"}, turn=0)
    for chain, area in enumerate((5, 4, 5, 3), start=1):
        result = sow(state, 0, area)
        assert {"type": "extra_turn", "seat": 0, "chain": chain} in result.events
        state = result.state
        assert state["turn"] == 0 and state["chain"] == chain
        assert GAME.view(state, None)["chain"] == chain
    assert state["scores"] == [4, 0]
    state = sow(state, 0, 4).state
    assert state["turn"] == 1 and state["chain"] == 0


def test_ruling_5_extra_turn_for_seat_1_from_a_shared_area() -> None:
    # Seat 1 from 4 with 4 pieces: 7, 2, 8, 9.
    result = sow(position({4: "MMMM", 1: "M"}, turn=1, first=0), 1, 4)
    assert landings(result)[-1] == 9 and result.state["turn"] == 1


# -- ruling 6: the end ----------------------------------------------------------------------

def test_ruling_6_game_ends_when_next_player_has_no_move_and_board_pieces_score_nothing() -> None:
    # Seat 0 sows 4 -> 5. Seat 1 then has nothing in 2, 4, 6, 7, 8: the game ends at once.
    # Pieces left on 1 and 5 score nothing; the higher score (seat 1's) wins.
    state = position({4: "C", 1: "A"}, turn=0, scores=(3, 5))
    result = sow(state, 0, 4)
    final = result.state
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert outcome.winners == [1] and outcome.scores == [3, 5] and outcome.reason == "no_moves"
    assert GAME.to_act(final) == [] and GAME.legal_moves(final, 1) == []
    assert final["areas"][1] == "A" and final["areas"][5] == "C"
    end = result.events[-1]
    assert end["type"] == "game_end" and end["winners"] == [1] and end["stuck"] == 1
    view = GAME.view(final, 0)
    assert view["phase"] == "over" and view["turn"] is None
    assert view["outcome"] == {"winners": [1], "scores": [3, 5], "reason": "no_moves", "stuck": 1}
    assert rejection(final, 0, {"type": "sow", "area": 1}) == "game_over"


def test_ruling_6_the_game_ends_at_the_start_of_an_extra_turn() -> None:
    # Seat 0's only piece goes 5 -> 0 (extra turn) and then seat 0 has no move: the game ends
    # although seat 1 still has pieces. Seat 0 moved second, so the Citrullus is worth 4.
    state = position({5: "C", 7: "MMM"}, turn=0, first=1, scores=(0, 3))
    result = sow(state, 0, 5)
    types = [e["type"] for e in result.events]
    assert types == ["sow", "land", "score", "extra_turn", "game_end"]
    outcome = GAME.outcome(result.state)
    assert outcome is not None and outcome.winners == [0] and outcome.scores == [4, 3]
    assert result.state["stuck"] == 0


def test_ruling_6_equal_scores_are_a_draw() -> None:
    result = sow(position({4: "M"}, turn=0, scores=(6, 6)), 0, 4)
    outcome = GAME.outcome(result.state)
    assert outcome is not None and outcome.winners == [] and outcome.scores == [6, 6]


def test_ruling_6_every_setup_starts_with_a_legal_move() -> None:
    for pattern in ALL_PATTERNS:
        for first in (0, 1):
            state = new_game(pattern, first=first)
            assert GAME.outcome(state) is None and GAME.legal_moves(state, first)


# -- ruling 7: patterns ---------------------------------------------------------------------

# Hand-copied from the seed (A, B, C, E) and ruling 7 (D), bottom to top.
EXPECTED_PATTERNS = {
    "A": ["MMM", "KMK", "MAM", "MMM", "MMM", "MCM", "PMP", "MMM"],
    "B": ["MMM", "MCM", "MMM", "MAM", "PMP", "MMM", "MMM", "KMK"],
    "C": ["MMM", "MCM", "PMP", "MAM", "MMM", "MMM", "KMK", "MMM"],
    "D": ["MMM", "PMK", "MCM", "KMK", "MMM", "MMM", "MAM", "MMM"],
    "E": ["MMM", "MAM", "KMK", "MMM", "MMM", "PMP", "MCM", "MMM"],
}


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_ruling_7_each_pattern_sets_up_as_listed(pattern: str) -> None:
    view = GAME.view(new_game(pattern), None)
    assert view["pattern"] == pattern
    assert view["areas"][0] == [] and view["areas"][9] == []
    assert ["".join(view["areas"][a]) for a in range(1, 9)] == EXPECTED_PATTERNS[pattern]
    assert sum(view["counts"]) == 24 and view["counts"][1:9] == [3] * 8
    assert view["scores"] == [0, 0]


def test_ruling_7_pattern_d_is_the_ruled_one_not_a_copy_of_c() -> None:
    d, c = new_game("D")["areas"], new_game("C")["areas"]
    assert d != c
    assert d[2] == "PMK" and d[4] == "KMK" and d[7] == "MAM"


def test_ruling_7_random_pattern_is_seeded_and_covers_all_five() -> None:
    seen = {new_game("random", seed=s)["pattern"] for s in range(60)}
    assert seen == set(ALL_PATTERNS)
    assert GAME.normalize_options({})["pattern"] == "random"
    for seed in range(10):
        assert new_game("random", seed=seed) == new_game("random", seed=seed)


# -- ruling 8: spelling ---------------------------------------------------------------------

def test_ruling_8_citrullus_is_spelled_citrullus() -> None:
    state = new_game("A")
    view = GAME.view(state, None)
    assert view["piece_names"]["C"] == "Citrullus"
    assert b"Citrillus" not in encode(view)


# -- options, seats, malformed moves --------------------------------------------------------

def test_options_accept_ints_and_strings_for_first_and_refuse_others() -> None:
    assert GAME.normalize_options({}) == {"pattern": "random", "first": "random"}
    assert GAME.normalize_options({"first": 1})["first"] == "1"
    assert GAME.normalize_options({"first": "0"})["first"] == "0"
    for bad in ({"first": 2}, {"first": "2"}, {"first": True}, {"pattern": "F"},
                {"pattern": "a"}, {"colour": "red"}, {"pattern": 1}):
        with pytest.raises(Rejected) as caught:
            GAME.normalize_options(bad)
        assert caught.value.code == "bad_option"
    described = {o["name"]: o for o in GAME.describe()["options"]}
    assert described["pattern"]["choices"] == ["random", "A", "B", "C", "D", "E"]


def test_only_two_seats() -> None:
    assert (GAME.min_seats, GAME.max_seats) == (2, 2)
    with pytest.raises(Rejected) as caught:
        GAME.setup(3, GAME.normalize_options({}), 1)
    assert caught.value.code == "bad_seats"


@pytest.mark.parametrize("move", [
    None, 3, "sow", [1], {}, {"type": "sow"}, {"area": 1}, {"type": "pass", "area": 1},
    {"type": "sow", "area": "1"}, {"type": "sow", "area": 1.0}, {"type": "sow", "area": True},
    {"type": "sow", "area": None}, {"type": "sow", "area": 10}, {"type": "sow", "area": -1},
    {"type": "sow", "area": 1, "pieces": 3}, {"type": ["sow"], "area": 1}, {1: 2},
])
def test_malformed_moves_are_bad_move(move: Any) -> None:
    state = new_game()
    before = encode(state)
    assert rejection(state, 0, move) == "bad_move"
    assert encode(state) == before


def test_wrong_seat_empty_area_and_finished_game_are_refused() -> None:
    state = new_game(first=0)
    assert rejection(state, 1, {"type": "sow", "area": 6}) == "not_your_turn"
    assert rejection(state, 7, {"type": "sow", "area": 6}) == "not_your_turn"
    state = new_game(first=1)
    assert rejection(state, True, {"type": "sow", "area": 6}) == "not_your_turn"
    state = position({1: "M", 6: "M"}, turn=0)
    assert rejection(state, 0, {"type": "sow", "area": 3}) == "illegal_move"


# -- views and events -----------------------------------------------------------------------

def test_view_is_public_and_complete() -> None:
    state = sow(new_game("B", first=1, seed=9), 1, 8).state
    views = [GAME.view(state, v) for v in (0, 1, None)]
    assert [v["you"] for v in views] == [0, 1, None]
    assert all({**v, "you": None} == views[2] for v in views)
    view = views[2]
    # Pattern B 8 is K M K; seat 1 from 8: K -> 9 (first mover: 2), M -> 1, K -> 2.
    assert view["scores"] == [0, 2] and view["areas"][9] == ["K"]
    assert view["areas"][1] == ["M", "M", "M", "M"] and view["areas"][2] == ["M", "C", "M", "K"]
    assert view["turn"] == 0 and view["phase"] == "play" and view["first"] == 1
    assert view["movable"] == [1, 2, 3, 4, 5]
    assert view["values"][1]["C"] == 3 and view["values"][0]["C"] == 4
    assert view["last"] == {"seat": 1, "area": 8, "points": 2, "extra_turn": False, "landings": [
        {"piece": "K", "area": 9}, {"piece": "M", "area": 1}, {"piece": "K", "area": 2}]}
    assert view["bases"] == [0, 9] and view["selectable"] == [[1, 2, 3, 4, 5], [2, 4, 6, 7, 8]]


def test_events_name_every_landing_in_order() -> None:
    result = sow(new_game("E", first=0), 0, 3)  # E 3 is K M K: K -> 4, M -> 5, K -> 0
    assert result.events == [
        {"type": "sow", "seat": 0, "area": 3, "count": 3},
        {"type": "land", "seat": 0, "piece": "K", "area": 4},
        {"type": "land", "seat": 0, "piece": "M", "area": 5},
        {"type": "land", "seat": 0, "piece": "K", "area": 0},
        {"type": "score", "seat": 0, "piece": "K", "points": 2, "total": 2},
        {"type": "extra_turn", "seat": 0, "chain": 1},
    ]
