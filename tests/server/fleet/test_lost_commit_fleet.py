"""A commit whose outcome is unknown in a room with viewers on other processes. On one Redis
the commit carries those viewers' frames (and a forwarded mover's answer) for its script to
publish once the change is stored; when the commit's connection drops, the owner settles the
change from Redis (tests/server/test_lost_reply.py, one process). Here, over two real server
processes, the owner's Redis behind a proxy that drops its connection at the room's commit:

- the commit never reached Redis: nothing of it is shown anywhere; the mover is refused
  ``store_failed`` (its retry with the same move id applied once); and the other process's
  viewers are sent a snapshot at once, without waiting for the room's next change;
- the commit ran but its reply was lost: the move stands and everyone sees it once.

Either way every connection sees each version once, with no gap, to the game's end."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pytest

from playhall.catalog import get_game
from playhall.config import Config
from playhall.rooms.audience import Audience
from playhall.store.connect import parse_target
from playhall_client import RoomMirror, ServerError

from ..faults import ResetProxy
from ..helpers import newer_than, stored_room
from ..process import ServerProcess, free_port
from ..test_play_mantis import play_until_over
from .conftest import (
    FORWARD_TIMEOUT,
    LEASE_MS,
    Fleet,
    Recorder,
    duel_of,
    recording,
    running,
)
from .test_forwarding import assert_each_version_once, room_frames, seen_to_the_end


@dataclass
class Pair:
    """Two processes on one Redis: process 0 reaches it through :attr:`proxy`."""

    fleet: Fleet
    proxy: ResetProxy

    def commit_of(self, room: str) -> tuple[bytes, bytes]:
        """What marks the room's commit on the wire: the script call and its log key."""
        return b"EVALSHA", f"{self.fleet.prefix}room:{{{room}}}:log".encode()


@pytest.fixture(scope="module")
async def pair(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Pair]:
    if parse_target(redis_url).cluster:
        pytest.skip("on a Cluster a commit publishes nothing (an edge's channel is in another "
                    "slot): tests/server/test_lost_reply.py covers its lost replies")
    proxy = await ResetProxy(redis_url).start()
    prefix = f"f{uuid.uuid4().hex[:8]}:"
    settings = ["--lease-ms", str(LEASE_MS), "--forward-timeout", str(FORWARD_TIMEOUT)]
    logs: Path = tmp_path_factory.mktemp("lost-commit")
    processes = [
        ServerProcess(free_port(), url, prefix, f"{prefix}s{i}", settings,
                      log_path=logs / f"server{i}.log")
        for i, url in enumerate((proxy.url, redis_url))
    ]
    try:
        async with running(Fleet(processes, prefix)) as fleet:
            yield Pair(fleet, proxy)
    finally:
        proxy.come_up()
        await proxy.close()


@dataclass
class Duel:
    room: str
    #: Seat 0 (on process 0, which holds the room), seat 1 and a watcher (both on process 1).
    recorders: list[Recorder]
    mirrors: list[RoomMirror]

    async def turn_of(self, seat: int) -> None:
        """Play on (each seat its first legal move) until it is ``seat``'s turn."""
        while not self.mirrors[seat].view.get("moves"):
            mover = 1 - seat
            version = self.mirrors[mover].version
            client = self.recorders[mover].client
            await client.move(self.room, self.mirrors[mover].view["moves"][0])
            await self.mirrors[seat].wait(newer_than(version))

    def snapshots(self, index: int) -> int:
        return sum(m["t"] == "snapshot" for m, _ in room_frames(self.recorders[index], self.room))

    async def played_to_the_end(self) -> None:
        """The rest of the game, then: every connection saw each version once, no gap."""
        a, b = (r.client for r in self.recorders[:2])
        await play_until_over([(a, self.mirrors[0]), (b, self.mirrors[1])])
        await seen_to_the_end(self.recorders, self.room)
        for r in self.recorders:
            assert_each_version_once(r, self.room)


