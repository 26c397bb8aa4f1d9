"""The table's rules as pure functions of the room record: no event loop, no Redis. Each change
is a new record one version on with its events; a refusal is a RoomError with its code, and
leaves the record it was given as it was."""

from __future__ import annotations

import pytest

from playhall.catalog import get_game
from playhall.games.contract import Game
from playhall.games.rng import int_key
from playhall.rooms import clocks, table
from playhall.rooms.record import FINISHED, PLAYING, WAITING, RoomRecord, Seat
from playhall.rooms.table import RoomError


def mantis() -> Game:
    game = get_game("mantis")
    assert game is not None
    return game


def room(seats: int = 2, *, private: bool = False, game: str = "mantis") -> RoomRecord:
    record = table.create(
        game, {}, seats, "alice", private=private, room_id="r1", secret=int_key(7), created=1.0
    )
    return record.evolve()  # stored: version 1


def refused(code: str) -> pytest.RaisesExc[RoomError]:
    return pytest.raises(RoomError, match=f"^{code}:")


def test_create_checks_the_game_its_options_and_the_seat_count() -> None:
    record = table.create(
        "mantis", {"target": 5}, 3, "alice", private=True, room_id="r", secret=int_key(1),
        created=2.0,
    )
    assert (record.game, record.options["target"], len(record.seats)) == ("mantis", 5, 3)
    assert record.private and record.code is None and record.creator == "alice"
    assert record.status == WAITING and record.version == 0
    for args, code in [
        (("nope", {}, 2), "no_such_game"),
        (("mantis", {"colour": 1}, 2), "bad_option"),
        (("mantis", {}, 7), "bad_seats"),
        (("mantis", {}, 1), "bad_seats"),
    ]:
        with refused(code):
            table.create(
                *args, "alice", private=False, room_id="r", secret=int_key(1), created=2.0
            )


def test_join_takes_the_first_free_seat_and_a_full_room_is_watched() -> None:
    record = room()
    new, events, seat = table.join(record, mantis(), "alice", "Alice")
    assert seat == 0 and new.version == record.version + 1
    assert new.seats[0] == Seat("alice", "Alice") and events == [
        {"type": "joined", "seat": 0, "name": "Alice"}
    ]
    assert record.seats[0] == Seat()  # the old record is as it was
    full, _, _ = table.join(new, mantis(), "bob", "Bob")
    same, events, seat = table.join(full, mantis(), "carol", "Carol")
    assert same is full and events == [] and seat is None


def test_join_again_keeps_the_seat_and_watching_takes_none() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice", wanted=1)
    same, _, seat = table.join(record, mantis(), "alice", "Alice")
    assert same is record and seat == 1
    with refused("seat_taken"):
        table.join(record, mantis(), "alice", "Alice", wanted=0)
    same, _, seat = table.join(record, mantis(), "bob", "Bob", watch=True)
    assert same is record and seat is None


def test_join_refusals() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    with refused("seat_taken"):
        table.join(record, mantis(), "bob", "Bob", wanted=0)
    with refused("no_such_seat"):
        table.join(record, mantis(), "bob", "Bob", wanted=2)
    private = room(private=True)
    private = private.evolve(code="C0DE")
    with refused("no_such_room"):  # without its code, a private room does not exist
        table.join(private, mantis(), "bob", "Bob")
    new, _, seat = table.join(private, mantis(), "bob", "Bob", code="C0DE")
    assert seat == 0 and new.seats[0].player == "bob"


def test_a_seat_asked_for_after_the_start_is_refused_and_newcomers_watch() -> None:
    record = playing()
    with refused("wrong_status"):
        table.join(record, mantis(), "carol", "Carol", wanted=0)
    same, _, seat = table.join(record, mantis(), "carol", "Carol")
    assert same is record and seat is None


def test_a_solo_room_starts_when_its_seat_is_taken() -> None:
    game = get_game("mandala")
    assert game is not None
    record = table.create(
        "mandala", {"mode": "solo"}, 1, "alice", private=False, room_id="s",
        secret=int_key(3), created=0.0,
    ).evolve()
    new, events, seat = table.join(record, game, "alice", "Alice")
    assert seat == 0 and new.status == PLAYING and new.state is not None
    assert events[-1] == {"type": "started"}


