"""Restart survival: the server is only a cache of Redis.

A server is SIGKILLed while two clients are moving as fast as they can; a new server process
starts on the same Redis; the clients reconnect with their tokens, catch up, and finish the
game. Every acknowledged move is in the log exactly once, and the stored state is exactly what
replaying the log from the seed gives.

Each run stores the room's whole record at a different pace (``--checkpoint-every``): with every
move, every few moves, or never after the game starts, so the new process must rebuild the room
from the checkpoint and the moves logged after it.
"""

from __future__ import annotations

import asyncio
import uuid

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall.catalog import get_game
from playhall.rooms.table import game_options, room_key
from playhall_client import Client, ConnectionLost, RoomMirror, ServerError

from .conftest import free_port
from .helpers import at_least, newer_than, stored_room
from .process import ServerProcess
from .redis_replies import stream_entries


async def mover(
    client: Client, mirror: RoomMirror, acked: list[tuple[int, dict]], stop: asyncio.Event
) -> None:
    """Move whenever it is our turn; record every acknowledged (version, move)."""
    while not stop.is_set():
        await mirror.wait(
            lambda m: m.view.get("status") == "finished" or bool(m.view.get("moves")), 60
        )
        if mirror.view["status"] == "finished":
            return
        move = mirror.view["moves"][-1]
        version = mirror.version
        try:
            reply = await client.move(mirror.room, move)
        except ServerError as exc:
            assert exc.code == "stale", exc  # raced a catch-up; the mirror is about to move on
            await mirror.wait(newer_than(version), 60)
            continue
        acked.append((reply["version"], move))
        await mirror.wait(at_least(reply["version"]), 60)


@pytest.mark.parametrize("players, checkpoint_every", [(2, 1), (2, 1000), (4, 5)])
async def test_sigkill_mid_game_loses_no_acknowledged_move(
    redis_url: str, players: int, checkpoint_every: int
) -> None:
    port = free_port()
    prefix = f"r{uuid.uuid4().hex[:8]}:"
    extra = ["--checkpoint-every", str(checkpoint_every)]
    first = ServerProcess(port, redis_url, prefix, "restart-test", extra)
    await first.start()
    clients = [await Client.connect(first.url, name=f"p{i}") for i in range(players)]
    second = ServerProcess(first.port, redis_url, prefix, "restart-test", extra)
    try:
        mirror0 = await clients[0].create("mantis", players)
        room = mirror0.room
        mirrors = [mirror0] + [await c.join(room) for c in clients[1:]]
        for client in clients:
            await client.ready(room)
        await mirror0.wait(lambda m: m.view["status"] == "playing")
        started_at = mirror0.version
        acked: list[tuple[int, dict]] = []
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(mover(c, m, acked, stop))
            for c, m in zip(clients, mirrors, strict=True)
        ]
        # Kill in the middle of the stream of moves, not between them.
        await mirror0.wait(lambda m: m.version >= players + 12, 60)
        first.kill()
        killed_at = len(acked)
        at_kill, _ = await stored_room(redis_url, prefix, room)
        # What the new process must rebuild from: the last checkpoint, and every move since.
        assert at_kill.version - at_kill.checkpoint == len(at_kill.since)
        if checkpoint_every == 1:
            assert at_kill.checkpoint == at_kill.version
        elif checkpoint_every == 1000:
            assert at_kill.checkpoint == started_at < at_kill.version
        else:
            assert at_kill.version - checkpoint_every < at_kill.checkpoint <= at_kill.version
        await second.start()
        await asyncio.wait_for(asyncio.gather(*tasks), 120)
        for mirror in mirrors:
            await mirror.wait(lambda m: m.view["status"] == "finished", 60)
        assert all(c.reconnects >= 1 for c in clients)
        assert len(acked) > killed_at  # the game really went on after the restart

        r = aioredis.Redis.from_url(redis_url)
        try:
            entries = [
                {k.decode(): v for k, v in f.items()}
                for _, f in stream_entries(await r.xrange(f"{prefix}room:{{{room}}}:log"))
            ]
        finally:
            await r.aclose()
        stored, record = await stored_room(redis_url, prefix, room)
        assert stored.version == record.version == mirrors[0].version
        assert [int(e["v"]) for e in entries] == list(range(1, record.version + 1))
        moves_by_version = {
            int(e["v"]): msgpack.unpackb(e["m"]) for e in entries if e["k"] == b"move"
        }
        for v, move in acked:
            assert moves_by_version[v] == move  # acknowledged => stored, at that version
        assert len(moves_by_version) == len(acked)  # nothing applied twice, nothing extra
        # Replaying the log from the room's key (never re-seeded) gives exactly the stored state.
        game = get_game("mantis")
        assert game is not None
        state = game.setup(players, game_options(record.options), room_key(record))
        for e in entries:
            if e["k"] == b"move":
                state = game.apply(state, int(e["s"]), msgpack.unpackb(e["m"])).state
        assert msgpack.packb(state) == msgpack.packb(record.state)
        assert record.state is not None
        # Every client's mirror, kept through the restart, equals its seat's stored view.
        for seat, mirror in enumerate(mirrors):
            assert mirror.view["state"] == game.view(record.state, seat)
    finally:
        for client in clients:
            try:
                await client.close()
            except ConnectionLost:
                pass
        second.terminate()
