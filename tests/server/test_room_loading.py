"""Loading a room from Redis, against a real Redis: the room a process loads (its last
checkpoint with the game steps since replayed) is exactly the room that was live, and stored
data that does not replay is refused with ``store_failed``, its lease let go, the room left as
it was in Redis. And a room in memory keeps no connection once it has answered it."""

from __future__ import annotations

import gc
import itertools
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

import pytest
import redis.asyncio as aioredis

from playhall.catalog import get_game
from playhall.counters import Counters
from playhall.games.rng import int_key
from playhall.lobby import Lobby
from playhall.net.replies import ReplyRouter
from playhall.rooms.actor import Room
from playhall.rooms.manager import RoomManager
from playhall.rooms.record import RoomRecord, Seat
from playhall.rooms.replay import game_fields
from playhall.rooms.table import RoomError
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store

from .conftest import server_config
from .redis_replies import stream_entries

#: Room ids (11 letters and digits, as the server makes them).
LOAD1 = "loadOneRoom"
KEPT = "keptNoConns"
DAMAGED = {"gap": "loadGapRoom", "bad_move": "loadBadMove"}


@dataclass(eq=False)
class Viewer:
    player: str
    name: str
    id: int = field(default_factory=itertools.count(1).__next__)
    address: str = "127.0.0.1"

    def push(self, frame: bytes, room: str | None = None) -> None:
        pass

    def is_stale(self, room: str) -> bool:
        return False

    def clear_stale(self, room: str) -> None:
        pass


@dataclass
class Setup:
    manager: RoomManager
    store: Store
    redis: aioredis.Redis


@pytest.fixture
async def setup(redis_url: str) -> AsyncIterator[Setup]:
    config = server_config(redis_url, checkpoint_every=8)
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url), config.key_prefix)
    manager = RoomManager(store, config, Lobby(store), ReplyRouter(Counters()))
    yield Setup(manager, store, client)
    await manager.close()
    store.close()
    await client.aclose()


async def started_room(manager: RoomManager, room_id: str) -> tuple[Room, list[Viewer]]:
    game = get_game("mantis")
    assert game is not None
    viewers = [Viewer("pa", "a"), Viewer("pb", "b")]
    record = RoomRecord(
        id=room_id,
        game="mantis",
        options=game.normalize_options({"target": 105}),  # no game ends here
        seats=tuple(Seat(v.player, v.name, False, True) for v in viewers),
        secret=int_key(11),
        creator="pa",
    )
    state = game.setup(2, record.options, 11)
    record = replace(record, **game_fields(game, state, record.options, 2, time.time()))
    room = await manager.create(record)
    for seat, viewer in enumerate(viewers):
        room.audience.attach(room.record, viewer, seat)
    return room, viewers


async def play(room: Room, viewers: list[Viewer], moves: int) -> None:
    game = room.game
    for n in range(moves):
        assert room.record.state is not None
        seat = game.to_act(room.record.state)[0]
        move = game.legal_moves(room.record.state, seat)[n % 2]
        args = {"room": room.record.id, "version": room.record.version, "mid": n, "move": move}
        await room.ask("move", viewers[seat], args)


async def unload(manager: RoomManager, room: Room) -> None:
    """Let the room go from memory (as an idle room is), leaving Redis as it is."""
    room.audience.viewers.clear()
    manager.evict(room)
    await manager._stopping.wait()


async def test_a_loaded_room_is_the_live_one_however_far_its_checkpoint_lags(
    setup: Setup,
) -> None:
    room, viewers = await started_room(setup.manager, LOAD1)
    played = 0
    for moves in (3, 8, 5, 1):  # lags of 3, 3 (past a checkpoint), 0 or 8, ...
        await play(room, viewers, moves)
        played += moves
        live = room.record
        stored = await setup.store.rooms.load(LOAD1)
        assert stored is not None and stored.version == live.version
        assert len(stored.since) == live.version - stored.checkpoint < 8
        await unload(setup.manager, room)
        room = await setup.manager.get(LOAD1)
        assert room.record.pack() == live.pack()
        assert room.record.seen == live.seen
        for seat, viewer in enumerate(viewers):
            room.audience.attach(room.record, viewer, seat)
    # A move id seen before the reload is still answered, not applied again.
    before = room.record.version
    seat = viewers.index(next(v for v in viewers if room.record.seen.get(v.player)))
    mid = next(iter(room.record.seen[viewers[seat].player]))
    answer = await room.ask(
        "move",
        viewers[seat],
        {"room": LOAD1, "version": before, "mid": mid, "move": {"type": "score"}},
    )
    assert answer["version"] == room.record.seen[viewers[seat].player][mid]
    assert room.record.version == before


@pytest.mark.parametrize("damage", ["gap", "bad_move"])
async def test_a_room_whose_log_does_not_replay_is_refused_and_let_go(
    setup: Setup, damage: str
) -> None:
    room, viewers = await started_room(setup.manager, DAMAGED[damage])
    await play(room, viewers, 4)
    await unload(setup.manager, room)
    key = setup.store.keys.log_key(room.record.id)
    if damage == "gap":
        (newest, _), *_ = stream_entries(await setup.redis.xrevrange(key, count=1))
        await setup.redis.xdel(key, newest)
    else:
        (newest, fields), *_ = stream_entries(await setup.redis.xrevrange(key, count=1))
        await setup.redis.xdel(key, newest)
        fields[b"m"] = b"\x81\xa4type\xa4fly"  # {"type": "fly"}: not a Mantis move
        # redis-py types the fields as a dict (invariant) of its own unions: no dict of bytes is.
        await setup.redis.xadd(key, fields)  # type: ignore[arg-type]
    before = await setup.redis.hgetall(setup.store.keys.room_key(room.record.id))
    with pytest.raises(RoomError) as refused:
        await setup.manager.get(room.record.id)
    assert refused.value.code == "store_failed"
    assert room.record.id not in setup.manager.rooms
    assert await setup.redis.get(setup.store.keys.lease_key(room.record.id)) is None  # let go
    assert await setup.redis.hgetall(setup.store.keys.room_key(room.record.id)) == before


async def test_a_room_keeps_no_connection_once_its_commands_are_answered(setup: Setup) -> None:
    """A command holds the connection that sent it: once it is answered the room lets both
    go, so a connection that closed is not kept alive by the last room it played in."""
    room, viewers = await started_room(setup.manager, KEPT)
    await play(room, viewers, 3)  # the last move is the first seat's
    for viewer in viewers:
        room.audience.detach(room.record, viewer)
    gone = [weakref.ref(viewer) for viewer in viewers]
    del viewers, viewer
    gc.collect()
    assert [ref() for ref in gone] == [None, None]
    assert setup.manager.rooms[KEPT] is room  # the room lives on, waiting for its next command
