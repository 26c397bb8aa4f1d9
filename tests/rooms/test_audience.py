"""The audience of a room, with fake viewers and no event loop: who gets which frame when a
version is broadcast, presence, catching up from the frame history, and the away grace."""

from __future__ import annotations

import copy
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from playhall.catalog import get_game
from playhall.config import Config
from playhall.games.contract import Game
from playhall.games.rng import int_key
from playhall.rooms import table
from playhall.rooms.audience import Audience
from playhall.rooms.record import RoomRecord
from playhall_protocol import apply_diff, decode


@dataclass(eq=False)
class FakeViewer:
    player: str
    name: str
    frames: list[bytes] = field(default_factory=list)
    stale: bool = False
    address: str = ""
    id: int = field(default_factory=itertools.count(1).__next__)

    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames.append(frame)

    def is_stale(self, room: str) -> bool:
        return self.stale

    def clear_stale(self, room: str) -> None:
        self.stale = False

    def messages(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in map(decode, self.frames) if m["t"] == kind]


def mantis() -> Game:
    game = get_game("mantis")
    assert game is not None
    return game


def seated(seats: int = 2) -> RoomRecord:
    """A room of Mantis with every seat taken, its game not started yet."""
    record = table.create(
        "mantis", {}, seats, "alice", private=False, room_id="r", secret=int_key(3), created=0.0
    ).evolve()
    for player in ("alice", "bob", "carol", "dan")[:seats]:
        record, _, _ = table.join(record, mantis(), player, player.title())
    return record


def started(seats: int = 2) -> RoomRecord:
    record, _ = table.start(seated(seats), mantis(), "alice")
    return record


def step(record: RoomRecord) -> RoomRecord:
    """The next version: whoever is to act scores."""
    assert record.state is not None
    seat = mantis().to_act(record.state)[0]
    player = record.seats[seat].player
    assert player is not None
    mid = record.version
    new, _ = table.move(record, mantis(), seat, player, record.version, mid, {"type": "score"})
    return new


def audience(**settings: Any) -> Audience:
    return Audience("r", mantis(), Config(**settings))


def test_presence_is_pushed_when_it_changes() -> None:
    record = started()
    crowd = audience()
    alice, bob, watcher = FakeViewer("alice", "A"), FakeViewer("bob", "B"), FakeViewer("w", "W")
    crowd.attach(record, alice, 0)
    crowd.attach(record, watcher, None)  # a spectator: one more watching, no seat's presence
    crowd.attach(record, bob, 1)
    seen = [(m["presence"], m["watching"]) for m in alice.messages("presence")]
    assert seen == [([True, False], 0), ([True, False], 1), ([True, True], 1)]
    assert [m["presence"] for m in watcher.messages("presence")] == [[True, False], [True, True]]
    crowd.attach(record, FakeViewer("alice", "A"), 0)  # her second connection: nothing new
    assert len(alice.messages("presence")) == 3
    crowd.detach(record, bob)
    assert alice.messages("presence")[-1]["presence"] == [True, False]
    assert crowd.presence(record) == [True, False]


def test_the_presence_asked_before_a_change_is_stored_is_the_one_pushed_after() -> None:
    # The actor asks presence_moves before the commit and pushes once it is stored: the push
    # sends what the question worked out rather than working it out again.
    waiting = seated()
    playing = table.start(waiting, mantis(), "alice")[0]
    crowd = audience(away_takeover=60)
    alice = FakeViewer("alice", "A")
    crowd.attach(waiting, alice, 0)
    assert alice.messages("presence")[-1]["stand_in_at"] == [None, None]
    assert crowd.presence_moves(playing)
    asked_at = crowd.loaded
    crowd.loaded += 100  # (worked out again, bob's stand-in time would move with it)
    crowd.push_presence(playing)
    assert alice.messages("presence")[-1]["stand_in_at"] == [None, asked_at + 60]


