"""The standard two-player game, ruling by ruling (rulings 1-9 in docs/games/mandala.md)."""

from __future__ import annotations

from collections import Counter

import pytest

from playhall.games.contract import Rejected, State
from playhall.games.mandala import GAME
from playhall.games.mandala.cards import COLOURS, new_deck
from playhall.games.rng import Rng, seed_state

from .test_mandala_support import all_cards, counts, position

STANDARD = GAME.normalize_options({})


def test_ruling_1_deck_has_108_cards_18_of_each_of_six_colours() -> None:
    assert COLOURS == ("red", "orange", "yellow", "green", "blue", "purple")
    deck = Counter(new_deck())
    assert deck == {c: 18 for c in COLOURS}
    for mode, seats in (("standard", 2), ("solo", 1)):
        state = GAME.setup(seats, GAME.normalize_options({"mode": mode}), 99)
        assert all_cards(state) == {c: 18 for c in COLOURS}


def test_ruling_2_two_mandalas_with_mountain_and_two_fields_rivers_and_cups() -> None:
    state = GAME.setup(2, STANDARD, 5)
    view = GAME.view(state, 0)
    assert len(view["mandalas"]) == 2
    for mandala in view["mandalas"]:
        assert len(mandala["fields"]) == 2 and mandala["mountain"]
    for player in view["players"]:
        assert player["river"] == [] and player["cup_count"] == 2


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 17, 12345])
def test_ruling_3_setup_deals_mountains_left_first_then_6_hand_2_cup(seed: int) -> None:
    deck = new_deck()
    rng = Rng(seed_state(seed))
    rng.shuffle(deck)
    state = GAME.setup(2, STANDARD, seed)

    def stacked(cards: list[str]) -> list[dict[str, object]]:
        if cards[0] == cards[1]:
            return [{"colour": cards[0], "count": 2}]
        return [{"colour": cards[0], "count": 1}, {"colour": cards[1], "count": 1}]

    assert state["mandalas"][0]["mountain"] == stacked(deck[0:2])
    assert state["mandalas"][1]["mountain"] == stacked(deck[2:4])
    for p, start in ((0, 4), (1, 12)):
        assert state["players"][p]["hand"] == dict(Counter(deck[start:start + 6]), **{
            c: 0 for c in COLOURS if c not in deck[start:start + 6]})
        assert sum(state["players"][p]["cup"].values()) == 2
        assert Counter({c: n for c, n in state["players"][p]["cup"].items() if n}) == Counter(
            deck[start + 6:start + 8])
    assert state["deck"] == deck[20:]
    assert GAME.to_act(state) == [rng.below(2)]


def test_ruling_3_first_player_is_random_and_same_colours_stack() -> None:
    firsts = {GAME.to_act(GAME.setup(2, STANDARD, s))[0] for s in range(20)}
    assert firsts == {0, 1}
    stacks = [GAME.setup(2, STANDARD, s)["mandalas"][0]["mountain"] for s in range(60)]
    assert any(len(m) == 1 and m[0]["count"] == 2 for m in stacks)


def test_ruling_4_rule_of_colour_limits_mountain_and_field_moves() -> None:
    state = position(
        mountains=([("red", 1)], [("blue", 1)]),
        fields=((counts(orange=1), counts(yellow=1)),),
        hands=(counts(red=2, orange=2, yellow=2, green=1), counts(green=3)),
    )
    moves = GAME.legal_moves(state, 0)
    mountain_left = {m["colour"] for m in moves if m["type"] == "mountain" and m["mandala"] == 0}
    field_left = {m["colour"] for m in moves if m["type"] == "field" and m["mandala"] == 0}
    assert mountain_left == {"red", "green"}  # orange and yellow are in fields there
    assert field_left == {"orange", "green"}  # red in mountain, yellow in the opponent's field
    # The other mandala is independent: orange and yellow may go to its mountain.
    mountain_right = {m["colour"] for m in moves if m["type"] == "mountain" and m["mandala"] == 1}
    assert mountain_right == {"red", "orange", "yellow", "green"}
    for bad in ({"type": "mountain", "mandala": 0, "colour": "yellow"},
                {"type": "field", "mandala": 0, "colour": "red", "count": 1},
                {"type": "field", "mandala": 0, "colour": "yellow", "count": 1}):
        with pytest.raises(Rejected) as err:
            GAME.apply(state, 0, bad)
        assert err.value.code == "illegal_move"
        assert "rule of colour" in err.value.reason


