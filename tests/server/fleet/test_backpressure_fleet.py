"""Backpressure across processes behaves as on one: a spectator on another process than the
room's whose socket stops taking frames does not hold the room up, has that room's frames
dropped at its own process (outbox full, room stale), and once it drains gets a snapshot from
the room's owner, never the updates it missed one by one."""

from __future__ import annotations

import uuid
from dataclasses import replace

from playhall import app
from playhall.net.websocket import WebSocket
from playhall_client import Client

from ..conftest import server_config


async def test_a_stalled_spectator_on_another_process_catches_up_with_a_snapshot(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    config = server_config(redis_url, outbox=2, key_prefix=prefix, instance=f"{prefix}owner")
    owner = await app.start(config)
    edge = await app.start(replace(config, instance=f"{prefix}edge", metrics_listen=""))
    player = await Client.connect(f"ws://127.0.0.1:{owner.port}/", name="player")
    watcher = await Client.connect(f"ws://127.0.0.1:{edge.port}/", name="watcher")
    try:
        room = await player.create("mantis", 2)
        await player.add_bot(room.room, 1)
        watched = await watcher.join(room.room, watch=True)
        assert room.room in owner.rooms.rooms and room.room not in edge.rooms.rooms
        session = next(s for s in edge.endpoint.sessions if s.player == watcher.player)
        socket = session.ws
        assert isinstance(socket, WebSocket)
        socket.pause_writing()  # as the transport says when the peer stops reading
        await player.ready(room.room)
        while room.view["status"] != "finished" and room.version < 30:
            await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
            if room.my_turn:
                await player.move(room.room, room.view["moves"][0])
        assert session.is_stale(room.room)
        while not watcher.pushes.empty():
            watcher.pushes.get_nowait()
        socket.resume_writing()
        await watched.wait(lambda m: m.version == room.version, 30)
        kinds = []
        while not watcher.pushes.empty():
            kinds.append(watcher.pushes.get_nowait()["t"])
        assert "snapshot" in kinds
        assert not session.is_stale(room.room)
        fresh = await Client.connect(f"ws://127.0.0.1:{owner.port}/", name="fresh")
        try:
            assert (await fresh.join(room.room, watch=True)).view == watched.view
        finally:
            await fresh.close()
    finally:
        await player.close()
        await watcher.close()
        await edge.drain()
        await owner.drain()
