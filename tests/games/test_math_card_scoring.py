"""Scoring (rulings 9, 13-15) worked by hand on full boards. Each test's comments carry the
working; the assertions check the engine's scoring function against it."""

from __future__ import annotations

from fractions import Fraction

from playhall.games.math_card.scoring import evaluate, read_sequence, score_board
from tests.games.test_math_card_support import add_assertion, board, put_function

DIV, MDIV, SUB, MUL, ADD, RADD = "000015", "000017", "000013", "000014", "000002", "000016"


def test_board_1_fractions_in_a_private_lane() -> None:
    # Seat 0 lane 0: 7 / 2 - 3 = 7/2 - 3 = 1/2 (exact, not 0.5 rounded).
    # Seat 0 lane 1: 9 x 2 = 18.
    # Public areas: left [Is an integer 1/1], right [Is a Rational Number 1/1]; private0 [even].
    # Seat 0, lane 0 (1/2): integer false -1, rational true +1, even (private) false 0  -> 0
    # Seat 0, lane 1 (18): integer +1, rational +1, even +1                             -> 3
    # Public lane empty: no value, the private assertion is skipped                     -> 0
    # Seat 1 has no lanes and no private assertions: every combination skipped          -> 0
    b = board(l0=["000010", DIV, "000005", SUB, "000006"], l1=["000012", MUL, "000005"])
    add_assertion(b, "left", "000018", 0)
    add_assertion(b, "right", "000019", 1)
    add_assertion(b, "private0", "000003", 0)
    assert evaluate(read_sequence(b["lanes"], 0)) == Fraction(1, 2)
    assert evaluate(read_sequence(b["lanes"], 1)) == 18
    result = score_board(b, first=0)
    assert result["vp"] == [3, 0]
    lane0 = [c for c in result["combos"] if c["lane"] == 0]
    assert {c["value"][0] for c in lane0} == {1} and {c["value"][1] for c in lane0} == {2}


def test_board_2_division_by_zero_and_question_operators() -> None:
    # Seat 0 lane 0: 7 / 2 = 7/2, then Round & Add with 3:
    #   floor(7/2) + 3 = 6   or   7/2 + floor(3) = 13/2.
    # Seat 1 lane 3: 4 ?/? 0: 4/0 has no value, 0/4 = 0 (the ? changes the result).
    # Seat 1 lane 4: 6 L/R 0 = 6/0: division by zero, no value, skipped (L/R cannot flip).
    # Areas: left [Multiples of three 2/1]; private0 [Rational 1/1]; private1 [even 1/1].
    # Seat 0 lane 0: 6 -> mult3 +2, rational +1 = 3; 13/2 -> mult3 -1, rational +1 = 0 -> 3.
    # Seat 1 lane 3: no value -> 0; 0 -> mult3 +2, even +1 = 3                  -> 3.
    # Seat 1 lane 4: skipped -> 0. Public lane empty -> 0.
    # Public sums: left 2 > right 0, so the public lane is read from the right.
    b = board(l0=["000010", DIV, "000005", RADD, "000006"], l3=["000007", MDIV, "000004"],
              l4=["000009", DIV, "000004"])
    add_assertion(b, "left", "000022", 0)
    add_assertion(b, "private0", "000019", 0)
    add_assertion(b, "private1", "000003", 1)
    seq3 = read_sequence(b["lanes"], 3)
    assert evaluate(seq3) is None
    assert evaluate(seq3, frozenset({1})) == 0
    assert evaluate(read_sequence(b["lanes"], 4)) is None
    assert evaluate(read_sequence(b["lanes"], 0)) == 6
    assert evaluate(read_sequence(b["lanes"], 0), frozenset({3})) == Fraction(13, 2)
    result = score_board(b, first=0)
    assert result["vp"] == [3, 3]
    assert result["public_direction"] == "right"


def _public_board(left: str, right: str) -> dict:
    # Public lane [9 (seat 0), - (seat 0), 3 (seat 1), / (seat 1), 2 (seat 1)].
    b = board(l0=["000005", MUL, None, None, None])  # incomplete: 2 x _ -> trailing x dropped
    lanes = b["lanes"]
    lanes[2] = [{"card": "000012", "owner": 0}, {"card": SUB, "owner": 0},
                {"card": "000006", "owner": 1}, {"card": DIV, "owner": 1},
                {"card": "000005", "owner": 1}]
    add_assertion(b, "left", left, 0)
    add_assertion(b, "right", right, 1)
    add_assertion(b, "private0", "000006", 0)  # "= 3"
    add_assertion(b, "private1", "000018", 1)  # integer
    return b


def test_board_3a_public_lane_read_from_the_right_and_an_incomplete_lane() -> None:
    # From the left: 9 - 3 = 6, 6 / 2 = 3.  From the right: 2 / 3 = 2/3, 2/3 - 9 = -25/3.
    # Left area [Number Seven "= 7", VP 2] > right [Is an integer, VP 1]: read from the right.
    # Public value -25/3: seat 0 "= 3" false -1; seat 1 integer false -1.
    # Seat 0 lane 0 = 2 (trailing x dropped): "= 7" false -1, integer true +1, "= 3" (private,
    # may be ignored) 0 -> 0. Seat 1 has no private lanes with a value -> skipped.
    # VP: seat 0 = 0 - 1 = -1, seat 1 = -1.
    b = _public_board("000010", "000018")
    assert evaluate(read_sequence(b["lanes"], 2, from_left=False)) == Fraction(-25, 3)
    assert evaluate(read_sequence(b["lanes"], 0)) == 2
    result = score_board(b, first=0)
    assert result["public_direction"] == "right"
    assert result["vp"] == [-1, -1]