def test_ruling_5_mountain_action_draws_up_to_3_within_hand_limit_of_8() -> None:
    state = position(hands=(counts(red=6), counts(green=3)), deck=["blue"] * 10)
    after = GAME.apply(state, 0, {"type": "mountain", "mandala": 0, "colour": "red"})
    hand = after.state["players"][0]["hand"]
    assert hand == counts(red=5, blue=3) and after.state["deck"] == ["blue"] * 7
    assert after.state["mandalas"][0]["mountain"] == [{"colour": "red", "count": 2}]
    assert GAME.to_act(after.state) == [1]  # exactly one action, then the turn passes
    full = position(hands=(counts(red=8), counts(green=3)), deck=["blue"] * 10)
    after = GAME.apply(full, 0, {"type": "mountain", "mandala": 1, "colour": "red"})
    assert after.state["players"][0]["hand"] == counts(red=7, blue=1)  # 7 + 1 = the limit


def test_ruling_5_field_action_plays_one_colour_no_draw_keeps_one_card() -> None:
    state = position(hands=(counts(green=3), counts(red=3)), deck=["blue"] * 10)
    field = [m for m in GAME.legal_moves(state, 0) if m["type"] == "field" and m["mandala"] == 0]
    assert sorted(m["count"] for m in field) == [1, 2]  # 3 would leave the hand empty
    with pytest.raises(Rejected) as err:
        GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "green", "count": 3})
    assert err.value.code == "illegal_move" and "keep" in err.value.reason
    after = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "green", "count": 2})
    assert after.state["mandalas"][0]["fields"][0] == counts(green=2)
    assert after.state["players"][0]["hand"] == counts(green=1)
    assert after.state["deck"] == state["deck"]
    assert GAME.to_act(after.state) == [1]


def test_ruling_5_discard_action_discards_one_colour_and_draws_as_many() -> None:
    state = position(hands=(counts(red=3, green=1), counts(red=3)),
                     deck=["blue", "purple", "yellow"])
    moves = [m for m in GAME.legal_moves(state, 0) if m["type"] == "discard"]
    assert {(m["colour"], m["count"]) for m in moves} == {
        ("red", 1), ("red", 2), ("red", 3), ("green", 1)}
    after = GAME.apply(state, 0, {"type": "discard", "colour": "red", "count": 2})
    assert after.state["players"][0]["hand"] == counts(red=1, green=1, blue=1, purple=1)
    assert after.state["discard"] == ["red", "red"]
    drawn = [e for e in after.events if e["type"] == "drawn"]
    assert drawn == [{"type": "drawn", "player": 0, "cards": ["blue", "purple"],
                      "visible_to": [0]}]


def five_colour_left(p0_field: int, p1_field: int) -> State:
    """Left mandala with five colours: red 2, orange 1, yellow 3 in the mountain, green in field 0,
    blue in field 1; player 0 holds purple and completes it by playing purple to the field."""
    return position(
        mountains=([("red", 2), ("orange", 1), ("yellow", 3)], [("red", 1)]),
        fields=((counts(green=p0_field), counts(blue=p1_field)),),
        hands=(counts(purple=1, red=1), counts(red=3)),
        deck=["orange", "purple", "green", "green"],
    )