def test_ready_from_every_seat_starts_the_game() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    record, _, _ = table.join(record, mantis(), "bob", "Bob")
    record, events = table.ready(record, mantis(), "alice", True)
    assert record.status == WAITING and events == [{"type": "ready", "seat": 0, "ready": True}]
    record, events = table.ready(record, mantis(), "bob", True)
    assert record.status == PLAYING and record.state is not None
    assert events == [{"type": "ready", "seat": 1, "ready": True}, {"type": "started"}]
    with refused("wrong_status"):
        table.ready(record, mantis(), "bob", False)
    with refused("not_seated"):
        table.ready(record, mantis(), "carol", True)


def test_leaving_before_the_start_frees_the_seat_and_clears_every_ready() -> None:
    record, _, _ = table.join(room(3), mantis(), "alice", "Alice")
    record, _, _ = table.join(record, mantis(), "bob", "Bob")
    record, _ = table.add_bot(record, mantis(), "alice", 2)
    record, _ = table.ready(record, mantis(), "alice", True)
    new, events = table.leave(record, "bob", "Bob")
    assert events == [{"type": "left", "seat": 1, "name": "Bob"}]
    assert [s.taken for s in new.seats] == [True, False, True]
    assert [s.ready for s in new.seats] == [False, False, True]  # bots stay ready
    same, events = table.leave(new, "carol", "Carol")  # holds no seat
    assert same is new and events == []
    started = playing()
    assert table.leave(started, "alice", "Alice") == (started, [])  # the seat stays hers


def test_start_early_is_for_the_creator_of_a_full_table() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    with refused("not_ready"):
        table.start(record, mantis(), "alice")
    record, _, _ = table.join(record, mantis(), "bob", "Bob")
    with refused("not_creator"):
        table.start(record, mantis(), "bob")
    new, events = table.start(record, mantis(), "alice")
    assert new.status == PLAYING and events == [{"type": "started"}]
    with refused("wrong_status"):
        table.start(new, mantis(), "alice")


def test_bots_are_added_by_the_creator_or_seated_players() -> None:
    record = room(3)
    record, events = table.add_bot(record, mantis(), "alice", 1)  # the creator, not seated
    assert record.seats[1] == Seat(None, "Bot 1", bot=True, ready=True)
    assert events == [{"type": "bot_added", "seat": 1}]
    with refused("not_seated"):
        table.add_bot(record, mantis(), "stranger", 2)
    with refused("seat_taken"):
        table.add_bot(record, mantis(), "alice", 1)
    with refused("no_such_seat"):
        table.add_bot(record, mantis(), "alice", 3)
    record, _, _ = table.join(record, mantis(), "bob", "Bob", wanted=0)
    record, _ = table.ready(record, mantis(), "bob", True)
    record, events = table.add_bot(record, mantis(), "bob", 2)  # the last seat: all ready
    assert record.seats[2].name == "Bot 2" and record.status == PLAYING
    assert events[-1] == {"type": "started"}


def test_chat_lines_are_trimmed_and_empty_ones_refused() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    line = table.chat_line(record, "alice", "Alice", "  hello \n", 5.0)
    assert line == {
        "t": "chat", "room": "r1", "player": "alice", "name": "Alice", "seat": 0,
        "text": "hello", "at": 5.0,
    }
    assert table.chat_line(record, "eve", "Eve", "hi", 6.0)["seat"] is None
    with refused("bad_message"):
        table.chat_line(record, "alice", "Alice", " \t ", 5.0)


def playing() -> RoomRecord:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    record, _ = table.add_bot(record, mantis(), "alice", 1)
    record, _ = table.ready(record, mantis(), "alice", True)
    assert record.status == PLAYING
    return record


def alices_turn() -> RoomRecord:
    """A started room where the bot (seat 1) has moved until it is Alice's turn."""
    record = playing()
    assert record.state is not None
    while mantis().to_act(record.state) == [1]:
        record, events, move = table.bot_move(record, mantis(), 1)
        assert events and move in ({"type": "score"}, {"type": "steal", "target": 0})
        assert record.state is not None
    assert record.state is not None  # again: mypy drops the loop's narrowing on leaving it
    assert mantis().to_act(record.state) == [0]
    return record


