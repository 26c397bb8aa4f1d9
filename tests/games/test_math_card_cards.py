"""Every card of the pool: its value or maths, and each printed effect, through the engine."""

from __future__ import annotations

from fractions import Fraction

import pytest

from playhall.games.contract import Rejected
from playhall.games.math_card import GAME
from playhall.games.math_card.cards import CARDS
from playhall.games.math_card.functions import apply_function
from playhall.games.math_card.scoring import evaluate, judge, read_sequence
from tests.games.test_math_card_support import (
    FILLER,
    action_state,
    add_assertion,
    applied,
    board,
    count_cards,
    play,
    put,
    types,
)


def test_pool_has_the_23_originals_and_marked_additions() -> None:
    originals = [c for c in CARDS if c.startswith("0000")]
    assert originals == [f"{i:06d}" for i in range(1, 24)]
    additions = {c for c, row in CARDS.items() if row["addition"]}
    assert additions == set(CARDS) - set(originals)
    colours = {CARDS[c]["colour"] for c in additions}
    assert {"green", "blue/yellow", "blue/green/yellow", "rainbow"} <= colours


@pytest.mark.parametrize(("cid", "value"), [
    ("000001", 1), ("000004", 0), ("000005", 2), ("000006", 3), ("000007", 4), ("000008", 5),
    ("000009", 6), ("000010", 7), ("000011", 8), ("000012", 9)])
def test_value_cards_have_their_formula_value(cid: str, value: int) -> None:
    assert evaluate(read_sequence(board(l0=[cid])["lanes"], 0)) == value


@pytest.mark.parametrize(("op", "flip", "expected"), [
    ("000002", False, Fraction(9)),       # 7 + 2
    ("000013", False, Fraction(5)),       # 7 - 2
    ("000014", False, Fraction(14)),      # 7 x 2
    ("000015", False, Fraction(7, 2)),    # 7 / 2
    ("000016", False, Fraction(9)),       # floor(7) + 2
    ("000017", False, Fraction(7, 2)),    # 7 / 2
    ("000017", True, Fraction(2, 7)),     # 2 / 7: the ? exchanged
])
def test_operators(op: str, flip: bool, expected: Fraction) -> None:
    seq = read_sequence(board(l0=["000010", op, "000005"])["lanes"], 0)
    assert evaluate(seq, frozenset({1}) if flip else frozenset()) == expected


def test_round_and_add_floors_the_chosen_operand() -> None:
    # 7 / 2 = 7/2, then Round & Add 3: floor(7/2) + 3 = 6, or 7/2 + floor(3) = 13/2.
    seq = read_sequence(board(l0=["000010", "000015", "000005", "000016", "000006"])["lanes"], 0)
    assert evaluate(seq) == 6 and evaluate(seq, frozenset({3})) == Fraction(13, 2)


@pytest.mark.parametrize(("cid", "x", "truth"), [
    ("000003", Fraction(4), True), ("000003", Fraction(3), False),
    ("000003", Fraction(4, 3), False),
    ("000018", Fraction(-2), True), ("000018", Fraction(1, 2), False),
    ("000019", Fraction(-7, 3), True),
    ("000020", Fraction(-3), True), ("000020", Fraction(8), False),
    ("000020", Fraction(3, 2), False),
    ("000022", Fraction(9), True), ("000022", Fraction(0), True), ("000022", Fraction(4), False),
    ("000022", Fraction(3, 2), False),
    ("000006", Fraction(3), True), ("000010", Fraction(6), False),
])
def test_assertion_truth(cid: str, x: Fraction, truth: bool) -> None:
    verdict = judge({"card": cid, "owner": 0}, x)
    assert verdict is not None and verdict[0] is truth
    assert verdict[1:] == (CARDS[cid]["vp"], CARDS[cid]["dp"])


def _searching(hand: list[str], deck: list[str]) -> dict:
    return action_state(hands=(hand, []), decks=(deck, [FILLER] * 30))


