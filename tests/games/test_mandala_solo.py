"""The solo game against Master Yoga (rulings 10-15), with a hand-built position for every branch
of his move procedure and of his colour choice (full and simple)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from playhall.games.contract import Rejected
from playhall.games.mandala import GAME
from playhall.games.mandala.cards import new_deck
from playhall.games.rng import Rng, seed_state

from .test_mandala_support import counts, position

SOLO = GAME.normalize_options({"mode": "solo"})


def yoga_step(state: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    assert GAME.auto_delay(state) is not None, "no Yoga step pending"
    assert GAME.to_act(state) == []
    result = GAME.apply_auto(state)
    return result.state, result.events


def draws(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["colour"], e["to"]) for e in events if e["type"] == "yoga_draw"]


def test_options_and_seat_ranges() -> None:
    assert GAME.seat_range(GAME.normalize_options({})) == (2, 2)
    assert GAME.seat_range(SOLO) == (1, 1)
    assert SOLO == {"mode": "solo", "yoga": "full", "yoga_delay_ms": 800}
    for bad in ({"mode": "duel"}, {"yoga": "hard"}, {"yoga_delay_ms": -1},
                {"yoga_delay_ms": 10001}, {"yoga_delay_ms": True}, {"speed": 1}):
        with pytest.raises(Rejected) as err:
            GAME.normalize_options(bad)
        assert err.value.code == "bad_option"
    with pytest.raises(Rejected):
        GAME.setup(2, SOLO, 1)
    state = position("solo", slot=1)
    state["delay_ms"] = 2500
    assert GAME.auto_delay(state) == 2.5


def test_ruling_10_solo_setup_and_turn_order_human_then_yoga_left_then_right() -> None:
    seed = 31
    deck = new_deck()
    Rng(seed_state(seed)).shuffle(deck)
    state = GAME.setup(1, SOLO, seed)
    human, yoga = state["players"]
    assert Counter({c: n for c, n in human["hand"].items() if n}) == Counter(deck[0:6])
    assert Counter({c: n for c, n in human["cup"].items() if n}) == Counter(deck[6:8])
    assert Counter({c: n for c, n in yoga["cup"].items() if n}) == Counter(deck[8:10])
    assert sum(yoga["hand"].values()) == 0
    left = [s["colour"] for s in state["mandalas"][0]["mountain"]]
    assert left == list(dict.fromkeys(deck[10:12]))
    assert state["deck"] == deck[14:]
    assert GAME.to_act(state) == [0] and GAME.auto_delay(state) is None
    move = next(m for m in GAME.legal_moves(state, 0) if m["type"] == "discard")
    s = GAME.apply(state, 0, move).state
    assert GAME.to_act(s) == [] and GAME.auto_delay(s) == 0.8
    assert GAME.view(s, 0)["yoga_next"] == "left"
    with pytest.raises(Rejected) as err:
        GAME.apply(s, 0, move)
    assert err.value.code == "not_your_turn"
    s, events = yoga_step(s)
    assert {e["mandala"] for e in events if e["type"] == "yoga_draw"} == {0}
    assert all("visible_to" not in e for e in events if e["type"] == "yoga_draw")
    assert GAME.view(s, 0)["yoga_next"] == "right"
    s, events = yoga_step(s)
    assert {e["mandala"] for e in events if e["type"] == "yoga_draw"} == {1}
    assert GAME.to_act(s) == [0] and GAME.auto_delay(s) is None
    # His draws are shown to the human; his cup is not.
    view = GAME.view(s, 0)
    assert view["last"] == [e for e in events if "visible_to" not in e]
    assert "cup" not in view["players"][1] and view["players"][1]["name"] == "Master Yoga"


# -- ruling 11: one Yoga move -----------------------------------------------------------------

def test_ruling_11_first_card_in_the_mountain_goes_there_and_ends_the_move() -> None:
    state = position("solo", slot=1, mountains=([("red", 1)], [("blue", 1)]),
                     deck=["red", "green", "green"])
    s, events = yoga_step(state)
    assert draws(events) == [("red", "mountain")]
    assert s["mandalas"][0]["mountain"] == [{"colour": "red", "count": 2}]
    assert s["slot"] == 2 and s["deck"] == ["green", "green"]


def test_ruling_11_first_card_in_the_humans_field_is_discarded() -> None:
    state = position("solo", slot=1, fields=((counts(green=1), counts()),),
                     deck=["green", "yellow"])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "discard")]
    assert s["discard"] == ["green"] and s["mandalas"][0]["fields"][1] == counts()


def test_ruling_11_first_new_card_goes_to_his_field_and_he_draws_on() -> None:
    # Later cards: a colour already in his field goes there too; a mountain colour is discarded
    # and ends the move.
    state = position("solo", slot=1, deck=["green", "green", "yellow", "red", "purple"])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "field"), ("green", "field"), ("yellow", "field"),
                             ("red", "discard")]
    assert s["mandalas"][0]["fields"][1] == counts(green=2, yellow=1)
    assert s["discard"] == ["red"] and s["deck"] == ["purple"]


def test_ruling_11_first_card_of_a_colour_already_in_his_field_is_not_a_sixth_colour() -> None:
    # Five colours present; green is already his, so it is not "the sixth": field, draw on.
    state = position("solo", slot=1, mountains=([("red", 1), ("orange", 1)], [("blue", 1)]),
                     fields=((counts(yellow=1), counts(green=1, blue=1)),),
                     deck=["green", "red", "purple"])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "field"), ("red", "discard")]
    assert s["mandalas"][0]["fields"][1] == counts(green=2, blue=1)
    assert s["resolution"] is None and s["slot"] == 2


def test_ruling_11_later_card_in_the_humans_field_is_discarded() -> None:
    state = position("solo", slot=2, mountains=([("red", 1)], [("blue", 1)]),
                     fields=((counts(), counts()), (counts(orange=2), counts())),
                     deck=["green", "orange", "purple"])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "field"), ("orange", "discard")]
    assert s["mandalas"][1]["fields"][1] == counts(green=1)
    assert GAME.to_act(s) == [0]  # the right move closes his turn


def test_ruling_11_later_card_that_makes_six_colours_completes_the_mandala() -> None:
    state = position("solo", slot=1, mountains=([("red", 1), ("orange", 1)], [("blue", 1)]),
                     fields=((counts(yellow=1), counts()),),
                     deck=["green", "blue", "purple", "red"])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "field"), ("blue", "field"), ("purple", "field")]
    complete = [e for e in events if e["type"] == "complete"]
    assert complete and complete[0]["by"] == 1 and complete[0]["mandala"] == 0
    # Yoga has 3 field cards against 1: he picks first, as an automatic step.
    assert s["phase"] == "resolve" and s["resolution"]["chooser"] == 1
    assert GAME.to_act(s) == [] and GAME.auto_delay(s) is not None


# -- ruling 12: the sixth colour as his first card ----------------------------------------------

@pytest.mark.parametrize(
    ("mountain", "human", "yoga", "expected"),
    [
        # Yoga's count > human's and an even mountain: mountain.
        (["red", "orange"], counts(yellow=1), counts(green=1, blue=1), "mountain"),
        # Yoga's count > human's and an odd mountain: field.
        (["red", "orange", "yellow"], counts(green=1), counts(blue=2), "field"),
        # Yoga's count <= human's and an odd mountain: mountain (equal counts).
        (["red", "orange", "yellow"], counts(green=1), counts(blue=1), "mountain"),
        # Yoga's count <= human's and an even mountain: field (fewer).
        (["red", "orange"], counts(yellow=3), counts(green=1, blue=1), "field"),
    ],
)
def test_ruling_12_sixth_colour_first_card_mountain_or_field(
    mountain: list[str], human: dict[str, int], yoga: dict[str, int], expected: str
) -> None:
    state = position("solo", slot=1, mountains=([(c, 1) for c in mountain], [("red", 1)]),
                     fields=((human, yoga),), deck=["purple", "purple", "red"])
    s, events = yoga_step(state)
    assert draws(events) == [("purple", expected)]  # one card: the move ends either way
    left = s["mandalas"][0]
    if expected == "mountain":
        assert left["mountain"][-1] == {"colour": "purple", "count": 1}
    else:
        assert left["fields"][1]["purple"] == 1
    complete = [e for e in events if e["type"] == "complete"]
    assert complete and complete[0]["by"] == 1  # Yoga completed it either way
    human_count = sum(human.values())
    yoga_count = sum(yoga.values()) + (expected == "field")
    expected_first = 1 if yoga_count > human_count else 0  # a tie goes to the non-completer
    assert s["resolution"]["chooser"] == expected_first


# -- ruling 13: his colour choice ---------------------------------------------------------------

def yoga_picks(mountain: list[str], his: list[str], yours: list[str], rule: str = "full") -> str:
    """Put Yoga first to choose in a left-mandala resolution and return the colour he takes."""
    state = position("solo", yoga=rule, mountains=([(c, 2) for c in mountain], [("red", 1)]),
                     fields=((counts(), counts(green=3)),), rivers=(yours, his))
    state["phase"] = "resolve"
    state["resolution"] = {"mandala": 0, "completer": 0, "chooser": 1, "final": False}
    _, events = yoga_step(state)
    take = [e for e in events if e["type"] == "take"]
    assert len(take) == 1 and take[0]["player"] == 1
    return str(take[0]["colour"])


def test_ruling_13_new_to_him_and_to_you_takes_the_leftmost_of_those() -> None:
    assert yoga_picks(["red", "orange", "yellow"], his=["red"], yours=["orange"]) == "yellow"
    assert yoga_picks(["blue", "red", "orange"], his=[], yours=[]) == "blue"


def test_ruling_13_new_to_him_but_all_in_yours_takes_your_highest() -> None:
    assert yoga_picks(["red", "orange", "yellow"], his=["red"],
                      yours=["orange", "yellow"]) == "yellow"


def test_ruling_13_all_in_his_river_prefers_colours_not_in_yours_highest_of_his() -> None:
    # orange (his space 1) and yellow (his space 2) are not in your river; red (his 3) is.
    assert yoga_picks(["red", "orange", "yellow"], his=["orange", "yellow", "red"],
                      yours=["red"]) == "yellow"


def test_ruling_13_all_in_both_rivers_takes_his_highest() -> None:
    assert yoga_picks(["red", "orange", "yellow"], his=["yellow", "red", "orange"],
                      yours=["red", "orange", "yellow"]) == "orange"


def test_ruling_13_simple_option_leftmost_preferring_new_to_his_river() -> None:
    assert yoga_picks(["red", "orange", "yellow"], his=["red"], yours=["orange"],
                      rule="simple") == "orange"
    assert yoga_picks(["red", "orange", "yellow"], his=["yellow", "red", "orange"],
                      yours=[], rule="simple") == "red"


def test_ruling_13_yoga_without_field_cards_still_chooses_and_discards() -> None:
    state = position("solo", mountains=([("red", 2), ("orange", 1)], [("red", 1)]),
                     fields=((counts(green=1), counts()),))
    state["phase"] = "resolve"
    state["resolution"] = {"mandala": 0, "completer": 0, "chooser": 1, "final": False}
    s, events = yoga_step(state)
    take = [e for e in events if e["type"] == "take"][0]
    assert take["colour"] == "red" and take["discarded"] == 2
    assert s["players"][1]["river"] == [] and GAME.to_act(s) == [0]
    # The human's pick is a move by seat 0 even though it is Yoga's turn slot.
    assert GAME.legal_moves(s, 0) == [{"type": "choose", "colour": "orange"}]


# -- rulings 14 and 15 --------------------------------------------------------------------------

def test_ruling_14_game_ending_in_his_left_move_skips_the_right_move() -> None:
    state = position("solo", slot=1, deck=["green"], discard=[])
    s, events = yoga_step(state)
    assert draws(events) == [("green", "field")]
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "cards_exhausted"
    assert GAME.auto_delay(s) is None and GAME.to_act(s) == []
    with pytest.raises(Rejected):
        GAME.apply_auto(s)


def test_ruling_14_river_filled_in_the_left_resolution_skips_the_right_move() -> None:
    state = position("solo", slot=1, mountains=([("red", 1), ("orange", 1)], [("blue", 1)]),
                     fields=((counts(yellow=2), counts(green=1, blue=1)),),
                     rivers=([], ["red", "yellow", "green", "blue", "purple"]),
                     deck=["purple", "red", "red", "red"])
    s, events = yoga_step(state)  # purple: sixth colour; 2 vs 2, even mountain -> his field
    assert draws(events) == [("purple", "field")]
    assert s["resolution"]["chooser"] == 1  # 3 field cards against 2
    s, events = yoga_step(s)  # orange is new to both rivers: his sixth space
    assert s["players"][1]["river"][-1] == "orange" and len(s["players"][1]["river"]) == 6
    assert GAME.outcome(s) is None  # the resolution is finished first
    s = GAME.apply(s, 0, {"type": "choose", "colour": "red"}).state
    assert s["players"][0]["river"] == ["red"]
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "river_full"
    assert s["deck"] == ["red", "red", "red"] and GAME.auto_delay(s) is None


def test_ruling_14_human_wins_only_with_a_strictly_higher_score() -> None:
    def ended(cups: tuple[dict[str, int], dict[str, int]]) -> dict[str, Any]:
        state = position("solo", cups=cups, rivers=(["red"], ["blue"]))
        state["phase"], state["end"] = "over", "river_full"
        return state

    win = GAME.outcome(ended((counts(red=4), counts(blue=3))))
    assert win is not None and win.winners == [0] and win.scores == [4, 3]
    # A tie is Yoga's, even though the human has fewer cup cards (the standard tie-break).
    tie = GAME.outcome(ended((counts(red=3), counts(blue=3))))
    assert tie is not None and tie.winners == [] and tie.scores == [3, 3]
    loss = GAME.outcome(ended((counts(red=1), counts(blue=3))))
    assert loss is not None and loss.winners == [] and loss.scores == [1, 3]


def test_ruling_15_yoga_draws_can_reshuffle_and_make_the_next_mandala_final() -> None:
    state = position("solo", slot=1, deck=["green"], discard=["red", "red"])
    s, events = yoga_step(state)
    assert [e["type"] for e in events if e["type"] in ("yoga_draw", "reshuffle")] == [
        "yoga_draw", "reshuffle", "yoga_draw"]
    assert draws(events) == [("green", "field"), ("red", "discard")]
    assert s["reshuffled"]
    # The next mandala completed is the last: Yoga completes the right one at once.
    s["mandalas"][1]["mountain"] = [{"colour": c, "count": 1}
                                    for c in ("red", "orange", "yellow", "green", "blue")]
    s["deck"] = ["purple"] + s["deck"]
    s, events = yoga_step(s)
    # Nobody has field cards there: 5 colours in the mountain is odd and 0 <= 0, so purple goes
    # to the mountain, which is discarded whole; being the final mandala, the game ends.
    assert draws(events) == [("purple", "mountain")]
    complete = [e for e in events if e["type"] == "complete"]
    assert complete and complete[0]["final"] is True
    outcome = GAME.outcome(s)
    assert outcome is not None and outcome.reason == "final_mandala"


def test_ruling_10_after_his_left_resolution_he_still_makes_the_right_move() -> None:
    state = position("solo", slot=1, mountains=([("red", 1), ("orange", 1)], [("blue", 1)]),
                     fields=((counts(yellow=1), counts(green=1, blue=1)),),
                     deck=["purple", "blue", "blue", "yellow", "green"])
    s, _ = yoga_step(state)  # sixth colour; 2 > 1 and an even mountain: to the mountain
    assert s["phase"] == "resolve" and s["resolution"]["chooser"] == 1
    s, _ = yoga_step(s)  # Yoga: red (leftmost new colour)
    s = GAME.apply(s, 0, {"type": "choose", "colour": "orange"}).state
    s, _ = yoga_step(s)  # Yoga: purple, the last stack
    assert s["resolution"] is None and s["slot"] == 2 and s["phase"] == "yoga"
    assert s["players"][1]["river"] == ["red", "purple"]
    assert s["mandalas"][0]["mountain"] == [{"colour": "blue", "count": 2}]  # refill
    s, events = yoga_step(s)  # the right move: yellow is new there, then green, then deck out
    assert {e["mandala"] for e in events if e["type"] == "yoga_draw"} == {1}
