"""The spectator delay in a room's audience, with fake viewers and no event loop: while the game
is played a spectator's mirror holds the room of N versions before, with that version's events,
a seated player's the live room; the delay is flushed when the game ends; a room loaded anew
withholds the game from spectators until N versions have passed; the option's bounds."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.config import Config
from playhall.games.contract import Rejected
from playhall.games.rng import int_key
from playhall.rooms import room_options, table, views
from playhall.rooms.audience import Audience
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall_protocol import apply_diff, decode
from tests.rooms.test_audience import FakeViewer, mantis

DELAY = 3


def _started(delay: int) -> RoomRecord:
    record = table.create(
        "mantis", {"spectator_delay": delay}, 2, "alice", private=False,
        room_id="r", secret=int_key(5), created=0.0,
    ).evolve()
    record, _, _ = table.join(record, mantis(), "alice", "Alice")
    record, _, _ = table.join(record, mantis(), "bob", "Bob")
    return table.start(record, mantis(), "alice")[0]


def _scored(record: RoomRecord) -> tuple[RoomRecord, list[dict[str, Any]]]:
    """The next version and its events: whoever is to act scores."""
    assert record.state is not None
    seat = mantis().to_act(record.state)[0]
    player = record.seats[seat].player
    assert player is not None
    return table.move(
        record, mantis(), seat, player, record.version, record.version, {"type": "score"}
    )


def _mirror(viewer: FakeViewer) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The view a client of ``viewer``'s frames holds, and the events of each frame."""
    view: dict[str, Any] = {}
    events = []
    for message in map(decode, viewer.frames):
        if message["t"] == "snapshot":
            view = message["view"]
        elif message["t"] == "update":
            view = apply_diff(view, message["diff"])
        else:
            continue
        events.append(message["events"])
    return view, events


def _spectators_view(record: RoomRecord) -> dict[str, Any]:
    return views.room_view(record, mantis(), None, views.ViewMemo())


def test_spectators_see_the_game_n_versions_behind_and_players_live() -> None:
    record = _started(DELAY)
    crowd = Audience("r", mantis(), Config())
    alice, watcher = FakeViewer("alice", "A"), FakeViewer("w", "W")
    crowd.attach(record, alice, 0)
    crowd.attach(record, watcher, None)
    crowd.broadcast(record, [])
    past: dict[int, tuple[RoomRecord, list[dict[str, Any]]]] = {record.version: (record, [])}
    while record.status == PLAYING:
        record, events = _scored(record)
        past[record.version] = (record, events)
        crowd.broadcast(record, events)
        seen, seen_events = _mirror(watcher)
        assert _mirror(alice)[0] == views.room_view(record, mantis(), 0, views.ViewMemo())
        if record.status == PLAYING:
            then = record.version - DELAY
            if then in past:
                assert seen == _spectators_view(past[then][0])
                assert seen_events[-1] == past[then][1]
            else:  # the room was not held that far back: the game is withheld
                assert seen["status"] == PLAYING and seen["state"] is None
                assert seen["to_act"] == [] and seen_events[-1] == []
            assert seen["state"] != _spectators_view(record)["state"]
    assert record.status == FINISHED and record.version - DELAY - 1 > min(past)
    seen, seen_events = _mirror(watcher)
    assert seen == _spectators_view(record)  # flushed: the end is public
    unseen = [e for v in range(record.version - DELAY, record.version + 1) for e in past[v][1]]
    assert seen_events[-1] == unseen and unseen


def test_a_catch_up_and_a_snapshot_show_spectators_the_delayed_room() -> None:
    record = _started(DELAY)
    crowd = Audience("r", mantis(), Config())
    watcher = FakeViewer("w", "W")
    crowd.attach(record, watcher, None)
    crowd.broadcast(record, [])
    history = [record]
    for _ in range(DELAY + 2):
        record, events = _scored(record)
        history.append(record)
        crowd.broadcast(record, events)
    assert record.status == PLAYING
    late = FakeViewer("late", "L")
    crowd.attach(record, late, None)
    crowd.send_snapshot(record, late)
    shown = history[-1 - DELAY]
    assert decode(late.frames[-1])["view"] == _spectators_view(shown)
    again = FakeViewer("again", "G")
    crowd.attach(record, again, None)
    again.frames.clear()
    assert crowd.catch_up(record, again, record.version - 2)  # the frames it missed
    view = _spectators_view(history[-3 - DELAY])  # what it held at version - 2
    for message in [decode(f) for f in again.frames if decode(f)["t"] == "update"]:
        view = apply_diff(view, message["diff"])
    assert view == _spectators_view(shown)


def test_a_room_loaded_anew_withholds_the_game_until_n_versions_have_passed() -> None:
    record = _started(2)
    for _ in range(4):  # a room that has been played a while, then loaded by a new process
        record = _scored(record)[0]
    crowd = Audience("r", mantis(), Config())
    watcher, bob = FakeViewer("w", "W"), FakeViewer("bob", "B")
    crowd.attach(record, watcher, None)
    crowd.attach(record, bob, 1)
    crowd.send_snapshot(record, watcher)
    crowd.send_snapshot(record, bob)
    withheld = decode(watcher.frames[-1])["view"]
    assert withheld["state"] is None and withheld["clock"] is None
    assert decode(bob.frames[-1])["view"]["state"] is not None  # a seat sees it live
    loaded = record
    for _ in range(2):
        record, events = _scored(record)
        crowd.broadcast(record, events)
    assert _mirror(watcher)[0] == _spectators_view(loaded)


def test_no_delay_is_the_default_and_the_delay_is_bounded() -> None:
    assert room_options.normalize({})["spectator_delay"] == 0
    assert room_options.normalize({"spectator_delay": 7})["spectator_delay"] == 7
    for wrong in (-1, room_options.MAX_SPECTATOR_DELAY + 1, "3", True):
        with pytest.raises(Rejected):
            room_options.normalize({"spectator_delay": wrong})
    record = table.create(
        "mantis", {"spectator_delay": 2}, 2, "alice", private=False, room_id="r",
        secret=int_key(5), created=0.0,
    )
    assert record.options["spectator_delay"] == 2
    assert table.game_options(record.options) == {"target": 0}