@pytest.fixture
async def duel(pair: Pair) -> AsyncIterator[Duel]:
    fleet = pair.fleet
    recorders = [
        await recording(fleet.url(0), name="a"),
        await recording(fleet.url(1), name="b"),
        await recording(fleet.url(1), name="w"),
    ]
    try:
        mirror, other = await duel_of(recorders)
        duel = Duel(mirror.room, recorders, [mirror, other])
        await mirror.wait(lambda m: m.view["status"] == "playing")
        yield duel
    finally:
        pair.proxy.disarm()
        for r in recorders:
            await r.client.close()


@pytest.mark.parametrize("seat", [0, 1], ids=["local-mover", "forwarded-mover"])
async def test_a_commit_that_never_reached_redis_sends_the_other_process_a_snapshot(
    pair: Pair, duel: Duel, seat: int
) -> None:
    await duel.turn_of(seat)
    mirror = duel.mirrors[seat]
    version = mirror.version
    before = [duel.snapshots(i) for i in (1, 2)]
    pair.proxy.arm(*pair.commit_of(duel.room), forward=False)
    mover = duel.recorders[seat].client
    move = mirror.view["moves"][0]
    with pytest.raises(ServerError) as refused:
        await mover.move(duel.room, move, mid="cut", retry=False)
    assert pair.proxy.cut.is_set()
    assert refused.value.code == "store_failed"
    # The other process's viewers were due the frames the commit was to publish: they are
    # sent a snapshot of what is stored, with nothing else happening in the room.
    for i, counted in zip((1, 2), before, strict=True):
        watched = duel.recorders[i].client.rooms[duel.room]
        await watched.wait(lambda m, i=i, n=counted: duel.snapshots(i) > n)  # type: ignore[misc]
        assert watched.version == version
    # The retry, with the same move id, is applied once.
    again = await mover.move(duel.room, move, mid="cut", version=version)
    assert again["version"] == version + 1
    await duel.played_to_the_end()


async def test_a_forwarded_move_whose_commit_reply_was_lost_stands(
    pair: Pair, duel: Duel
) -> None:
    await duel.turn_of(1)
    version = duel.mirrors[1].version
    pair.proxy.arm(*pair.commit_of(duel.room))  # forwarded to Redis, its reply dropped
    mover = duel.recorders[1].client
    reply = await mover.move(duel.room, duel.mirrors[1].view["moves"][0], retry=False)
    assert pair.proxy.cut.is_set()
    assert reply["version"] == version + 1
    for r in duel.recorders:
        await r.client.rooms[duel.room].wait(lambda m: m.version >= version + 1)
    await duel.played_to_the_end()


async def test_a_change_that_was_not_stored_is_never_shown(
    pair: Pair, duel: Duel, redis_url: str
) -> None:
    """Nothing of a change that was not stored reaches any connection: its frames for the
    other process are never published, this process's are dropped, and the views made for
    it are forgotten: when another move is stored at that version instead, every connection,
    here and on the other process, is shown the stored one's views."""
    await duel.turn_of(0)
    version = duel.mirrors[0].version
    pair.proxy.arm(*pair.commit_of(duel.room), forward=False)
    moves = duel.mirrors[0].view["moves"]
    assert moves[0] != moves[-1]
    with pytest.raises(ServerError):
        await duel.recorders[0].client.move(duel.room, moves[0], mid="gone", retry=False)
    kept = await duel.recorders[0].client.move(duel.room, moves[-1], version=version)
    assert kept["version"] == version + 1
    _, record = await stored_room(redis_url, pair.fleet.prefix, duel.room)
    assert record.version == version + 1
    game = get_game(record.game)
    assert game is not None
    expected = Audience(record.id, game, Config())
    for r, key in zip(duel.recorders, (0, 1, None), strict=True):
        mirror = r.client.rooms[duel.room]
        await mirror.wait(lambda m: m.version >= version + 1)
        assert mirror.version == version + 1  # (nobody moves on before this is checked)
        shown = msgpack.unpackb(msgpack.packb(expected.view(record, key)), raw=False,
                                strict_map_key=False)
        assert mirror.view == shown, r.client.name
    await duel.played_to_the_end()
