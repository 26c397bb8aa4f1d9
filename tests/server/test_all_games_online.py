"""Every game on offer, played online end to end: created from the lobby, seats filled by
server bots, watched by a spectator whose mirror is kept by diffs; and restored after the server
is SIGKILLed mid-game, automatic steps (Card Battle turns, Master Yoga) included.

This is what "registered with the lobby" means for a game: nothing here names a game's rules.
"""

from __future__ import annotations

import random
import uuid

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall.catalog import get_game
from playhall.rooms.table import game_options, room_key
from playhall_client import Client, ServerError
from tests.games.conformance import quick_cases

from .conftest import free_port
from .helpers import at_least, newer_than, stored_room
from .process import ServerProcess
from .redis_replies import stream_entries

#: Each game at each of its quick tables (Game.quick_tables: unpaced automatic steps).
CASES = quick_cases()


async def bot_room(client: Client, game: str, seats: int, options: dict) -> str:
    """A room whose every seat is a server bot, watched by ``client``."""
    if seats == 1:  # a solo room: the watcher cannot leave the only seat to a bot before it starts
        mirror = await client.create(game, seats, options=options, sit=False)
        await client.add_bot(mirror.room, 0)
        return mirror.room
    mirror = await client.create(game, seats, options=options, sit=False)
    for seat in range(seats):
        await client.add_bot(mirror.room, seat)
    return mirror.room


@pytest.mark.parametrize("game, seats, options", CASES)
async def test_bots_play_every_game_to_the_end_while_a_spectator_watches(
    url: str, game: str, seats: int, options: dict
) -> None:
    watcher = await Client.connect(url, name="watcher")
    try:
        room = await bot_room(watcher, game, seats, options)
        mirror = watcher.rooms[room]
        await mirror.wait(lambda m: m.view["status"] == "finished", 120)
        kept = mirror.view
        mirror.version = -1
        await watcher.sync(room)
        await mirror.wait(lambda m: m.version >= 0)
        assert mirror.view == kept  # diffs alone reproduced the spectator's view exactly
        assert mirror.view["outcome"]["reason"]
        assert mirror.view["you"] is None and mirror.view["moves"] == []
    finally:
        await watcher.close()


def paced(options: dict) -> dict:
    """Slow automatic steps a little, so the kill lands in the middle of them."""
    slower = {"turn_delay_ms": 30, "yoga_delay_ms": 20}
    return {k: slower.get(k, v) for k, v in options.items()}


@pytest.mark.parametrize("game, seats, options", CASES)
async def test_every_game_resumes_after_sigkill(
    redis_url: str, game: str, seats: int, options: dict
) -> None:
    port = free_port()
    prefix = f"g{uuid.uuid4().hex[:8]}:"
    # A small bot delay keeps the game going long enough to be killed in the middle of it.
    extra = ["--bot-delay", "0.01"]
    first = ServerProcess(port, redis_url, prefix, "games-test", extra)
    await first.start()
    second = ServerProcess(first.port, redis_url, prefix, "games-test", extra)
    watcher = await Client.connect(first.url, name="watcher")
    try:
        room = await bot_room(watcher, game, seats, paced(options))
        mirror = watcher.rooms[room]
        await mirror.wait(lambda m: m.view["status"] == "playing" and m.version >= seats + 6, 60)
        killed_at = mirror.version
        first.kill()
        await second.start()
        # Nobody asks for the room: the new process restores it by itself (bots, timers).
        await mirror.wait(lambda m: m.view["status"] == "finished", 120)
        assert watcher.reconnects >= 1

        r = aioredis.Redis.from_url(redis_url)
        try:
            entries = [
                {k.decode(): v for k, v in f.items()}
                for _, f in stream_entries(await r.xrange(f"{prefix}room:{{{room}}}:log"))
            ]
        finally:
            await r.aclose()
        _, record = await stored_room(redis_url, prefix, room)
        assert record.version > killed_at  # the game went on after the restart
        engine = get_game(game)
        assert engine is not None
        state = engine.setup(seats, game_options(record.options), room_key(record))
        for e in entries:
            if e["k"] in (b"move", b"bot_move"):
                state = engine.apply(state, int(e["s"]), msgpack.unpackb(e["m"])).state
            elif e["k"] == b"auto":
                state = engine.apply_auto(state).state
        assert msgpack.packb(state) == msgpack.packb(record.state)
        assert [int(e["v"]) for e in entries] == list(range(1, record.version + 1))
    finally:
        await watcher.close()
        second.terminate()


@pytest.mark.parametrize("game, seats, options", CASES)
async def test_a_person_plays_every_game_against_bots_and_rematches(
    url: str, game: str, seats: int, options: dict
) -> None:
    """Seat 0 is a client choosing among the legal moves the server lists (it knows no rules);
    the other seats are server bots. After the game, a rematch seats everyone again."""
    rng = random.Random(11)
    person = await Client.connect(url, name="person")
    try:
        room = await person.create(game, seats, options=options)
        for seat in range(1, seats):
            await person.add_bot(room.room, seat)
        if seats > 1:
            await person.ready(room.room)
        await room.wait(lambda m: m.view["status"] != "waiting")
        while room.view["status"] != "finished":
            await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 60)
            if room.view["status"] == "finished":
                break
            moves = [
                m for m in room.view["moves"] if not m.get("template") and m["type"] != "resign"
            ]
            before = room.version
            try:
                await person.move(room.room, rng.choice(moves), version=before)
            except ServerError as exc:  # a bot moved at the same moment (simultaneous steps)
                assert exc.code == "stale", exc
                await room.wait(at_least(exc.reply["version"]), 60)
                continue
            await room.wait(newer_than(before), 60)
        assert room.view["outcome"]["reason"]
        again = await person.join(await person.rematch(room.room))
        assert again.seat == 0 and again.view["rematch_of"] == room.room
        assert [s["bot"] for s in again.view["seats"]] == [s["bot"] for s in room.view["seats"]]
        if seats > 1:
            await person.ready(again.room)
        await again.wait(lambda m: m.view["status"] == "playing")
    finally:
        await person.close()