def test_ruling_6_completion_first_choice_by_field_size_to_the_completer() -> None:
    state = five_colour_left(p0_field=2, p1_field=2)
    after = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple", "count": 1})
    complete = [e for e in after.events if e["type"] == "complete"]
    assert complete == [{"type": "complete", "mandala": 0, "by": 0, "first_chooser": 0,
                         "final": False}]  # 3 field cards against 2
    assert GAME.to_act(after.state) == [0]


def test_ruling_6_completion_first_choice_by_field_size_to_the_other_player() -> None:
    state = five_colour_left(p0_field=1, p1_field=3)
    after = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple", "count": 1})
    assert after.state["resolution"]["chooser"] == 1  # 2 against 3
    assert GAME.to_act(after.state) == [1]


def test_ruling_6_tied_fields_the_player_who_did_not_complete_chooses_first() -> None:
    state = five_colour_left(p0_field=1, p1_field=2)
    after = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple", "count": 1})
    assert after.state["resolution"]["chooser"] == 1  # 2 against 2: player 1 did not complete
    assert GAME.to_act(after.state) == [1]
    assert [m["colour"] for m in GAME.legal_moves(after.state, 1)] == ["red", "orange", "yellow"]
    with pytest.raises(Rejected) as err:
        GAME.apply(after.state, 0, {"type": "choose", "colour": "red"})
    assert err.value.code == "not_your_turn"


def test_ruling_6_picks_alternate_fill_rivers_and_cups_then_refill_and_pass() -> None:
    state = five_colour_left(p0_field=2, p1_field=1)
    state["players"][1]["river"] = ["red"]
    s = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple",
                              "count": 1}).state
    s = GAME.apply(s, 0, {"type": "choose", "colour": "yellow"}).state
    assert s["players"][0]["river"] == ["yellow"] and s["players"][0]["cup"] == counts(yellow=2)
    assert GAME.to_act(s) == [1]
    s = GAME.apply(s, 1, {"type": "choose", "colour": "red"}).state
    assert s["players"][1]["river"] == ["red"]  # already there: the whole stack goes to the cup
    assert s["players"][1]["cup"] == counts(red=2)
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, {"type": "choose", "colour": "red"})
    assert err.value.code == "illegal_move"
    result = GAME.apply(s, 0, {"type": "choose", "colour": "orange"})
    s = result.state
    assert s["players"][0]["river"] == ["yellow", "orange"]
    assert s["players"][0]["cup"] == counts(yellow=2)
    left = s["mandalas"][0]
    assert left["fields"] == [counts(), counts()]
    assert left["mountain"] == [{"colour": "orange", "count": 1},
                                {"colour": "purple", "count": 1}]
    assert Counter(s["discard"]) == {"green": 2, "purple": 1, "blue": 1}
    assert s["resolution"] is None and GAME.to_act(s) == [1]  # the completer's turn is over


def test_ruling_6_a_player_without_field_cards_chooses_but_discards() -> None:
    state = five_colour_left(p0_field=1, p1_field=0)
    state["mandalas"][0]["fields"][1] = counts()
    state["mandalas"][0]["mountain"].append({"colour": "blue", "count": 2})
    s = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple",
                              "count": 1}).state
    assert s["resolution"]["chooser"] == 0
    s = GAME.apply(s, 0, {"type": "choose", "colour": "yellow"}).state
    result = GAME.apply(s, 1, {"type": "choose", "colour": "blue"})
    take = [e for e in result.events if e["type"] == "take"][0]
    assert take["discarded"] == 2 and take["river"] == 0 and take["cup"] == 0
    assert result.state["players"][1]["river"] == []
    assert result.state["discard"] == ["blue", "blue"]