def test_a_move_is_checked_applied_and_its_id_remembered() -> None:
    record = alices_turn()
    with refused("stale"):
        table.move(record, mantis(), 0, "alice", record.version - 1, "m1", {"type": "score"})
    with refused("bad_move"):
        table.move(record, mantis(), 0, "alice", record.version, "m1", {"type": "fly"})
    new, events = table.move(record, mantis(), 0, "alice", record.version, "m1", {"type": "score"})
    assert new.version == record.version + 1 and events
    assert new.seen_version("alice", "m1") == new.version
    assert record.seen_version("alice", "m1") is None


def test_a_bot_moves_only_on_its_turn() -> None:
    record = alices_turn()
    same, events, move = table.bot_move(record, mantis(), 1)
    assert same is record and events == [] and move is None
    with refused("not_seated"):
        table.seated(record, "bob")


def test_an_automatic_step_waits_for_its_deadline() -> None:
    game = get_game("card_battle")
    assert game is not None
    record = table.create(
        "card_battle", {"turn_delay_ms": 300}, 2, "a", private=False, room_id="c",
        secret=int_key(5),
        created=0.0,
    ).evolve()
    record, _ = table.add_bot(record, game, "a", 0)
    record, _ = table.add_bot(record, game, "a", 1)
    while record.deadline is None and record.status == PLAYING:
        assert record.state is not None
        record, _, _ = table.bot_move(record, game, game.to_act(record.state)[0])
    assert record.deadline is not None
    same, events = table.auto_step(record, game, record.deadline - 0.1)
    assert same is record and events == []
    new, _ = table.auto_step(record, game, record.deadline)
    assert new.version == record.version + 1


def test_rematch_is_a_new_room_at_the_same_table() -> None:
    record = playing()
    with refused("wrong_status"):
        table.rematch_needed(record, "alice")
    finished = record.evolve(status=FINISHED)
    with refused("not_seated"):
        table.rematch_needed(finished, "bob")
    assert table.rematch_needed(finished, "alice")
    rematch, new, events = table.rematch(
        finished, mantis(), "alice", room_id="r2", secret=int_key(9), created=3.0
    )
    assert (rematch.id, rematch.rematch_of, rematch.secret, rematch.status) == (
        "r2", "r1", int_key(9), WAITING,
    )
    assert [(s.player, s.bot, s.ready) for s in rematch.seats] == [
        ("alice", False, False), (None, True, True),
    ]
    assert new.rematch == "r2" and events == [{"type": "rematch", "room": "r2"}]
    assert not table.rematch_needed(new, "alice")  # asked again: the same room


def test_an_away_player_to_act_gets_a_stand_in_limit_seconds_after_going() -> None:
    record = alices_turn()  # Alice (seat 0) to act; a bot holds seat 1
    game = mantis()
    # Watched from seat 0: nobody is away. Not watched: due `limit` after she went, or after
    # the room was loaded (`since`) when nobody has viewed her seat since.
    assert table.away_due(record, game, 30.0, {0, None}, {}, since=100.0) == {}
    assert table.away_due(record, game, 30.0, {None}, {0: 200.0}, since=100.0) == {0: 230.0}
    assert table.away_due(record, game, 30.0, set(), {}, since=100.0) == {0: 130.0}
    # No limit, a stand-in already there, or a game not in play: nobody stands in.
    assert table.away_due(record, game, 0.0, set(), {}, since=100.0) == {}
    stood_in, _ = table.stand_in(record, game, 0, "away", 5.0)
    assert table.away_due(stood_in, game, 30.0, set(), {}, since=100.0) == {}
    assert table.away_due(room(), game, 30.0, set(), {}, since=100.0) == {}


def test_only_seats_the_game_waits_for_can_be_away() -> None:
    record = playing()
    game = mantis()
    assert record.state is not None
    while game.to_act(record.state) == [0]:  # let Alice's turn pass: the bot's seat to act
        the_move = game.legal_moves(record.state, 0)[0]
        record, _ = table.move(record, game, 0, "alice", record.version, None, the_move)
        assert record.state is not None
    assert record.state is not None  # again: mypy drops the loop's narrowing on leaving it
    # The bot's seat (1) plays itself; Alice is not to act: no stand-in is due for anyone.
    assert game.to_act(record.state) == [1]
    assert table.away_due(record, game, 30.0, set(), {}, since=100.0) == {}


