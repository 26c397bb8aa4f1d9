"""Replays and the spectator delay over a real server: the ``replay`` request gives each
seat's frames of a finished room from its record, each showing only what that seat could see,
its last view the one the seat saw live (refused before the end, and a private room's kept
from outsiders: see ``test_game_records``); a spectator of a room with ``spectator_delay`` N is
shown, at every version while the game is played, the game as it was N versions before (never
newer, its ``history`` too), and the end at once."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from playhall.catalog import get_game
from playhall.rooms.record_replay import frames, positions
from playhall_client import Client, RoomMirror, ServerError
from playhall_protocol import errors
from tests.server.helpers import play_to_the_end


def _hands_shown(frame: dict[str, Any]) -> list[int]:
    """The Mandala players whose hand a frame's view shows."""
    return [p["player"] for p in frame["view"]["state"]["players"] if "hand" in p]


async def test_a_finished_rooms_replay_shows_each_seat_what_it_saw(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    watcher = await Client.connect(url, name="watcher")
    try:
        room = await alice.create("mandala", 2)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        mine = await alice.replay(room.room, 0)
        bots = await watcher.replay(room.room, 1)  # anyone who may view the room, any seat
        spectators = await watcher.replay(room.room)
        record = await watcher.record(room.room)
        with pytest.raises(ServerError) as refused:
            await watcher.replay(room.room, 2)
        assert refused.value.code == errors.NO_SUCH_SEAT
    finally:
        await alice.close()
        await watcher.close()
    game = get_game("mandala")
    assert game is not None
    replayed = positions(record, game)
    assert mine == frames(record, game, replayed, 0)  # the server's replay is the record's
    assert len(mine) == len(bots) == len(spectators) == len(replayed)
    assert mine[-1]["view"]["state"] == room.view["state"]  # the last view is the one seen live
    assert mine[-1]["view"]["outcome"] == room.view["outcome"]
    assert all(_hands_shown(f) == [0] for f in mine)
    assert all(_hands_shown(f) == [1] for f in bots)
    assert all(_hands_shown(f) == [] for f in spectators)
    assert all(f["view"]["fair"]["secret"] is None for f in mine[:-1])


DELAY = 2


async def _observe(mirror: RoomMirror, seen: list[tuple[int, dict[str, Any]]]) -> None:
    """Note each (version, view) ``mirror`` holds, as it changes, until the game is over (a
    version may be passed over while the test runs; each one noted is whole)."""

    def note(m: RoomMirror) -> bool:
        if not seen or seen[-1][0] != m.version:
            seen.append((m.version, copy.deepcopy(m.view)))
        return m.view["status"] == "finished"

    await mirror.wait(note, 60)


async def test_a_spectator_sees_the_game_only_n_versions_behind(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    watcher = await Client.connect(url, name="watcher")
    try:
        room = await alice.create("mandala", 2, options={"spectator_delay": DELAY})
        await alice.add_bot(room.room, 1)
        watched = await watcher.join(room.room, watch=True)
        shown: list[tuple[int, dict[str, Any]]] = []
        observing = asyncio.create_task(_observe(watched, shown))
        await alice.ready(room.room)
        newest_in_history = []
        while room.view["status"] != "finished":
            await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
            if room.my_turn:
                log = await watcher.request("history", room=room.room)
                if log["log"]:
                    newest_in_history.append((log["version"], log["log"][-1]["version"]))
                await alice.move(room.room, room.view["moves"][0])
        await observing
        record = await watcher.record(room.room)
        frames = await watcher.replay(room.room)
    finally:
        await alice.close()
        await watcher.close()
    start = max(s["version"] for s in record["steps"] if s["kind"] == "ready")
    # The spectator's view of the game at each version: the replay's position then.
    at_version: dict[int, Any] = {}
    positions = iter(frames)
    current = next(positions)
    upcoming = next(positions, None)
    for version in range(start, record["steps"][-1]["version"] + 1):
        while upcoming is not None and upcoming["step"]["version"] <= version:
            current, upcoming = upcoming, next(positions, None)
        at_version[version] = current["view"]["state"]
    playing = [(v, view) for v, view in shown if v >= start and view["status"] != "finished"]
    assert len(playing) > 10
    for version, view in playing:
        expected = at_version.get(version - DELAY)  # None: the game had not started then
        assert view["state"] == expected, version
        assert version - DELAY < start or view["status"] == "playing"
    assert any(view["state"] is None for _, view in playing)  # waiting, as N versions before
    last_version, last_view = shown[-1]
    assert last_view["status"] == "finished"  # the end is shown at once: the delay is flushed
    assert last_view["state"] == frames[-1]["view"]["state"]
    assert last_version == record["steps"][-1]["version"]
    assert newest_in_history and all(
        newest <= current - DELAY for current, newest in newest_in_history
    )