def test_ruling_6_with_no_field_cards_at_all_the_mountain_is_discarded() -> None:
    state = position(
        mountains=([("red", 1), ("orange", 2), ("yellow", 1), ("green", 1), ("blue", 1)],
                   [("red", 1)]),
        hands=(counts(purple=2), counts(red=2)),
        deck=["red", "red", "red", "orange", "orange"],
    )
    result = GAME.apply(state, 0, {"type": "mountain", "mandala": 0, "colour": "purple"})
    s = result.state
    assert [e["type"] for e in result.events if e["type"] in ("complete", "mountain_discarded")
            ] == ["complete", "mountain_discarded"]
    assert Counter(s["discard"]) == {"red": 1, "orange": 2, "yellow": 1, "green": 1, "blue": 1,
                                     "purple": 1}
    assert s["mandalas"][0]["mountain"] == [{"colour": "orange", "count": 2}]  # the refill
    assert s["players"][0]["hand"] == counts(purple=1, red=3)  # drew 3 before the resolution
    assert GAME.to_act(s) == [1]


def test_ruling_7_hands_and_cups_only_for_their_owner_deck_for_nobody() -> None:
    state = GAME.setup(2, STANDARD, 8)
    for viewer in (0, 1, None):
        view = GAME.view(state, viewer)
        assert "deck" not in view and view["deck_count"] == len(state["deck"])
        for p, player in enumerate(view["players"]):
            assert player["hand_count"] == 6 and player["cup_count"] == 2
            assert ("hand" in player) == (p == viewer)
            assert ("cup" in player) == (p == viewer)
        if viewer is not None:
            assert view["players"][viewer]["hand"] == state["players"][viewer]["hand"]
    events = GAME.apply(position(), 0, {"type": "mountain", "mandala": 0, "colour": "red"}).events
    private = [e for e in events if "cards" in e and e["type"] == "drawn"]
    assert private and all(e["visible_to"] == [0] for e in private)
    assert {"type": "draw", "player": 0, "count": 3} in events


def test_ruling_8a_a_full_river_ends_the_game_after_the_resolution() -> None:
    state = five_colour_left(p0_field=2, p1_field=1)
    state["players"][0]["river"] = ["red", "orange", "green", "blue", "purple"]
    s = GAME.apply(state, 0, {"type": "field", "mandala": 0, "colour": "purple",
                              "count": 1}).state
    s = GAME.apply(s, 0, {"type": "choose", "colour": "yellow"}).state
    assert len(s["players"][0]["river"]) == 6
    assert GAME.outcome(s) is None and GAME.to_act(s) == [1]  # the resolution goes on
    s = GAME.apply(s, 1, {"type": "choose", "colour": "red"}).state
    s = GAME.apply(s, 0, {"type": "choose", "colour": "orange"}).state
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "river_full"
    assert GAME.to_act(s) == [] and s["mandalas"][0]["mountain"] == []  # no refill
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 1, {"type": "discard", "colour": "red", "count": 1})
    assert err.value.code == "game_over"


def test_ruling_8b_empty_deck_reshuffles_discards_and_next_completion_is_last() -> None:
    state = position(
        mountains=([("red", 1), ("orange", 1), ("yellow", 1)], [("red", 1)]),
        fields=((counts(green=1), counts(blue=1)),),
        hands=(counts(purple=1, red=3), counts(red=3)),
        deck=["blue"],
        discard=["green", "green", "orange", "yellow"],
    )
    # Player 0 plays a red to the right mountain: draws 1 blue, then the deck is empty and the
    # discard pile becomes the new deck for the other 2 cards.
    result = GAME.apply(state, 0, {"type": "mountain", "mandala": 1, "colour": "red"})
    s = result.state
    assert [e for e in result.events if e["type"] == "reshuffle"] == [
        {"type": "reshuffle", "deck_count": 4}]
    assert s["reshuffled"] and s["discard"] == [] and len(s["deck"]) == 2
    assert GAME.view(s, None)["reshuffled"] is True
    s["players"][1]["hand"] = counts(red=2, purple=1)
    s = GAME.apply(s, 1, {"type": "field", "mandala": 0, "colour": "purple", "count": 1}).state
    assert s["resolution"]["final"] is True
    for _ in range(3):
        chooser = s["resolution"]["chooser"]
        s = GAME.apply(s, chooser, GAME.legal_moves(s, chooser)[0]).state
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "final_mandala"


