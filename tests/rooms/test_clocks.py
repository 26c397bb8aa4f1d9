"""The clock model (server/playhall/rooms/clocks.py): pure functions of (clocks, to_act, now).

Time runs only for the seats in ``to_act``; a running clock is an absolute deadline; ``turn``
gives each turn the whole limit, ``fischer`` keeps a bank that grows by the increment with each
of the seat's moves.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playhall.catalog import all_games
from playhall.games.contract import Rejected
from playhall.games.rng import int_key
from playhall.rooms import clocks, room_options
from playhall.rooms.table import RoomError, create, game_options
from playhall.rooms.views import game_entry

T0 = 1_000_000.0


def rules(**options: Any) -> clocks.Rules:
    return clocks.Rules(room_options.normalize(options))


def test_no_clock_has_no_clocks() -> None:
    assert clocks.start(rules(), 2, [0], T0) is None
    assert clocks.advance(rules(), None, [1], 0, T0) is None
    assert clocks.next_deadline(None) is None and clocks.expired(None, T0) == []
    assert clocks.shown(rules(), None) is None


def test_only_the_seats_to_act_run_and_their_deadlines_are_absolute() -> None:
    turn = rules(clock="turn", clock_ms=1500)
    started = clocks.start(turn, 3, [1], T0)
    assert started is not None
    assert started["deadlines"] == [None, T0 + 1.5, None]
    assert clocks.next_deadline(started) == T0 + 1.5
    assert clocks.expired(started, T0 + 1.499) == []
    assert clocks.expired(started, T0 + 1.5) == [1]


def test_a_turn_clock_gives_every_turn_the_whole_limit() -> None:
    turn = rules(clock="turn", clock_ms=1000)
    c = clocks.start(turn, 2, [0], T0)
    c = clocks.advance(turn, c, [1], 0, T0 + 0.7)  # seat 0 moved after 0.7 s
    assert c is not None
    assert c["remaining_ms"] == [1000, 1000]
    assert c["deadlines"] == [None, T0 + 1.7]
    # An extra turn (the same seat to act after its own move) starts afresh too.
    c = clocks.advance(turn, c, [1], 1, T0 + 1.2)
    assert c is not None and c["deadlines"] == [None, T0 + 2.2]


def test_a_fischer_bank_grows_by_its_increment_with_each_move() -> None:
    fischer = rules(clock="fischer", clock_ms=10_000, increment_ms=2_000)
    c = clocks.start(fischer, 2, [0], T0)
    c = clocks.advance(fischer, c, [1], 0, T0 + 3)  # 10 - 3 + 2
    assert c is not None and c["remaining_ms"] == [9_000, 10_000]
    assert c["deadlines"] == [None, T0 + 13]
    c = clocks.advance(fischer, c, [0], 1, T0 + 4)  # seat 1: 10 - 1 + 2
    assert c is not None and c["remaining_ms"] == [9_000, 11_000]
    assert c["deadlines"] == [T0 + 13, None]
    # Stopped without a move (an automatic step took over): no increment.
    c = clocks.advance(fischer, c, [], None, T0 + 5)
    assert c is not None and c["remaining_ms"] == [8_000, 11_000]
    assert c["deadlines"] == [None, None]


def test_simultaneous_steps_run_several_clocks_and_a_move_stops_only_the_movers() -> None:
    fischer = rules(clock="fischer", clock_ms=5_000, increment_ms=1_000)
    c = clocks.start(fischer, 2, [0, 1], T0)
    assert c is not None and c["deadlines"] == [T0 + 5, T0 + 5]
    c = clocks.advance(fischer, c, [1], 0, T0 + 2)
    assert c is not None
    assert c["deadlines"] == [None, T0 + 5]  # seat 1 runs on to the same deadline
    assert c["remaining_ms"] == [4_000, 3_000]  # as measured at ``at``
    assert c["at"] == T0 + 2


def test_automatic_steps_and_the_end_run_no_clock() -> None:
    turn = rules(clock="turn", clock_ms=1000)
    c = clocks.start(turn, 2, [], T0)
    assert c is not None and clocks.next_deadline(c) is None


def test_the_view_shows_remaining_time_and_when_it_was_measured() -> None:
    fischer = rules(clock="fischer", clock_ms=5_000, increment_ms=1_000, on_timeout="forfeit")
    c = clocks.advance(fischer, clocks.start(fischer, 2, [0], T0), [0, 1], None, T0 + 1)
    assert clocks.shown(fischer, c) == {
        "kind": "fischer",
        "clock_ms": 5_000,
        "increment_ms": 1_000,
        "on_timeout": "forfeit",
        "at": T0 + 1,
        "remaining_ms": [4_000, 5_000],
        "running": [0, 1],
    }


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["turn", "fischer"]),
    steps=st.lists(
        st.tuples(
            st.floats(0, 5),
            st.sets(st.integers(0, 3), max_size=4),
            st.one_of(st.none(), st.integers(0, 3)),
        ),
        max_size=30,
    ),
)
def test_random_changes_keep_the_clocks_consistent(
    kind: str, steps: list[tuple[float, set[int], int | None]]
) -> None:
    """Whatever happens: exactly the seats to act run; a running seat's deadline is ``at`` plus
    its remaining time; a seat that runs on (to act again, did not move) keeps its deadline; a
    bank is never negative; ``turn`` clocks never hold more than the limit."""
    r = rules(clock=kind, clock_ms=3_000, increment_ms=500)
    now = T0
    c = clocks.start(r, 4, [0], now)
    for wait, to_act, mover in steps:
        now += wait
        before = c
        c = clocks.advance(r, c, sorted(to_act), mover, now)
        assert c is not None and before is not None
        running = [s for s, d in enumerate(c["deadlines"]) if d is not None]
        assert running == sorted(to_act)
        for seat in running:
            # (a clock that has run out shows 0 left until the room acts on it)
            deadline = max(c["deadlines"][seat], now)
            assert deadline == pytest.approx(now + c["remaining_ms"][seat] / 1000, abs=1e-3)
            if before["deadlines"][seat] is not None and seat != mover:
                assert c["deadlines"][seat] == before["deadlines"][seat]
        assert min(c["remaining_ms"]) >= 0
        if kind == "turn":
            assert max(c["remaining_ms"]) <= 3_000


# -- the options ------------------------------------------------------------------------------


def test_every_game_lists_the_clock_options_with_their_defaults() -> None:
    for game in all_games().values():
        listed = {o["name"]: o for o in game_entry(game)["options"]}
        assert listed["clock"]["default"] == "none"
        assert listed["clock"]["choices"] == ["none", "turn", "fischer"]
        assert listed["on_timeout"]["choices"] == ["bot", "forfeit"]
        assert listed["clock_ms"]["default"] == 120_000
        assert listed["increment_ms"]["default"] == 5_000


def test_a_room_takes_clock_options_beside_the_game_s_own() -> None:
    record = create(
        "mandragora", {"clock": "fischer", "clock_ms": 500, "pattern": "A"}, 2, "p",
        private=False, room_id="r", secret=int_key(1), created=T0,
    )
    assert record.options["clock"] == "fischer" and record.options["clock_ms"] == 500
    assert record.options["on_timeout"] == "bot"
    assert game_options(record.options) == {"pattern": "A", "first": "random"}


@pytest.mark.parametrize(
    "options",
    [{"clock": "hourglass"}, {"clock_ms": 5}, {"clock_ms": "1000"}, {"on_timeout": "shrug"},
     {"increment_ms": -1}],
)
def test_a_bad_clock_option_is_refused(options: dict[str, Any]) -> None:
    with pytest.raises(Rejected):
        room_options.normalize(options)
    with pytest.raises(RoomError) as refused:
        create("mantis", options, 2, "p", private=False, room_id="r", secret=int_key(1), created=T0)
    assert refused.value.code == "bad_option"


def test_a_turn_that_goes_on_keeps_its_clock_and_resumes_with_what_was_left() -> None:
    """``goes_on``: the seats whose turn a change did not end (``Game.turn_goes_on``)."""
    turn = rules(clock="turn", clock_ms=1000)
    c = clocks.start(turn, 2, [0], T0)
    c = clocks.advance(turn, c, [0], 0, T0 + 0.2, goes_on=[0])  # an action: runs on
    assert c is not None and c["deadlines"] == [T0 + 1, None]
    c = clocks.advance(turn, c, [1], 0, T0 + 0.5, goes_on=[0])  # seat 1 answers a choice
    assert c is not None and c["deadlines"] == [None, T0 + 1.5]
    assert c["remaining_ms"] == [500, 1000]  # seat 0's turn keeps what it had left
    c = clocks.advance(turn, c, [0], 1, T0 + 0.9, goes_on=[0])  # back to seat 0's turn
    assert c is not None and c["deadlines"] == [T0 + 1.4, None]
    fischer = rules(clock="fischer", clock_ms=1000, increment_ms=300)
    c = clocks.start(fischer, 2, [0], T0)
    c = clocks.advance(fischer, c, [0], 0, T0 + 0.2, goes_on=[0])  # no increment mid-turn
    assert c is not None and c["deadlines"] == [T0 + 1, None]
    c = clocks.advance(fischer, c, [1], 0, T0 + 0.4)  # end of the turn: the increment
    assert c is not None and c["remaining_ms"] == [900, 1000]