def test_000001_junior_one_searches_a_natural_assertion_card() -> None:
    s = _searching(["000001"], ["000018", "000003", FILLER, "000006"])
    s = play(s, 0, {"type": "set_value", "card": "000001", "lane": 0})
    options = [m["card"] for m in GAME.legal_moves(s, 0) if m["type"] == "choose"]
    assert options == ["000003", "000006"]  # Natural and can be an assertion
    result = applied(s, 0, {"type": "choose", "card": "000003"})
    assert result.state["players"][0]["hand"] == ["000003"]
    assert sorted(result.state["players"][0]["deck"]) == ["000005", "000006", "000018"]
    private = [e for e in result.events if e["type"] == "search"]
    assert private and private[0]["visible_to"] == [0]
    # As an assertion it searches nothing.
    s = _searching(["000001"], ["000003"])
    assert not play(s, 0, {"type": "assert", "card": "000001", "area": "left"})["pending"]


def test_000002_addition_swaps_two_values_on_the_field() -> None:
    s = action_state(hands=(["000002"], []))
    put(s, 0, 0, "000006", 0)
    put(s, 3, 0, "000010", 1)
    s = play(s, 0, {"type": "set_operator", "card": "000002", "lane": 0})
    assert GAME.legal_moves(s, 0)[0] == {"type": "swap", "a": [0, 0], "b": [3, 0]}
    s = play(s, 0, {"type": "swap", "a": [3, 0], "b": [0, 0]})  # either order
    assert s["lanes"][0][0] == {"card": "000010", "owner": 1}
    assert s["lanes"][3][0] == {"card": "000006", "owner": 0}
    # With fewer than two values on the field there is nothing to swap.
    lone = action_state(hands=(["000002"], []))
    put(lone, 0, 0, "000006", 0)
    assert not play(lone, 0, {"type": "set_operator", "card": "000002", "lane": 0})["pending"]


@pytest.mark.parametrize(("cid", "match", "other"), [("000003", "000007", "000006"),
                                                     ("000020", "000006", "000007")])
def test_000003_000020_discard_matching_parity_then_draw(cid: str, match: str,
                                                         other: str) -> None:
    s = action_state(hands=([cid, match, other], []), decks=(["000012"], [FILLER] * 5))
    s = play(s, 0, {"type": "assert", "card": cid, "area": "private"})
    answers = GAME.legal_moves(s, 0)
    assert answers[:-1] == [{"type": "choose", "card": match}, {"type": "decline"}]
    took = play(s, 0, {"type": "choose", "card": match})
    assert sorted(took["players"][0]["hand"]) == sorted([other, "000012"])
    assert took["players"][0]["discard"] == [match]
    declined = play(s, 0, {"type": "decline"})
    assert sorted(declined["players"][0]["hand"]) == sorted([match, other])


def test_000004_number_zero_searches_once_per_turn_on_set_and_discard() -> None:
    s = _searching(["000004", "000004"], ["000018", FILLER, "000010"])
    s = play(s, 0, {"type": "set_value", "card": "000004", "lane": 0})
    assert [m["card"] for m in GAME.legal_moves(s, 0)[:-1]] == ["000010", "000018"]
    s = play(s, 0, {"type": "choose", "card": "000018"})
    # A second Zero discarded in the same turn does not search again.
    s["players"][0]["hand"] += [FILLER] * 7
    s = play(s, 0, {"type": "end_turn"})
    s = play(s, 0, {"type": "choose", "card": "000004"})
    assert s["players"][0]["discard"] == ["000004"]
    assert not s["pending"] or s["pending"][0]["kind"] == "hand_limit"
    # On the opponent's turn, a Zero of seat 1 sent to the discard pile by seat 0's calculation
    # makes seat 1 search (and seat 1 answers).
    t = action_state(hands=(["100001"], []), decks=([FILLER] * 5, ["000019", FILLER]))
    put(t, 3, 0, "000004", 1)
    put(t, 0, 0, "000004", 0)
    t = play(t, 0, {"type": "function_calc", "card": "100001", "input": [3, 0],
                    "output": [0, 0]})
    assert GAME.to_act(t) == [1]
    assert GAME.legal_moves(t, 1)[0] == {"type": "choose", "card": "000019"}