def test_a_viewer_coming_between_the_question_and_the_push_is_in_the_push() -> None:
    waiting = seated()
    playing = table.start(waiting, mantis(), "alice")[0]
    crowd = audience(away_takeover=60)
    alice, watcher = FakeViewer("alice", "A"), FakeViewer("w", "W")
    crowd.attach(waiting, alice, 0)
    assert crowd.presence_moves(playing)
    crowd.attach(waiting, watcher, None)
    crowd.push_presence(playing)
    last = alice.messages("presence")[-1]
    assert (last["watching"], last["stand_in_at"]) == (1, [None, crowd.loaded + 60])


def test_a_broadcast_sends_each_key_one_update_that_reproduces_its_view() -> None:
    record = started()
    crowd = audience()
    alice, alice2, bob = FakeViewer("alice", "A"), FakeViewer("alice", "A"), FakeViewer("bob", "B")
    mirrors = {}
    for viewer, seat in ((alice, 0), (alice2, 0), (bob, 1)):
        crowd.attach(record, viewer, seat)
        crowd.send_snapshot(record, viewer)
        mirrors[viewer] = viewer.messages("snapshot")[-1]["view"]
    for _ in range(3):
        new = step(record)
        crowd.broadcast(new, [{"type": "flip"}])
        for viewer, seat in ((alice, 0), (alice2, 0), (bob, 1)):
            update = decode(viewer.frames[-1])
            assert update["t"] == "update" and (update["from"], update["to"]) == (
                record.version, new.version,
            )
            assert update["events"] == [{"type": "flip"}]
            mirrors[viewer] = apply_diff(copy.deepcopy(mirrors[viewer]), update["diff"])
            assert mirrors[viewer] == crowd.view(new, seat)
        assert alice.frames[-1] is alice2.frames[-1]  # one frame per key, encoded once
        record = new


def test_a_viewer_behind_gets_a_snapshot_and_a_stale_one_nothing() -> None:
    record = started()
    crowd = audience()
    alice, bob = FakeViewer("alice", "A"), FakeViewer("bob", "B")
    crowd.attach(record, alice, 0)
    crowd.attach(record, bob, 1)  # attached, never sent a view: it is behind
    bob.stale = True
    new = step(record)
    crowd.broadcast(new, [])
    assert decode(alice.frames[-1])["t"] == "snapshot"  # not at the previous version either
    assert not bob.messages("snapshot") and not bob.messages("update")
    newer = step(new)
    crowd.broadcast(newer, [])
    assert decode(alice.frames[-1])["t"] == "update"


def test_hidden_events_reach_only_their_seats() -> None:
    record = started()
    crowd = audience()
    alice, bob, watcher = FakeViewer("alice", "A"), FakeViewer("bob", "B"), FakeViewer("w", "W")
    for viewer, seat in ((alice, 0), (bob, 1), (watcher, None)):
        crowd.attach(record, viewer, seat)
        crowd.send_snapshot(record, viewer)
    secret = {"type": "drew", "card": 7, "visible_to": [1]}
    crowd.broadcast(step(record), [{"type": "flip"}, secret])
    assert decode(alice.frames[-1])["events"] == [{"type": "flip"}]
    assert decode(watcher.frames[-1])["events"] == [{"type": "flip"}]
    assert decode(bob.frames[-1])["events"] == [{"type": "flip"}, {"type": "drew", "card": 7}]


def test_catching_up_replays_the_missed_frames_or_sends_a_snapshot() -> None:
    record = started()
    crowd = audience(history=4)
    alice, bob = FakeViewer("alice", "A"), FakeViewer("bob", "B")
    crowd.attach(record, alice, 0)
    crowd.send_snapshot(record, alice)
    crowd.attach(record, bob, 1)
    crowd.send_snapshot(record, bob)
    have = record.version
    sent = []
    for _ in range(3):
        record = step(record)
        crowd.broadcast(record, [])
        sent.append(bob.frames[-1])
    bob.frames.clear()
    assert crowd.catch_up(record, bob, have)
    assert bob.frames[:3] == sent and bob.messages("presence")
    for _ in range(5):  # more than the history holds
        record = step(record)
        crowd.broadcast(record, [])
    bob.frames.clear()
    assert not crowd.catch_up(record, bob, have)
    assert [m["t"] for m in map(decode, bob.frames)] == ["snapshot"]
    assert not crowd.catch_up(record, bob, "not a version")