def test_board_3b_public_lane_read_from_the_left() -> None:
    # Same board, areas exchanged: left [integer VP 1] < right ["= 7" VP 2]: from the left, 3.
    # Public value 3: seat 0 "= 3" true +1; seat 1 integer true +1.
    # Seat 0 lane 0 = 2: integer +1, "= 7" -1, "= 3" private 0 -> 0.   VP: [1, 1].
    b = _public_board("000018", "000010")
    assert evaluate(read_sequence(b["lanes"], 2)) == 3
    result = score_board(b, first=0)
    assert result["public_direction"] == "left"
    assert result["vp"] == [1, 1]


def test_board_4_equal_public_sums_second_player_picks() -> None:
    # Public lane [8, L/R, 4, -, 2]: from the left 8/4 = 2, 2 - 2 = 0;
    # from the right 2 - 4 = -2, -2 / 8 = -1/4. Left [integer 1] = right [rational 1].
    # private0 [integer], private1 [rational]. No private lanes.
    # From the left: seat 0 integer(0) +1, seat 1 rational +1.
    # From the right: seat 0 integer(-1/4) -1, seat 1 rational +1.
    # First = 0: seat 1 picks; margins: left 1-1 = 0, right 1-(-1) = 2 -> right, VP [-1, 1].
    # First = 1: seat 0 picks; margins: left 1-1 = 0, right -1-1 = -2 -> left, VP [1, 1].
    b = board(l2=["000011", DIV, "000007", SUB, "000005"])
    add_assertion(b, "left", "000018", 0)
    add_assertion(b, "right", "000019", 1)
    add_assertion(b, "private0", "000018", 0)
    add_assertion(b, "private1", "000019", 1)
    assert evaluate(read_sequence(b["lanes"], 2)) == 0
    assert evaluate(read_sequence(b["lanes"], 2, from_left=False)) == Fraction(-1, 4)
    second_is_1 = score_board(b, first=0)
    assert (second_is_1["public_direction"], second_is_1["vp"]) == ("right", [-1, 1])
    second_is_0 = score_board(b, first=1)
    assert (second_is_0["public_direction"], second_is_0["vp"]) == ("left", [1, 1])


def test_board_5_function_operator_values_and_puzzles() -> None:
    # Seat 0 lane 0: 3, Doubling -> 6, + 2 -> 8.   Seat 0 lane 1: 5, Halving -> 5/2.
    # Public lane: only seat 0's 1 in slot 0 (from the left: 1; from the right: no value).
    # Left area: seat 1's puzzle over Number Two ("= 2", VP = DP = 1); right: Multiples of
    # three (VP 2). Sums 1 < 2 -> public read from the left: value 1.
    # private0: seat 0's puzzle over Number Eight ("= 8", VP = DP = 4).
    # Seat 1 lane 3: 0 / 0 (division by zero), lane 4 empty.
    # Seat 0 lane 0 (8): "=2" -1, mult3 -1, private "=8" +4 -> 2
    # Seat 0 lane 1 (5/2): "=2" -1, mult3 (not an integer) -1, "=8" 0 -> -2
    # Seat 0 public (1) x private "=8": false, strict -> -4.          Seat 0: 2 - 2 - 4 = -4
    # Seat 1 lane 3 (no value): the puzzle is not skipped: false, DP 2 -> -2; mult3 skipped.
    # Seat 1 lane 4 (empty): puzzle -2 again. No private1 assertions.  Seat 1: -4
    b = board(l0=["000006", None, None, ADD, "000005"], l1=["000008"],
              l2=["000001"], l3=["000004", DIV, "000004"])
    put_function(b, 0, 1, "100001", 0)
    put_function(b, 1, 1, "100004", 0)
    add_assertion(b, "left", "000021", 1, under="000005")
    add_assertion(b, "right", "000022", 0)
    add_assertion(b, "private0", "000021", 0, under="000011")
    assert evaluate(read_sequence(b["lanes"], 0)) == 8
    assert evaluate(read_sequence(b["lanes"], 1)) == Fraction(5, 2)
    result = score_board(b, first=0)
    assert result["public_direction"] == "left"
    assert result["vp"] == [-4, -4]
    # Seen from seat 0's view (seat 1's puzzle hidden): that puzzle is skipped, VP 0 in sums.
    b["areas"]["left"][0]["under"] = None
    # Sums 0 < 2 still from the left. Seat 0: lane 0 -1 + 4 = 3, lane 1 -1, public -4 -> -2.
    assert score_board(b, first=0)["vp"] == [-2, 0]


def test_no_precedence_and_trailing_operator() -> None:
    # 2 + 3 x 4 read left to right = 20 (with precedence it would be 14).
    b = board(l0=["000005", ADD, "000006", MUL, "000007"], l1=["000005", SUB])
    assert evaluate(read_sequence(b["lanes"], 0)) == 20
    assert evaluate(read_sequence(b["lanes"], 1)) == 2
    assert evaluate(read_sequence(b["lanes"], 3)) is None