def test_000008_number_five_gives_an_extra_value_with_five_cards_on_the_field() -> None:
    s = action_state(hands=(["000008", FILLER], []))
    for lane in (0, 3, 4):
        put(s, lane, 0, FILLER, 0 if lane < 2 else 1)
    add_assertion(s, "left", "000018", 1)
    s = play(s, 0, {"type": "set_value", "card": "000008", "lane": 2})  # 5 cards now
    assert s["turn"]["value_limit"] == 2
    assert any(m["type"] == "set_value" for m in GAME.legal_moves(s, 0))
    t = action_state(hands=(["000008", FILLER], []))
    t = play(t, 0, {"type": "set_value", "card": "000008", "lane": 2})  # 1 card
    assert t["turn"]["value_limit"] == 1
    assert not any(m["type"] == "set_value" for m in GAME.legal_moves(t, 0))


def test_000009_six_needs_exactly_six_cards_in_hand() -> None:
    five = action_state(hands=(["000009"] + [FILLER] * 4, [FILLER]))
    assert {"type": "use", "card": "000009"} not in GAME.legal_moves(five, 0)
    six = action_state(hands=(["000009"] + [FILLER] * 5, []))
    s = play(six, 0, {"type": "use", "card": "000009"})
    assert s["players"][0]["discard"] == ["000009"] and not s["pending"]  # nothing to discard
    with pytest.raises(Rejected):
        GAME.apply(five, 0, {"type": "use", "card": "000009"})


def test_000011_number_eight_moves_a_public_assertion_to_a_private_area() -> None:
    s = action_state(hands=(["000011"], []))
    add_assertion(s, "left", "000018", 1)
    s = play(s, 0, {"type": "set_value", "card": "000011", "lane": 0})
    assert GAME.legal_moves(s, 0)[:-1] == [
        {"type": "move_assertion", "area": "left", "index": 0, "to": 0},
        {"type": "move_assertion", "area": "left", "index": 0, "to": 1}]
    s = play(s, 0, {"type": "move_assertion", "area": "left", "index": 0, "to": 1})
    assert s["areas"]["left"] == [] and s["areas"]["private1"] == [{"card": "000018",
                                                                    "owner": 1}]
    # Also when discarded (here by the hand limit).
    t = action_state(hands=(["000011"] + [FILLER] * 7, []))
    add_assertion(t, "right", "000019", 0)
    t = play(t, 0, {"type": "end_turn"})
    t = play(t, 0, {"type": "choose", "card": "000011"})
    assert t["pending"][0]["kind"] == "move_assertion"


def test_000012_nine_searches_a_card_of_value_one() -> None:
    s = _searching(["000012"], [FILLER, "000001"])
    s = play(s, 0, {"type": "set_value", "card": "000012", "lane": 0})
    assert GAME.legal_moves(s, 0)[0] == {"type": "choose", "card": "000001"}
    none = _searching(["000012"], [FILLER])
    r = applied(none, 0, {"type": "set_value", "card": "000012", "lane": 0})
    assert "search_failed" in types(r) and not r.state["pending"]


def test_000021_puzzle_hides_its_card_until_the_end() -> None:
    s = action_state(hands=(["000021", "000011"], []), decks=([FILLER] * 5, []))
    moves = [m for m in GAME.legal_moves(s, 0) if m["card" if "card" in m else "type"]
             == "000021"]
    assert {"type": "assert", "card": "000021", "area": "left", "under": "000011"} in moves
    with pytest.raises(Rejected):
        GAME.apply(s, 0, {"type": "assert", "card": "000021", "area": "left"})
    result = applied(s, 0, {"type": "assert", "card": "000021", "area": "private",
                            "under": "000011"})
    s = result.state
    assert s["players"][0]["hand"] == [] and count_cards(s, 0) == 7
    assert GAME.view(s, 0)["areas"]["private0"][0]["under"] == "000011"
    for viewer in (1, None):
        shown = GAME.view(s, viewer)["areas"]["private0"][0]
        assert shown["under"] is None and shown["hidden"] is True
    assert all("000011" not in str(e) for e in result.events if "visible_to" not in e)
    # The live estimate counts the puzzle only for its owner: lane 0 empty, the public lane
    # empty -> the owner sees "false, DP 2" twice (public strict -2, private x private 0).
    assert GAME.view(s, 0)["estimate"]["vp"] == [-2, 0]
    assert GAME.view(s, 1)["estimate"]["vp"] == [0, 0]
    put(s, 0, 0, "000011", 0)  # lane 0 = 8: the puzzle is true, VP floor(8/2) = 4
    over = play(s, 0, {"type": "end_turn"})  # seat 1's deck is empty: the game ends
    assert GAME.view(over, 1)["areas"]["private0"][0]["under"] == "000011"
    # Lane 0 (8) x puzzle: +4. Lane 1 has no value: the puzzle is false (DP 2) but private x
    # private counts 0. Public lane has no value: false, strict, -2. Total 4 + 0 - 2 = 2.
    assert over["result"]["vp"][0] == 2