def test_a_finished_game_keeps_no_stand_in_and_gives_no_seat_back() -> None:
    """The step that ends a game ends every stand-in (nobody moves for anybody any more), and
    a seat cannot be "taken back" from a finished game."""
    game = mantis()
    record, _ = table.stand_in(alices_turn(), mantis(), 0, "timeout", 5.0)
    assert record.seats[0].stand_in == "timeout"
    while record.status == PLAYING:  # the stand-in and the bot play it out
        assert record.state is not None
        record, _, _ = table.bot_move(record, game, game.to_act(record.state)[0])
    assert record.status == FINISHED
    assert [s.stand_in for s in record.seats] == [None, None]
    marked = record.evolve(seats=record.with_seat(0, Seat("alice", "Alice", stand_in="away")))
    same, events = table.take_back(marked, game, 0, 6.0)
    assert same is marked and events == []


def test_a_game_ended_under_a_stand_in_by_leaving_or_abandoning_clears_the_mark() -> None:
    game = mantis()
    record, _ = table.stand_in(alices_turn(), game, 0, "away", 5.0)
    resigned, _ = table.leave_game(record, game, 1, "resignation", 5.0)
    abandoned, _ = table.abandon(record, 5.0)
    for ended in (resigned, abandoned):
        assert ended.status == FINISHED
        assert [s.stand_in for s in ended.seats] == [None, None]


def test_a_refusal_after_a_take_back_carries_the_version_it_made() -> None:
    record, _ = table.stand_in(alices_turn(), mantis(), 0, "timeout", 5.0)
    with pytest.raises(RoomError) as refusal:
        table.move(record, mantis(), 0, "alice", record.version - 1, "m", {"type": "score"})
    back, events = table.take_back(record, mantis(), 0, 6.0)
    assert events == [{"type": "took_back", "seat": 0}]
    moved_on = table.refused_at(refusal.value, back)
    assert moved_on.code == "stale" and moved_on.extra == {"version": back.version}
    assert str(back.version) in moved_on.reason
    with pytest.raises(RoomError) as refusal:
        table.move(record, mantis(), 0, "alice", record.version, "m", {"type": "fly"})
    moved_on = table.refused_at(refusal.value, back)
    assert (moved_on.code, moved_on.reason) == (refusal.value.code, refusal.value.reason)
    assert moved_on.extra == {"version": back.version}


def clocked_turn_of_alice(clock: str = "turn") -> RoomRecord:
    """Alice's turn (seat 0) against a bot, in a room with a clock of a second."""
    game = mantis()
    options = {"clock": clock, "clock_ms": 1000, "increment_ms": 0, "on_timeout": "bot"}
    record = table.create(
        "mantis", options, 2, "alice", private=False, room_id="r", secret=int_key(7), created=1.0
    ).evolve()
    record, _, _ = table.join(record, game, "alice", "Alice")
    record, _ = table.add_bot(record, game, "alice", 1)
    record, _ = table.ready(record, game, "alice", True)
    assert record.state is not None
    while game.to_act(record.state) == [1]:
        record = table.bot_move(record, game, 1)[0]
        assert record.state is not None
    assert record.clocks is not None and record.clocks["deadlines"][0] is not None
    return record


@pytest.mark.parametrize("clock", ["turn", "fischer"])
def test_a_stand_in_for_a_clock_run_out_is_the_last_change_and_stops_that_clock(
    clock: str,
) -> None:
    """The stand-in change is the room's last change: the clocks are measured at it (``at``,
    ``remaining_ms``), and the seat whose clock ran out is no longer running."""
    game = mantis()
    record = clocked_turn_of_alice(clock)
    assert record.clocks is not None
    now = record.clocks["deadlines"][0] + 0.25
    new, _ = table.stand_in(record, game, 0, "timeout", now)
    assert new.clocks is not None
    shown = clocks.shown(clocks.Rules(new.options), new.clocks)
    assert shown is not None and shown["at"] == now and shown["running"] == []
    # Stopped: a turn clock shows the next turn's whole time; a bank that ran out is empty.
    assert shown["remaining_ms"][0] == (1000 if clock == "turn" else 0)
    # Its player takes the seat back on their turn: their clock runs again, measured then.
    back, _ = table.take_back(new, game, 0, now + 1)
    shown = clocks.shown(clocks.Rules(back.options), back.clocks)
    assert shown is not None and shown["at"] == now + 1 and shown["running"] == [0]