def test_ruling_6_8b_completion_by_the_action_whose_draw_reshuffles_is_the_last() -> None:
    """Ruling 6: completion is checked after the action *and its draw*. Here the mountain action
    places the sixth colour and its draw empties the deck, so the discard pile is reshuffled
    first; the mandala is completed after the reshuffle, so it is the last one (ruling 8b) and
    the game ends once its resolution is finished."""
    state = five_colour_left(p0_field=2, p1_field=1)
    state["players"][0]["hand"] = counts(purple=2)
    state["mandalas"][0]["fields"][0] = counts(green=2)
    state["mandalas"][0]["mountain"] = [{"colour": "red", "count": 2},
                                        {"colour": "orange", "count": 1},
                                        {"colour": "yellow", "count": 3}]
    state["deck"] = []
    state["discard"] = ["red", "blue", "blue", "orange", "purple"]
    result = GAME.apply(state, 0, {"type": "mountain", "mandala": 0, "colour": "purple"})
    s = result.state
    kinds = [e["type"] for e in result.events]
    assert kinds.index("reshuffle") < kinds.index("complete")
    assert s["reshuffled"] and s["resolution"]["final"] is True
    assert [e["final"] for e in result.events if e["type"] == "complete"] == [True]
    assert GAME.view(s, 1)["resolution"]["final"] is True
    while s["resolution"] is not None:
        chooser = s["resolution"]["chooser"]
        s = GAME.apply(s, chooser, GAME.legal_moves(s, chooser)[0]).state
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "final_mandala"
    assert GAME.to_act(s) == [] and s["mandalas"][0]["mountain"] == []  # no refill at the end


def test_ruling_8b_draw_with_deck_and_discard_both_empty_ends_at_once() -> None:
    state = position(hands=(counts(red=2), counts(red=2)), deck=[], discard=[])
    result = GAME.apply(state, 0, {"type": "mountain", "mandala": 0, "colour": "red"})
    outcome = GAME.outcome(result.state)
    assert outcome is not None and outcome.reason == "cards_exhausted"
    assert result.events[-1]["type"] == "game_over"
    assert GAME.to_act(result.state) == []


def finished(cups: tuple[dict[str, int], dict[str, int]],
             rivers: tuple[list[str], list[str]]) -> State:
    state = position(cups=cups, rivers=rivers)
    state["phase"] = "over"
    state["end"] = "river_full"
    return state


def test_ruling_9_cup_cards_score_their_river_space_others_nothing() -> None:
    # Player 0: red in space 1, blue in space 3. Cup: 2 red (2), 3 blue (9), 4 green (0) = 11.
    # Player 1: purple in space 1. Cup: 5 purple = 5. River cards themselves score nothing.
    state = finished((counts(red=2, blue=3, green=4), counts(purple=5)),
                     (["red", "yellow", "blue"], ["purple"]))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.scores == [11, 5] and outcome.winners == [0]
    view = GAME.view(state, None)
    assert [p["score"] for p in view["players"]] == [11, 5]  # cups are shown at the end


def test_ruling_9_tie_goes_to_fewer_cup_cards_then_draw() -> None:
    # Both 6 points: player 0 with 3 cards (space 2), player 1 with 6 cards (space 1).
    state = finished((counts(red=3), counts(blue=6)), (["green", "red"], ["blue"]))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == [6, 6] and outcome.winners == [0]
    state = finished((counts(red=3), counts(blue=3)), (["green", "red"], ["yellow", "blue"]))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == [6, 6] and outcome.winners == []


def test_the_lobby_lists_the_seats_of_every_mode_the_default_included() -> None:
    # A client learns from `games` alone that the default (standard) mode takes exactly 2 seats.
    described = GAME.describe()
    assert (described["min_seats"], described["max_seats"]) == (1, 2)
    assert described["seats_by_option"] == {"mode": {"standard": [2, 2], "solo": [1, 1]}}
