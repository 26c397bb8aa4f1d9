"""Mantis, rule by rule: one test (or more) per numbered ruling, plus moves, options, views.

Most tests build a position by hand with :func:`build`, so the card about to be flipped is
known and every expected result below is worked out from the rulings, not read off the engine.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

import pytest

from playhall.games.contract import Rejected, State
from playhall.games.mantis import GAME
from playhall.games.mantis.cards import BACK, BACKS, CODE, COLOURS, DECK_SIZE, FACE
from tests.games.conformance import encode

RULING_COLOURS = ["red", "orange", "yellow", "green", "blue", "purple", "pink"]


def card(face: str, *back: str) -> int:
    """The card with this face colour and this back (colour names, any order)."""
    want = sorted(RULING_COLOURS.index(c) for c in back)
    for c in range(DECK_SIZE):
        if COLOURS[FACE[c]] == face and BACKS[BACK[c]] == want:
            return c
    raise AssertionError(f"no card {face} on {back}")


def build(
    tanks: list[list[int]],
    upcoming: list[int],
    *,
    piles: list[int] | None = None,
    turn: int = 0,
    target: int | None = None,
    last_cards: bool = False,
) -> State:
    """A consistent mid-game state: these tanks, score piles of these sizes (filled with cards
    nobody else uses) and ``upcoming`` as the next cards of the draw pile, top first.

    With ``last_cards`` the draw pile holds exactly ``upcoming`` (the piles must then absorb
    every other card); otherwise the unused cards follow ``upcoming`` in the draw pile.
    """
    seats = len(tanks)
    piles = piles or [0] * seats
    named = [c for t in tanks for c in t] + list(upcoming)
    assert len(set(named)) == len(named), "a card was named twice"
    spare = [c for c in range(DECK_SIZE) if c not in set(named)]
    pile_cards: list[list[int]] = []
    for size in piles:
        pile_cards.append(spare[:size])
        spare = spare[size:]
    if last_cards:
        assert not spare, f"{len(spare)} cards unaccounted for"
    used = [c for p in pile_cards for c in p] + [c for t in tanks for c in t]
    deck = used + list(upcoming) + spare
    return {
        "seats": seats,
        "target": target if target is not None else (15 if seats == 2 else 10),
        "deck": deck,
        "next": len(used),
        "tanks": [list(t) for t in tanks],
        "piles": pile_cards,
        "turn": turn,
        "first": 0,
        "rng": 1,
        "last": None,
        "result": None,
    }


def play(state: State, seat: int, move: dict[str, Any]) -> tuple[State, list[dict[str, Any]]]:
    result = GAME.apply(state, seat, move)
    return result.state, result.events


SCORE = {"type": "score"}


def steal(target: int) -> dict[str, Any]:
    return {"type": "steal", "target": target}


def conserved(state: State) -> bool:
    cards = state["deck"][state["next"]:] + [c for t in state["tanks"] for c in t]
    cards += [c for p in state["piles"] for c in p]
    return sorted(cards) == list(range(DECK_SIZE))


# -- Ruling 1: the deck -----------------------------------------------------------------------


def test_ruling_1_deck_is_35_backs_times_3_faces() -> None:
    expected = {
        (face, back)
        for back in combinations(RULING_COLOURS, 3)
        for face in back
    }
    actual = {(COLOURS[FACE[c]], tuple(COLOURS[i] for i in BACKS[BACK[c]])) for c in range(105)}
    assert DECK_SIZE == 105
    assert len(expected) == 105
    assert actual == expected
    assert Counter(COLOURS[FACE[c]] for c in range(105)) == {c: 15 for c in RULING_COLOURS}
    assert Counter(BACK[c] for c in range(105)) == {b: 3 for b in range(35)}


def test_ruling_1_card_codes_name_face_and_back() -> None:
    red = card("red", "red", "green", "blue")
    assert CODE[red] == "red:red,green,blue"
    assert len(set(CODE)) == 105


# -- Ruling 2: setup --------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_ruling_2_deal_four_face_up_each(seats: int) -> None:
    state = GAME.setup(seats, GAME.normalize_options({}), 99)
    assert [len(t) for t in state["tanks"]] == [4] * seats
    assert state["piles"] == [[]] * seats
    assert sorted(state["deck"]) == list(range(105))
    assert conserved(state)
    view = GAME.view(state, None)
    assert view["cards_left"] == 105 - 4 * seats
    assert all(len(t) == 4 for t in view["tanks"])


def test_ruling_2_shuffle_and_first_player_come_from_the_seed() -> None:
    a = GAME.setup(4, GAME.normalize_options({}), 1234)
    b = GAME.setup(4, GAME.normalize_options({}), 1234)
    assert encode(a) == encode(b)
    decks = {tuple(GAME.setup(4, {"target": 0}, s)["deck"]) for s in range(20)}
    assert len(decks) == 20
    firsts = Counter(GAME.setup(4, {"target": 0}, s)["first"] for s in range(200))
    assert set(firsts) == {0, 1, 2, 3}
    assert all(30 < n < 70 for n in firsts.values())
    for s in range(20):
        state = GAME.setup(3, {"target": 0}, s)
        assert GAME.to_act(state) == [state["first"]]
        assert GAME.view(state, 0)["first"] == state["first"]


def test_ruling_2_play_passes_in_seat_order() -> None:
    # Four players, nothing ever matches: every flip misses and play goes 2, 3, 0, 1, 2.
    tanks = [[card("red", "red", "orange", "yellow")], [card("red", "red", "orange", "green")],
             [card("red", "red", "orange", "blue")], [card("red", "red", "orange", "purple")]]
    upcoming = [card("green", "green", "blue", "purple"), card("blue", "green", "blue", "purple"),
                card("purple", "green", "blue", "purple"), card("green", "green", "blue", "pink")]
    state = build(tanks, upcoming, turn=2)
    order = []
    for move in [SCORE, steal(0), SCORE, steal(3)]:
        seat = GAME.to_act(state)[0]
        order.append(seat)
        state, _ = play(state, seat, move)
    assert order == [2, 3, 0, 1]
    assert GAME.to_act(state) == [2]


# -- Ruling 3: what everybody sees -------------------------------------------------------------


def test_ruling_3_views_show_tanks_pile_sizes_top_back_and_count_only() -> None:
    state = GAME.setup(3, GAME.normalize_options({}), 5)
    # Play a few moves so score piles exist (seat order from the first player).
    for _ in range(30):
        if GAME.outcome(state) is not None:
            break
        seat = GAME.to_act(state)[0]
        state, _ = play(state, seat, SCORE)
    hidden_deck = state["deck"][state["next"]:]
    last = state["last"]["card"]
    piles = [c for p in state["piles"] for c in p if CODE[c] != last]
    assert any(state["piles"]), "the seed should have produced a score by now"
    views = [GAME.view(state, v) for v in [0, 1, 2, None]]
    for view in views:
        assert set(view) == {"seats", "turn", "first", "target", "tanks", "scores",
                             "top_back", "cards_left", "last", "left", "outcome"}
        blob = encode(view)
        for c in hidden_deck + piles:
            assert encode(CODE[c]) not in blob
        assert view["scores"] == [len(p) for p in state["piles"]]
        assert view["tanks"] == [[CODE[c] for c in t] for t in state["tanks"]]
        top = state["deck"][state["next"]]
        assert view["top_back"] == [COLOURS[i] for i in BACKS[BACK[top]]]
        assert view["cards_left"] == 105 - state["next"]
    # Every viewer sees the same thing, and the game says so: the room shows them one map.
    assert all(v == views[0] for v in views) and GAME.public_view


def test_ruling_3_view_does_not_depend_on_the_top_face_or_deck_order() -> None:
    tanks = [[card("red", "red", "orange", "yellow")], [card("blue", "green", "blue", "pink")]]
    a = build(tanks, [card("green", "green", "purple", "pink"), card("red", "red", "blue", "pink")])
    b = build(tanks, [card("pink", "green", "purple", "pink"), card("blue", "red", "blue", "pink")])
    for viewer in [0, 1, None]:
        assert GAME.view(a, viewer) == GAME.view(b, viewer)
    assert GAME.legal_moves(a, 0) == GAME.legal_moves(b, 0)


# -- Ruling 4: score ----------------------------------------------------------------------------


def test_ruling_4_scoring_takes_matching_and_flipped() -> None:
    red1, red2 = card("red", "red", "orange", "yellow"), card("red", "red", "green", "blue")
    blue = card("blue", "green", "blue", "pink")
    flip = card("red", "red", "purple", "pink")
    state = build([[red1, blue, red2], [card("red", "red", "orange", "green")]], [flip])
    new, events = play(state, 0, SCORE)
    assert new["tanks"][0] == [blue]
    assert sorted(new["piles"][0]) == sorted([red1, red2, flip])  # matching 2 scores 3
    assert new["tanks"][1] == state["tanks"][1]  # the other red tank is untouched
    assert GAME.view(new, None)["scores"] == [3, 0]
    assert events[0] == {"type": "flip", "seat": 0, "action": "score", "target": None,
                         "card": CODE[flip], "colour": "red"}
    assert events[1] == {"type": "scored", "seat": 0, "colour": "red", "count": 3, "pile": 3}
    assert new["last"]["result"] == "scored" and new["last"]["count"] == 3
    assert conserved(new)


def test_ruling_4_score_miss_puts_the_card_in_own_tank() -> None:
    red = card("red", "red", "orange", "yellow")
    flip = card("green", "green", "blue", "pink")
    state = build([[red], [card("green", "red", "orange", "green")]], [flip])
    new, events = play(state, 0, SCORE)
    assert new["tanks"][0] == [red, flip]
    assert new["tanks"][1] == state["tanks"][1]  # a green card elsewhere does not matter
    assert new["piles"] == [[], []]
    assert events[1] == {"type": "to_tank", "seat": 0, "card": CODE[flip]}
    assert GAME.to_act(new) == [1]


# -- Ruling 5: steal ----------------------------------------------------------------------------


def test_ruling_5_steal_moves_matching_and_flipped_into_my_tank_unscored() -> None:
    mine = card("pink", "red", "orange", "pink")
    blue1, blue2 = card("blue", "red", "green", "blue"), card("blue", "orange", "blue", "pink")
    keep = card("yellow", "yellow", "green", "blue")
    flip = card("blue", "yellow", "blue", "purple")
    state = build([[mine], [], [blue1, keep, blue2]], [flip])
    new, events = play(state, 0, steal(2))
    assert new["tanks"][0] == [mine, blue1, blue2, flip]
    assert new["tanks"][2] == [keep]
    assert new["piles"] == [[], [], []]  # not scored
    assert events[1] == {"type": "stolen", "seat": 0, "from": 2, "colour": "blue",
                         "cards": [CODE[blue1], CODE[blue2], CODE[flip]], "count": 3}
    assert GAME.to_act(new) == [1]  # three players: no extra turn
    assert conserved(new)


def test_ruling_5_steal_miss_puts_the_card_in_their_tank() -> None:
    mine = card("blue", "red", "orange", "blue")
    theirs = card("red", "red", "green", "blue")
    flip = card("blue", "yellow", "blue", "purple")  # matches my tank, not theirs: irrelevant
    state = build([[mine], [theirs]], [flip])
    new, events = play(state, 0, steal(1))
    assert new["tanks"] == [[mine], [theirs, flip]]
    assert events[1] == {"type": "to_tank", "seat": 1, "card": CODE[flip]}
    assert GAME.to_act(new) == [1]


def test_ruling_5_choice_is_made_seeing_only_the_back() -> None:
    state = GAME.setup(4, GAME.normalize_options({}), 8)
    seat = GAME.to_act(state)[0]
    moves = GAME.legal_moves(state, seat)
    assert moves == [SCORE] + [steal(o) for o in range(4) if o != seat]
    top = state["deck"][state["next"]]
    view = GAME.view(state, seat)
    assert view["top_back"] == [COLOURS[i] for i in BACKS[BACK[top]]]
    assert encode(CODE[top]) not in encode(view)
    with pytest.raises(Rejected) as err:
        GAME.apply(state, seat, steal(seat))
    assert err.value.code == "illegal_move"


# -- Ruling 6: winning --------------------------------------------------------------------------


def test_ruling_6_reaching_the_target_wins_at_once() -> None:
    red1, red2 = card("red", "red", "orange", "yellow"), card("red", "red", "green", "blue")
    flip = card("red", "red", "purple", "pink")
    # Three players, target 10: 8 in the pile + 3 scored = 11 >= 10 (reaching or passing wins).
    state = build([[red1, red2], [], []], [flip], piles=[8, 9, 9], turn=0)
    new, events = play(state, 0, SCORE)
    outcome = GAME.outcome(new)
    assert outcome is not None
    assert outcome.winners == [0] and outcome.reason == "target_reached"
    assert outcome.scores == [11, 9, 9]
    assert GAME.to_act(new) == []
    assert GAME.legal_moves(new, 1) == []
    assert events[-1] == {"type": "game_over", "winners": [0], "scores": [11, 9, 9],
                          "reason": "target_reached"}
    assert GAME.view(new, 2)["outcome"] == outcome.as_dict()
    assert GAME.view(new, 2)["turn"] is None
    with pytest.raises(Rejected) as err:
        GAME.apply(new, 1, SCORE)
    assert err.value.code == "game_over"


def test_ruling_6_one_short_of_the_target_plays_on() -> None:
    red = card("red", "red", "orange", "yellow")
    flip = card("red", "red", "purple", "pink")
    state = build([[red], [], []], [flip], piles=[7, 0, 0])  # 7 + 2 = 9 < 10
    new, _ = play(state, 0, SCORE)
    assert GAME.outcome(new) is None
    assert GAME.to_act(new) == [1]


@pytest.mark.parametrize(("seats", "option", "target"),
                         [(2, 0, 15), (3, 0, 10), (6, 0, 10), (2, 7, 7), (5, 105, 105)])
def test_ruling_6_target_defaults_and_option(seats: int, option: int, target: int) -> None:
    state = GAME.setup(seats, GAME.normalize_options({"target": option}), 3)
    assert state["target"] == target
    assert GAME.view(state, None)["target"] == target


def test_ruling_6_target_option_is_validated() -> None:
    assert GAME.normalize_options({}) == {"target": 0}
    for bad in [-1, 106, "10", True, 1.5]:
        with pytest.raises(Rejected) as err:
            GAME.normalize_options({"target": bad})
        assert err.value.code == "bad_option"
    with pytest.raises(Rejected):
        GAME.normalize_options({"goal": 10})
    described = GAME.describe()["options"][0]
    assert described["min"] == 0 and described["max"] == 105


# -- Ruling 7: two players, a successful steal chains ------------------------------------------


def test_ruling_7_two_player_successful_steal_gives_another_turn_and_chains() -> None:
    red = card("red", "red", "orange", "yellow")
    blue = card("blue", "green", "blue", "pink")
    mine = card("yellow", "yellow", "green", "blue")
    flips = [card("red", "red", "green", "blue"), card("blue", "orange", "blue", "pink"),
             card("green", "green", "purple", "pink")]
    state = build([[mine], [red, blue]], flips, turn=0)
    state, events = play(state, 0, steal(1))
    assert events[-1] == {"type": "extra_turn", "seat": 0}
    assert GAME.to_act(state) == [0]
    assert GAME.view(state, 1)["turn"] == 0
    state, events = play(state, 0, steal(1))  # the chain goes on
    assert events[-1] == {"type": "extra_turn", "seat": 0}
    assert GAME.to_act(state) == [0]
    assert state["tanks"] == [[mine, red, flips[0], blue, flips[1]], []]
    state, events = play(state, 0, steal(1))  # green misses: into their (empty) tank
    assert [e["type"] for e in events] == ["flip", "to_tank"]
    assert state["tanks"][1] == [flips[2]]
    assert GAME.to_act(state) == [1]


def test_ruling_7_no_extra_turn_for_scoring_or_with_more_players() -> None:
    red1, red2 = card("red", "red", "orange", "yellow"), card("red", "red", "green", "blue")
    flip = card("red", "red", "purple", "pink")
    two = build([[red1], [red2]], [flip])
    new, events = play(two, 0, SCORE)  # a successful score passes the turn
    assert GAME.to_act(new) == [1]
    assert all(e["type"] != "extra_turn" for e in events)
    three = build([[red1], [red2], []], [flip])
    new, events = play(three, 0, steal(1))  # a successful steal with three players passes too
    assert new["tanks"][0] == [red1, red2, flip]
    assert GAME.to_act(new) == [1]
    assert all(e["type"] != "extra_turn" for e in events)


# -- Ruling 8: the deck runs out ----------------------------------------------------------------


def test_ruling_8_deck_out_most_points_wins() -> None:
    mine = card("red", "red", "orange", "yellow")
    theirs = [card("blue", "green", "blue", "pink"), card("green", "green", "blue", "pink")]
    last = card("yellow", "yellow", "purple", "pink")
    # 1 + 2 tank cards + 1 to draw + 52 + 49 in piles = 105; target out of reach.
    state = build([[mine], theirs], [last], piles=[52, 49], target=105, last_cards=True)
    assert conserved(state)
    assert GAME.view(state, None)["cards_left"] == 1
    new, events = play(state, 0, SCORE)
    outcome = GAME.outcome(new)
    assert outcome is not None
    assert (outcome.winners, outcome.scores, outcome.reason) == ([0], [52, 49], "deck_exhausted")
    assert events[-1]["type"] == "game_over"
    view = GAME.view(new, 1)
    assert view["cards_left"] == 0 and view["top_back"] is None and view["turn"] is None


def test_ruling_8_deck_out_tie_goes_to_most_tank_cards() -> None:
    mine = card("red", "red", "orange", "yellow")
    theirs = [card("blue", "green", "blue", "pink"), card("green", "green", "blue", "pink"),
              card("pink", "green", "blue", "pink")]
    last = card("yellow", "yellow", "purple", "pink")
    # 50 - 50; seat 0 ends with 2 tank cards (its miss lands there), seat 1 has 3.
    state = build([[mine], theirs], [last], piles=[50, 50], target=105, last_cards=True)
    new, _ = play(state, 0, SCORE)
    outcome = GAME.outcome(new)
    assert outcome is not None
    assert outcome.winners == [1] and outcome.reason == "deck_exhausted"
    # Same piles, but seat 0 steals the last card's colour away: 4 vs 2, seat 0 wins.
    mine2 = [card("blue", "red", "orange", "blue")]
    last2 = card("blue", "yellow", "blue", "purple")
    state = build([mine2, theirs], [last2], piles=[50, 50], target=105, last_cards=True)
    new, events = play(state, 0, steal(1))
    outcome = GAME.outcome(new)
    assert outcome is not None and outcome.winners == [0]
    assert [len(t) for t in new["tanks"]] == [3, 2]
    assert all(e["type"] != "extra_turn" for e in events)  # the game is over, no more turns


def test_ruling_8_deck_out_still_tied_all_win() -> None:
    tanks = [[card("red", "red", "orange", "yellow"), card("blue", "red", "orange", "blue")],
             [card("green", "green", "blue", "pink"), card("pink", "green", "blue", "pink")],
             [card("purple", "red", "green", "purple")]]
    last = card("yellow", "yellow", "purple", "pink")
    # 33 each, tanks 2 / 2 / 1 and seat 2's missed score brings it to 2: all three tied.
    state = build(tanks, [last], piles=[33, 33, 33], turn=2, target=105, last_cards=True)
    new, _ = play(state, 2, SCORE)
    outcome = GAME.outcome(new)
    assert outcome is not None
    assert outcome.winners == [0, 1, 2] and outcome.scores == [33, 33, 33]


def test_ruling_8_target_reached_on_the_last_card_is_a_target_win() -> None:
    tanks = [[card("red", "red", "orange", "yellow")], [card("blue", "green", "blue", "pink")]]
    last = card("red", "red", "purple", "pink")
    state = build(tanks, [last], piles=[51, 51], target=53, last_cards=True)
    new, _ = play(state, 0, SCORE)
    outcome = GAME.outcome(new)
    assert outcome is not None
    assert outcome.winners == [0] and outcome.reason == "target_reached"


# -- Ruling 9: an empty tank plays on -----------------------------------------------------------


def test_ruling_9_empty_tank_plays_on_normally() -> None:
    flip1 = card("red", "red", "orange", "yellow")
    flip2 = card("blue", "green", "blue", "pink")
    state = build([[], [card("green", "green", "purple", "pink")]], [flip1])
    assert GAME.legal_moves(state, 0) == [SCORE, steal(1)]
    state, events = play(state, 0, SCORE)  # nothing to match: the card lands in the tank
    assert state["tanks"][0] == [flip1] and state["piles"][0] == []
    assert events[1]["type"] == "to_tank"
    # And an empty tank can be stolen from: a miss lands in it.
    state = build([[], [card("green", "green", "purple", "pink")]], [flip2], turn=1)
    state, events = play(state, 1, steal(0))
    assert state["tanks"][0] == [flip2]
    assert events[1] == {"type": "to_tank", "seat": 0, "card": CODE[flip2]}
    assert GAME.to_act(state) == [0]


# -- moves, rejections, events ------------------------------------------------------------------


@pytest.mark.parametrize("move", [
    None, [], "score", 3, {}, {"type": None}, {"type": "draw"}, {"type": "SCORE"},
    {"type": "score", "target": 1}, {"type": "score", "x": 1},
    {"type": "steal"}, {"type": "steal", "target": "1"}, {"type": "steal", "target": True},
    {"type": "steal", "target": 1.0}, {"type": "steal", "target": 7},
    {"type": "steal", "target": -1},
    {"type": "steal", "target": 1, "extra": 0}, {"type": "steal", "seat": 1}, {1: "score"},
])
def test_malformed_moves_are_bad_move(move: Any) -> None:
    state = GAME.setup(3, GAME.normalize_options({}), 4)
    before = encode(state)
    seat = GAME.to_act(state)[0]
    with pytest.raises(Rejected) as err:
        GAME.apply(state, seat, move)
    assert err.value.code == "bad_move"
    assert encode(state) == before


def test_out_of_turn_and_self_steal_are_refused() -> None:
    state = GAME.setup(3, GAME.normalize_options({}), 4)
    seat = GAME.to_act(state)[0]
    other = (seat + 1) % 3
    for who in [other, -1, 3, None]:
        with pytest.raises(Rejected) as err:
            GAME.apply(state, who, SCORE)
        assert err.value.code == "not_your_turn"
    assert GAME.legal_moves(state, other) == []
    with pytest.raises(Rejected) as err:
        GAME.apply(state, seat, steal(seat))
    assert err.value.code == "illegal_move"


def test_apply_leaves_its_input_alone_and_shares_only_untouched_lists() -> None:
    red1, red2 = card("red", "red", "orange", "yellow"), card("red", "red", "green", "blue")
    state = build([[red1], [red2], [card("blue", "green", "blue", "pink")]],
                  [card("red", "red", "purple", "pink")])
    before = encode(state)
    new, _ = play(state, 0, steal(1))
    assert encode(state) == before
    assert new["tanks"][2] is state["tanks"][2]  # untouched tanks are shared, not copied
    assert new["tanks"][0] is not state["tanks"][0]


def test_events_are_public_and_name_the_flip() -> None:
    state = GAME.setup(2, GAME.normalize_options({}), 11)
    seat = GAME.to_act(state)[0]
    top = state["deck"][state["next"]]
    new, events = play(state, seat, SCORE)
    assert events[0]["type"] == "flip" and events[0]["card"] == CODE[top]
    assert events[0]["colour"] == COLOURS[FACE[top]]
    assert all("visible_to" not in e for e in events)
    last = GAME.view(new, None)["last"]
    assert last["card"] == CODE[top] and last["seat"] == seat and last["action"] == "score"


def test_setup_refuses_bad_seat_counts() -> None:
    for seats in [0, 1, 7]:
        with pytest.raises(Rejected):
            GAME.setup(seats, GAME.normalize_options({}), 1)
    assert (GAME.min_seats, GAME.max_seats) == (2, 6)