def test_an_away_stand_in_measures_the_clocks_and_leaves_them_running() -> None:
    game = mantis()
    record = clocked_turn_of_alice()
    assert record.clocks is not None
    deadline = record.clocks["deadlines"][0]
    new, _ = table.stand_in(record, game, 0, "away", deadline - 0.4)
    assert new.clocks == {
        "at": deadline - 0.4, "remaining_ms": [400, 1000], "deadlines": [deadline, None]
    }


def test_a_room_is_made_with_its_creator_seated_if_they_sit() -> None:
    """One record, one first write: a room whose creator sits is never stored without them."""
    record = table.create(
        "mantis", {}, 3, "alice", private=False, room_id="r", secret=int_key(1), created=2.0,
        sitting="Alice",
    )
    assert record.version == 0 and record.status == WAITING
    assert record.seats == (Seat("alice", "Alice"), Seat(), Seat())
    assert table.waits_with(record, "alice")
    solo = table.create(
        "mandala", {"mode": "solo"}, 1, "alice", private=False, room_id="s", secret=int_key(1),
        created=2.0, sitting="Alice",
    )
    assert solo.status == PLAYING and solo.seats == (Seat("alice", "Alice"),)
    assert not table.waits_with(solo, "alice")  # a one-seat room starts at once
    assert solo.clocks is None and solo.state is not None


def test_a_private_room_s_creator_needs_no_code() -> None:
    record = room(private=True).evolve(code="C0DE")
    same, _, seat = table.join(record, mantis(), "alice", "Alice", watch=True)
    assert same is record and seat is None
    with refused("no_such_room"):
        table.join(record, mantis(), "bob", "Bob", watch=True)


def test_an_operator_ends_a_game_or_a_wait_for_one_without_a_result() -> None:
    closed = {"winners": [], "scores": [], "reason": "closed_by_operator"}
    for before in (playing(), room()):
        new, events = table.close_by_operator(before, 9.0)
        assert (new.status, new.outcome, new.version) == (FINISHED, closed, before.version + 1)
        assert events == [{"type": "game_over", **closed}] and new.deadline is None
        with refused("game_over"):  # nothing left to end
            table.close_by_operator(new, 10.0)


def test_a_muted_players_chat_is_refused_until_unmuted() -> None:
    record, _, _ = table.join(room(), mantis(), "alice", "Alice")
    muted, events = table.mute(record, "alice", "Alice", True)
    assert muted.muted == ("alice",) and muted.version == record.version + 1
    assert events == [{"type": "chat_muted", "player": "alice", "name": "Alice", "seat": 0}]
    with refused("muted"):
        table.chat_line(muted, "alice", "Alice", "hi", 5.0)
    assert table.chat_line(muted, "eve", "Eve", "hi", 5.0)["text"] == "hi"  # others may
    assert table.mute(muted, "alice", "Alice", True) == (muted, [])  # muted once
    unmuted, events = table.mute(muted, "alice", "Alice", False)
    assert unmuted.muted == () and events[0]["type"] == "chat_unmuted"
    assert table.chat_line(unmuted, "alice", "Alice", "hi", 6.0)["text"] == "hi"


def test_a_rematch_keeps_the_tables_mutes() -> None:
    finished = table.mute(playing(), "alice", "Alice", True)[0].evolve(status=FINISHED)
    rematch, _, _ = table.rematch(
        finished, mantis(), "alice", room_id="r2", secret=int_key(9), created=3.0
    )
    assert rematch.muted == ("alice",)


@pytest.mark.parametrize(
    ("seconds", "sent"),
    [(0.0, 0.1), (0.04, 0.1), (0.1, 0.1), (0.11, 0.2), (1.2, 1.2), (59.91, 60.0)],
)
def test_a_refusals_retry_after_is_rounded_up_to_a_tenth_and_never_0(
    seconds: float, sent: float
) -> None:
    """A wait under 0.05 s once went out as ``retry_after`` 0 (rounded to the nearest tenth):
    a client told 0 tries again at once, into the same refusal."""
    assert table.retry_after(seconds) == sent
