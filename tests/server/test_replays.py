"""Replays over a real server: the ``replay`` request is refused before the end, and after it
gives each seat's frames from the record, each showing only what that seat could see, its
last view the one the seat saw live; a private room's replay is kept from outsiders."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.catalog import get_game
from playhall.rooms.record_replay import frames, positions
from playhall_client import Client, ServerError
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
        with pytest.raises(ServerError) as refused:
            await alice.replay(room.room, 0)
        assert refused.value.code == errors.WRONG_STATUS
        await alice.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        with pytest.raises(ServerError) as refused:
            await watcher.replay(room.room)
        assert refused.value.code == errors.WRONG_STATUS  # it would show hidden facts
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


async def test_a_private_rooms_replay_is_kept_from_outsiders(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    outsider = await Client.connect(url, name="outsider")
    try:
        room = await alice.create("mantis", 2, options={"target": 3}, private=True)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        assert (await alice.replay(room.room))[-1]["view"]["status"] == "finished"
        with pytest.raises(ServerError) as refused:
            await outsider.replay(room.room)
        assert refused.value.code == errors.NO_SUCH_ROOM
    finally:
        await alice.close()
        await outsider.close()