def test_a_seat_whose_player_left_is_kept_up_to_date_for_the_away_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    for away, caught_up in ((59.0, True), (61.0, False)):
        record = started()
        crowd = audience(away_grace=60.0)
        alice, bob = FakeViewer("alice", "A"), FakeViewer("bob", "B")
        for viewer, seat in ((alice, 0), (bob, 1)):
            crowd.attach(record, viewer, seat)
            crowd.send_snapshot(record, viewer)
        have = record.version
        crowd.detach(record, bob)
        now[0] += away
        record = step(record)
        crowd.broadcast(record, [])
        crowd.attach(record, bob, 1)
        assert crowd.catch_up(record, bob, have) is caught_up


def test_the_views_of_a_version_share_what_they_have_in_common() -> None:
    """Shared by identity (the diff skips shared parts at once), and only within the room: the
    memo is the audience's own, nothing is kept between rooms."""
    record = started()
    crowd, other = audience(), audience()
    alice, bob, watcher = (crowd.view(record, key) for key in (0, 1, None))
    assert alice["state"] is bob["state"] is watcher["state"]  # Mantis: public_view
    assert alice["seats"] is bob["seats"]
    assert other.view(record, 0) == alice and other.view(record, 0)["state"] is not alice["state"]
    new = step(record)
    assert crowd.view(new, 0)["seats"] is alice["seats"]  # the seats did not change
    assert crowd.view(new, 0)["state"] is not alice["state"]


def test_keys_whose_views_change_alike_share_one_encoded_frame() -> None:
    """Four seats and two spectators: the seat that moved and the seat now to act have
    updates of their own; the two other seats and the spectators' key get one frame, the very
    same bytes, which still brings each of them to its own view."""
    record = started(4)
    crowd = audience()
    viewers = {key: FakeViewer(f"p{key}", "P") for key in (0, 1, 2, 3, None)}
    extra = FakeViewer("w2", "W")
    mirrors = {}
    for key, viewer in (*viewers.items(), (None, extra)):
        crowd.attach(record, viewer, key)
        crowd.send_snapshot(record, viewer)
        mirrors[viewer] = viewer.messages("snapshot")[-1]["view"]
    for _ in range(4):
        assert record.state is not None
        mover = mantis().to_act(record.state)[0]
        new = step(record)
        assert new.state is not None
        nxt = mantis().to_act(new.state)[0]
        crowd.broadcast(new, [{"type": "flip"}])
        idle = [viewers[key] for key in (0, 1, 2, 3, None) if key not in (mover, nxt)]
        assert len(idle) == 3 and idle[0].frames[-1] is idle[1].frames[-1] is idle[2].frames[-1]
        assert viewers[mover].frames[-1] != viewers[nxt].frames[-1] != idle[0].frames[-1]
        for key, viewer in (*viewers.items(), (None, extra)):
            update = decode(viewer.frames[-1])
            assert update["t"] == "update" and update["events"] == [{"type": "flip"}]
            mirrors[viewer] = apply_diff(copy.deepcopy(mirrors[viewer]), update["diff"])
            assert mirrors[viewer] == crowd.view(new, key)
        record = new


def test_keys_that_see_different_events_do_not_share_a_frame() -> None:
    record = started(4)
    crowd = audience()
    viewers = {key: FakeViewer(f"p{key}", "P") for key in (0, 1, 2, 3, None)}
    for key, viewer in viewers.items():
        crowd.attach(record, viewer, key)
        crowd.send_snapshot(record, viewer)
    assert record.state is not None
    mover = mantis().to_act(record.state)[0]
    new = step(record)
    assert new.state is not None
    idle = [key for key in (0, 1, 2, 3) if key not in (mover, mantis().to_act(new.state)[0])]
    crowd.broadcast(new, [{"type": "deal", "visible_to": [idle[0]]}])
    assert decode(viewers[idle[0]].frames[-1])["events"] == [{"type": "deal"}]
    assert decode(viewers[idle[1]].frames[-1])["events"] == []
    assert viewers[idle[1]].frames[-1] == viewers[None].frames[-1]
