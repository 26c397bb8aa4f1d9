"""One test per numbered ruling (restated in docs/games/math_card.md §1), through the engine."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from playhall.games.contract import Outcome, Rejected, State
from playhall.games.math_card import GAME
from playhall.games.math_card.scoring import score_board
from tests.games.test_math_card_support import (
    FILLER,
    action_state,
    add_assertion,
    applied,
    board,
    fill_lane,
    play,
    put,
    started,
    types,
)

END = {"type": "end_turn"}


def ended_with(state: State) -> Outcome:
    """The outcome of ``state``, a game that is over."""
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome


def test_ruling_1_five_lanes_of_five_slots_and_the_areas() -> None:
    state = started()
    assert len(state["lanes"]) == 5 and all(len(row) == 5 for row in state["lanes"])
    assert set(state["areas"]) == {"left", "right", "private0", "private1"}
    # Assertion areas hold any number of cards: three in one area are all scored.
    b = board(l0=["000007"])
    for _ in range(3):
        add_assertion(b, "private0", "000003", 0)
    assert score_board(b, 0)["vp"] == [3, 0]
    # The legend area has 4 slots: a fifth legend must replace one.
    s = action_state(hands=(["000023"], []))
    s["legends"][0] = ["000023"] * 4
    assert {m.get("replace") for m in GAME.legal_moves(s, 0) if m["type"] == "legend"} \
        == {0, 1, 2, 3}


def test_ruling_2_public_lane_filled_from_opposite_ends() -> None:
    s = action_state(hands=([FILLER], [FILLER]))
    s = play(s, 0, {"type": "set_value", "card": FILLER, "lane": 2})
    assert s["lanes"][2][0] == {"card": FILLER, "owner": 0}
    s = play(s, 0, END)
    s = play(s, 1, {"type": "set_value", "card": FILLER, "lane": 2})
    assert s["lanes"][2][4] == {"card": FILLER, "owner": 1}
    # Private lanes fill from the owner's left: seat 1's lane 3 starts at its slot 0.
    assert GAME.legal_moves(s, 1)  # still seat 1's turn
    s2 = action_state(hands=([], [FILLER]), seat=1)
    s2 = play(s2, 1, {"type": "set_value", "card": FILLER, "lane": 3})
    assert s2["lanes"][3][0] is not None


def test_ruling_3_nearest_and_own_lanes_only() -> None:
    s = action_state(hands=([FILLER, FILLER, "000014"], []))
    put(s, 0, 0, FILLER, 0)
    moves = GAME.legal_moves(s, 0)
    # Lane 0's first empty slot is an operator slot: no value may go there now.
    assert {"type": "set_value", "card": FILLER, "lane": 0} not in moves
    assert {"type": "set_operator", "card": "000014", "lane": 0} in moves
    # Never into the opponent's private lanes.
    assert not [m for m in moves if m.get("lane") in (3, 4)]
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, {"type": "set_value", "card": FILLER, "lane": 3})
    assert err.value.code == "illegal_move"
    s = play(s, 0, {"type": "set_operator", "card": "000014", "lane": 0})
    assert s["lanes"][0][1]["card"] == "000014"
    # A hole left by a removed card is the nearest slot again.
    fill_lane(s, 1, [FILLER, "000014", None, "000014", FILLER], 0)
    assert {"type": "set_value", "card": FILLER, "lane": 1} in GAME.legal_moves(s, 0)


def test_ruling_4_turn_start_effects_come_before_the_draw() -> None:
    s = action_state(hands=([], []))
    s["rainbow"][1] = ["100101"]
    result = applied(s, 0, END)
    kinds = types(result)
    assert kinds.index("turn_start") < kinds.index("pvp") < kinds.index("draw")
    assert result.state["players"][1]["pvp"] == 1
    # Reaching 10 PVP at turn start ends the game at once: no draw follows.
    s["players"][1]["pvp"] = 9
    ended = applied(s, 0, END)
    assert GAME.outcome(ended.state) is not None and "draw" not in types(ended)


def test_ruling_5_draws_first_turn_one_and_discard_top() -> None:
    state = started(seed=3)
    first = state["first"]
    assert len(state["players"][first]["hand"]) == 6  # 5 dealt + 1 on the first turn
    assert len(state["players"][1 - first]["hand"]) == 5
    state = play(state, first, END)
    assert len(state["players"][1 - first]["hand"]) == 7  # 5 + 2
    # One card left in the deck when two are due: that card, then the discard pile's top.
    s = action_state(decks=([FILLER] * 5, ["000007"]))
    s["players"][1]["discard"] = ["000006", "000010"]
    s = play(s, 0, END)
    assert sorted(s["players"][1]["hand"]) == ["000007", "000010"]
    assert s["players"][1]["discard"] == ["000006"]


def test_ruling_6_action_phase_limits() -> None:
    hand = [FILLER, FILLER, "000014", "000013", "000018", "000018", "000018", "000019"]
    s = action_state(hands=(hand, []))
    s = play(s, 0, {"type": "set_value", "card": FILLER, "lane": 0})
    assert not [m for m in GAME.legal_moves(s, 0) if m["type"] in ("set_value", "move_value")]
    s = play(s, 0, {"type": "set_operator", "card": "000014", "lane": 0})
    assert not [m for m in GAME.legal_moves(s, 0) if m["type"] == "set_operator"]
    for area in ("private", "left", "right"):
        s = play(s, 0, {"type": "assert", "card": "000018", "area": area})
    assert not [m for m in GAME.legal_moves(s, 0) if m["type"] == "assert"]
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, {"type": "assert", "card": "000019", "area": "left"})
    assert err.value.code == "illegal_move" and "left" in err.value.reason
    # Never both a value and an operator into the public lane in one turn.
    p = action_state(hands=([FILLER, FILLER, "000014"], []))
    p = play(p, 0, {"type": "set_value", "card": FILLER, "lane": 2})
    put(p, 0, 0, FILLER, 0)
    ops = [m for m in GAME.legal_moves(p, 0) if m["type"] == "set_operator"]
    assert ops and all(m["lane"] != 2 for m in ops)


def test_ruling_7_move_value_to_an_adjacent_private_lane() -> None:
    s = action_state(hands=([], []))
    put(s, 0, 2, FILLER, 0)
    put(s, 2, 0, "000006", 0)
    put(s, 2, 4, "000007", 1)
    moves = [m for m in GAME.legal_moves(s, 0) if m["type"] == "move_value"]
    assert {"type": "move_value", "from": [0, 2], "lane": 1} in moves
    assert {"type": "move_value", "from": [2, 0], "lane": 1} in moves
    # Never into the public lane, never the opponent's card.
    assert all(m["lane"] != 2 and m["from"] != [2, 4] for m in moves)
    moved = play(s, 0, {"type": "move_value", "from": [0, 2], "lane": 1})
    assert moved["lanes"][1][2] == {"card": FILLER, "owner": 0} and moved["lanes"][0][2] is None
    # Seat 1 moves its public value (slot 4 from seat 0's side) into slot 0 of its lane 3.
    s1 = action_state(seat=1)
    put(s1, 2, 4, "000007", 1)
    s1 = play(s1, 1, {"type": "move_value", "from": [2, 4], "lane": 3})
    assert s1["lanes"][3][0] == {"card": "000007", "owner": 1}
    # Occupied target slot: no move.
    blocked = action_state()
    put(blocked, 0, 0, FILLER, 0)
    put(blocked, 1, 0, FILLER, 0)
    assert not [m for m in GAME.legal_moves(blocked, 0) if m["type"] == "move_value"]


def test_ruling_8_hand_limit_discard_costs_pvp_never_below_zero() -> None:
    s = action_state(hands=([FILLER] * 8 + ["000006"], []))
    s["players"][0]["pvp"] = 1
    s = play(s, 0, END)
    assert s["phase"] == "end" and GAME.to_act(s) == [0]
    assert GAME.legal_moves(s, 0)[:2] == [{"type": "choose", "card": "000005"},
                                          {"type": "choose", "card": "000006"}]
    s = play(s, 0, {"type": "choose", "card": "000006"})
    assert s["players"][0]["pvp"] == 0 and len(s["players"][0]["hand"]) == 8
    s = play(s, 0, {"type": "choose", "card": FILLER})
    assert s["players"][0]["pvp"] == 0  # never below 0
    assert len(s["players"][0]["hand"]) == 7
    assert s["players"][0]["discard"] == ["000006", FILLER]
    assert s["turn"]["seat"] == 1  # the turn passed once the hand was down to 7


def test_ruling_9_question_operator_oriented_once_per_lane_for_the_scorer() -> None:
    # Public lane 4 ?/? 0: 4/0 has no value, 0/4 = 0. Seat 0 asserts "even" (privately): it
    # reads 0/4 = 0, true, +1. Seat 1 asserts "odd": 0 would be false (-1), so it reads 4/0,
    # no value, skipped (0). Each scorer orients the same lane its own way.
    # (Rational, VP 1, in the right area makes the public lane read from the left.)
    b = board(l2=["000007", "000017", "000004"])
    add_assertion(b, "right", "000019", 0)
    add_assertion(b, "private0", "000003", 0)
    add_assertion(b, "private1", "000020", 1)
    assert score_board(b, 0)["vp"] == [1, 0]
    # Once per lane: seat 0's lane 0 = 4 ?/? 0 against public "odd" and private "even",
    # "integer". Orientation 0/4: -1 + 1 + 1 = 1; orientation 4/0: all skipped = 0. It cannot
    # skip "odd" while keeping the others true, so 1 (not 2).
    c = board(l0=["000007", "000017", "000004"])
    add_assertion(c, "left", "000020", 1)
    add_assertion(c, "private0", "000003", 0)
    add_assertion(c, "private0", "000018", 0)
    assert score_board(c, 0)["vp"][0] == 1


def test_ruling_10_function_cards_three_uses() -> None:
    # Temporary calculation: Doubling maps 3 -> 6; both cards leave to their owners' piles.
    s = action_state(hands=(["100001", "100002"], []))
    put(s, 0, 0, "000006", 0)
    put(s, 3, 0, "000009", 1)
    calc = {"type": "function_calc", "card": "100001", "input": [0, 0], "output": [3, 0]}
    assert calc in GAME.legal_moves(s, 0)
    after = play(s, 0, calc)
    assert after["players"][0]["pvp"] == 2
    assert after["players"][0]["discard"] == ["100001", "000006"]
    assert after["players"][1]["discard"] == ["000009"]
    assert after["lanes"][0][0] is None and after["lanes"][3][0] is None
    # Operator-value: blue/yellow yes, green no; private lanes only.
    s2 = action_state(hands=(["100001", "100002"], []))
    put(s2, 0, 0, "000006", 0)
    put(s2, 2, 0, "000006", 0)
    fn_moves = [m for m in GAME.legal_moves(s2, 0) if m["type"] == "set_function"]
    assert fn_moves == [{"type": "set_function", "card": "100001", "lane": 0}]
    s2 = play(s2, 0, fn_moves[0])
    assert s2["lanes"][0][2] == {"card": "100001", "owner": 0, "part": "value"}
    assert s2["turn"]["operator_used"] and s2["turn"]["value_actions"] == 1
    # Effect: green and blue/green/yellow only.
    effect_cards = {m["card"] for m in GAME.legal_moves(
        action_state(hands=(["100001", "100002", "100003", "100004"], [])), 0)
        if m["type"] == "function_effect"}
    assert effect_cards == {"100002", "100003"}


def calc(fn: str, source: list[Any], target: list[Any]) -> dict[str, Any]:
    return {"type": "function_calc", "card": fn, "input": source, "output": target}


def test_ruling_10_calculation_from_a_lane_to_an_assertion_area() -> None:
    # Doubling maps the 3 in seat 0's lane to SIX, a value-assertion card in the right area.
    s = action_state(hands=(["100001"], []))
    put(s, 0, 0, "000006", 0)
    add_assertion(s, "right", "000009", 1)
    move = calc("100001", [0, 0], ["right", 0])
    assert move in GAME.legal_moves(s, 0)
    result = applied(s, 0, move)
    after = result.state
    assert after["lanes"][0][0] is None and after["areas"]["right"] == []
    assert after["players"][0]["discard"] == ["100001", "000006"]
    assert after["players"][1]["discard"] == ["000009"]
    assert after["players"][0]["pvp"] == 2
    assert [e for e in result.events if e["type"] == "function_calc"] == [
        {"type": "function_calc", "seat": 0, "card": "100001", "input": [0, 0],
         "output": ["right", 0], "cards": ["000006", "000009"]}]


def test_ruling_10_calculation_from_an_assertion_area_to_a_lane() -> None:
    # Input: Number Three lying as an assertion in the opponent's private area.
    s = action_state(hands=(["100001"], []))
    add_assertion(s, "private1", "000006", 1)
    put(s, 3, 0, "000009", 1)
    move = calc("100001", ["private1", 0], [3, 0])
    assert move in GAME.legal_moves(s, 0)
    after = play(s, 0, move)
    assert after["areas"]["private1"] == [] and after["lanes"][3][0] is None
    assert after["players"][1]["discard"] == ["000006", "000009"]


def test_ruling_10_calculation_within_one_assertion_area_keeps_the_others() -> None:
    # Successor maps 3 -> 4 inside the left area; the card after them stays.
    s = action_state(hands=(["100002"], []))
    add_assertion(s, "left", "000007", 0)
    add_assertion(s, "left", "000006", 1)
    add_assertion(s, "left", "000009", 1)
    move = calc("100002", ["left", 1], ["left", 0])
    assert move in GAME.legal_moves(s, 0)
    after = play(s, 0, move)
    assert after["areas"]["left"] == [{"card": "000009", "owner": 1}]
    assert after["players"][1]["discard"] == ["000006"]
    assert after["players"][0]["discard"] == ["100002", "000007"]


def test_ruling_10_only_value_cards_count_and_positions_are_checked() -> None:
    # A plain assertion (Is an integer) is no value; neither is a puzzle's face-down card.
    s = action_state(hands=(["100001"], []))
    put(s, 0, 0, "000006", 0)
    add_assertion(s, "left", "000018", 1)
    add_assertion(s, "private1", "000021", 1, under="000009")
    assert [m for m in GAME.legal_moves(s, 0) if m["type"] == "function_calc"] == []
    for bad in (["middle", 0], ["left", -1], ["left", True], [0, "0"], ["left"]):
        with pytest.raises(Rejected) as err:
            GAME.apply(s, 0, calc("100001", [0, 0], bad))
        assert err.value.code == "bad_move"
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, calc("100001", [0, 0], ["left", 5]))
    assert err.value.code == "illegal_move"


def test_ruling_11_legend_slots_and_rainbow() -> None:
    s = action_state(hands=(["000023", "100101"], []))
    s["legends"][0] = ["000023"] * 4
    with pytest.raises(Rejected):
        GAME.apply(s, 0, {"type": "legend", "card": "000023"})  # must name one to discard
    after = play(s, 0, {"type": "legend", "card": "000023", "replace": 2})
    assert len(after["legends"][0]) == 4 and after["players"][0]["discard"] == ["000023"]
    after = play(after, 0, {"type": "legend", "card": "100101"})
    assert after["rainbow"][0] == ["100101"] and len(after["legends"][0]) == 4


def test_ruling_12_a_choice_waits_for_the_seat_concerned() -> None:
    s = action_state(hands=(["000009"] + [FILLER] * 5, ["000006", "000007"]))
    s = play(s, 0, {"type": "use", "card": "000009"})
    assert GAME.to_act(s) == [1]
    assert GAME.legal_moves(s, 1) == [{"type": "choose", "card": "000006"},
                                      {"type": "choose", "card": "000007"},
                                      {"type": "resign"}]
    assert GAME.legal_moves(s, 0) == [{"type": "resign"}]
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, END)
    assert err.value.code == "not_your_turn"
    s = play(s, 1, {"type": "choose", "card": "000007"})
    assert s["players"][1]["discard"] == ["000007"] and GAME.to_act(s) == [0]


def test_ruling_13_lane_value_exact_no_precedence_skips() -> None:
    # Private lane 9 / 2 x 2 = 9 exactly (9/2 x 2), an "= 9" assertion (Nine) is true: +1.
    # Lane 1: 6 / 0: division by zero, no value: "integer" in public is skipped (not -1).
    b = board(l0=["000012", "000015", "000005", "000014", "000005"],
              l1=["000009", "000015", "000004"])
    add_assertion(b, "private0", "000012", 0)
    add_assertion(b, "left", "000018", 1)
    # lane 0: Nine +1, integer (9) +1; lane 1 skipped -> 2
    assert score_board(b, 0)["vp"] == [2, 0]
    assert [c["value"] for c in score_board(b, 0)["combos"] if c["lane"] == 0][0] == [9, 1]
    assert Fraction(9, 2) * 2 == 9


def test_ruling_14_public_lane_direction_by_assertion_vp_sums() -> None:
    # Public lane 9 - 3 / 2: from the left (9-3)/2 = 3; from the right 2/3 - 9 = -25/3.
    b = board(l2=["000012", "000013", "000006", "000015", "000005"])
    add_assertion(b, "private0", "000018", 0)
    add_assertion(b, "right", "000010", 1)  # VP 2 on the right: read from the left
    assert score_board(b, 0)["public_direction"] == "left"
    b["areas"]["right"] = []
    add_assertion(b, "left", "000010", 1)  # now the left sum is larger: from the right
    result = score_board(b, 0)
    assert result["public_direction"] == "right"
    assert [c["value"] for c in result["combos"] if c["lane"] == 2 and c["seat"] == 0] \
        == [[-25, 3]]


def test_ruling_15_three_combinations_per_player() -> None:
    # Seat 0 lane 0 = 3. Public "even" false: -1 (strict). Private "even" false: 0 (ignorable).
    # Public lane = 4 x private "even": true +1; public lane x private "odd": false -1 (strict).
    # Private "odd" x lane 0 (3): true +1. Total: -1 + 0 + 1 - 1 + 1 = 0.
    # (The public "even" sits in the right area: left sum 0 < 1, public read from the left.)
    b = board(l0=["000006"], l2=["000007"])
    add_assertion(b, "right", "000003", 1)
    add_assertion(b, "private0", "000003", 0)
    add_assertion(b, "private0", "000020", 0)
    combos = score_board(b, 0)["combos"]
    by = {(c["lane"], c["area"], c["card"]): c["points"] for c in combos if c["seat"] == 0}
    assert by[(0, "right", "000003")] == -1
    assert by[(0, "private0", "000003")] == 0
    assert by[(0, "private0", "000020")] == 1
    assert by[(2, "private0", "000003")] == 1
    assert by[(2, "private0", "000020")] == -1
    assert score_board(b, 0)["vp"][0] == 0


def test_ruling_16_end_conditions_and_winner() -> None:
    # Public lane full at an end phase: the game ends and is scored.
    s = action_state()
    fill_lane(s, 2, [FILLER, "000014", FILLER, "000014", FILLER], 0)
    over = play(s, 0, END)
    assert ended_with(over).reason == "public_lane_full"
    # Either player's deck empty at an end phase.
    s = action_state(decks=([FILLER] * 5, []))
    assert ended_with(play(s, 0, END)).reason == "deck_empty"
    # 10 PVP ends at once (mid-turn), more VP wins.
    s = action_state(hands=(["100001"], []))
    s["players"][0]["pvp"] = 8
    put(s, 0, 0, "000006", 0)
    put(s, 1, 0, "000009", 0)
    add_assertion(s, "private1", "000019", 1)
    put(s, 3, 0, FILLER, 1)
    over = play(s, 0, {"type": "function_calc", "card": "100001", "input": [0, 0],
                       "output": [1, 0]})
    outcome = GAME.outcome(over)
    assert outcome is not None and outcome.reason == "pvp_target"
    # Seat 1: lane 3 = 2, rational true +1. Seat 0: nothing left. Seat 1 wins on VP.
    assert outcome.scores == [0, 1] and outcome.winners == [1]
    # VP tied: more PVP wins; both tied: a draw.
    tied = action_state(decks=([FILLER] * 5, []))
    tied["players"][1]["pvp"] = 3
    assert ended_with(play(tied, 0, END)).winners == [1]
    tied["players"][0]["pvp"] = 3
    assert ended_with(play(tied, 0, END)).winners == []
    # Resignation at any time, by either seat, even when it is not their turn.
    s = action_state()
    assert {"type": "resign"} in GAME.legal_moves(s, 1)
    resigned = GAME.outcome(play(s, 1, {"type": "resign"}))
    assert resigned is not None and resigned.winners == [0] and resigned.reason == "resigned"


def test_ruling_17_decks_validated_public_lists_secret_order() -> None:
    state = GAME.setup(2, {}, 5)
    submit = {"type": "submit_deck"}
    for cards, word in (([FILLER] * 39, "39"), ([FILLER] * 61, "61"),
                        (["000010"] * 21 + [FILLER] * 19, "VP total 42"),
                        ([FILLER] * 39 + ["999999"], "999999")):
        with pytest.raises(Rejected) as err:
            GAME.apply(state, 0, {**submit, "cards": cards})
        assert err.value.code == "bad_deck" and word in err.value.reason
    # 20 Number Sevens = VP 40 in a 40-card deck: exactly allowed.
    state = play(state, 0, {**submit, "cards": ["000010"] * 20 + [FILLER] * 20})
    assert GAME.to_act(state) == [1]
    assert GAME.view(state, 1)["players"][0]["decklist"] is None  # not public until both in
    state = play(state, 1, {"type": "pick_deck", "deck": "logic"})
    v = GAME.view(state, 1)
    assert v["players"][0]["decklist"] == sorted(["000010"] * 20 + [FILLER] * 20)
    assert "deck" not in v["players"][0] and v["players"][0]["deck_size"] == 40 - 5 - (
        1 if state["first"] == 0 else 0)
    # The order is the server's seeded shuffle: same seed, same order; another seed differs.
    again = play(play(GAME.setup(2, {}, 5), 0, {**submit, "cards": ["000010"] * 20
                                                 + [FILLER] * 20}),
                 1, {"type": "pick_deck", "deck": "logic"})
    other = play(play(GAME.setup(2, {}, 6), 0, {**submit, "cards": ["000010"] * 20
                                                 + [FILLER] * 20}),
                 1, {"type": "pick_deck", "deck": "logic"})
    assert again["players"][1]["deck"] == state["players"][1]["deck"]
    assert other["players"][1]["deck"] != state["players"][1]["deck"]