def test_000022_multiples_of_three_rearranges_operators() -> None:
    s = action_state(hands=(["000022"], []))
    put(s, 0, 1, "000013", 0)
    put(s, 2, 1, "000014", 0)
    put(s, 3, 1, "000015", 1)
    s = play(s, 0, {"type": "assert", "card": "000022", "area": "left"})
    answers = [m for m in GAME.legal_moves(s, 0) if m["type"] == "rearrange"]
    assert len(answers) == 1 + 3 + 2  # keep, three swaps, two 3-cycles
    # The same cycle written from another start is the same answer.
    s = play(s, 0, {"type": "rearrange", "cycle": [[2, 1], [3, 1], [0, 1]]})
    assert [s["lanes"][lane][1]["card"] for lane in (0, 2, 3)] == ["000015", "000013",
                                                                    "000014"]


def test_000023_induction_searches_n_plus_one_once_per_turn() -> None:
    s = _searching(["000006", "000007"], ["000007", "000008", FILLER])
    s["legends"][0] = ["000023"]
    s["turn"]["value_limit"] = 2
    s = play(s, 0, {"type": "set_value", "card": "000006", "lane": 0})  # n = 3: a 4
    assert GAME.legal_moves(s, 0)[0] == {"type": "choose", "card": "000007"}
    s = play(s, 0, {"type": "choose", "card": "000007"})
    s = play(s, 0, {"type": "set_value", "card": "000007", "lane": 1})  # once per turn
    assert not s["pending"]


@pytest.mark.parametrize(("cid", "x", "y"), [("100001", 3, 6), ("100002", 3, 4),
                                             ("100003", 3, 9), ("100004", 3, Fraction(3, 2))])
def test_function_maths(cid: str, x: int, y: Fraction) -> None:
    assert apply_function(cid, Fraction(x)) == y


def test_100002_successor_effect_draws_one() -> None:
    s = action_state(hands=(["100002"], []), decks=(["000012"], []))
    s = play(s, 0, {"type": "function_effect", "card": "100002"})
    assert s["players"][0]["hand"] == ["000012"] and s["players"][0]["discard"] == ["100002"]
    empty = action_state(hands=(["100002"], []), decks=([], []))
    r = applied(empty, 0, {"type": "function_effect", "card": "100002"})
    assert "no_effect" in types(r) and r.state["players"][0]["discard"] == ["100002"]


def test_100003_square_effect_searches_a_value_card() -> None:
    s = _searching(["100003"], ["000018", "000012"])
    s = play(s, 0, {"type": "function_effect", "card": "100003"})
    assert GAME.legal_moves(s, 0)[:-1] == [{"type": "choose", "card": "000012"}]
    # As a temporary calculation it maps 3 -> 9 and gives 3 PVP.
    t = action_state(hands=(["100003"], []))
    put(t, 0, 0, "000006", 0)
    put(t, 1, 0, "000012", 0)
    t = play(t, 0, {"type": "function_calc", "card": "100003", "input": [0, 0],
                    "output": [1, 0]})
    assert t["players"][0]["pvp"] == 3


def test_100004_halving_as_operator_value_gives_a_fraction() -> None:
    s = action_state(hands=(["100004"], []))
    put(s, 0, 0, "000010", 0)
    s = play(s, 0, {"type": "set_function", "card": "100004", "lane": 0})
    assert GAME.view(s, 0)["lane_values"][0] == [7, 2]


def test_100101_euler_gives_one_pvp_each_turn_start_without_a_slot() -> None:
    s = action_state(hands=(["100101"], []))
    s["legends"][0] = ["000023"] * 4
    s = play(s, 0, {"type": "legend", "card": "100101"})
    assert s["rainbow"][0] == ["100101"]
    s = play(s, 0, {"type": "end_turn"})
    s = play(s, 1, {"type": "end_turn"})
    assert s["players"][0]["pvp"] == 1 and s["players"][1]["pvp"] == 0
