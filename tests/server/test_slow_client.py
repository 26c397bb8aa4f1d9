"""A slow client never stalls a room: once its outbox is full, its room updates are skipped
and it gets a fresh snapshot when it drains; one that stays blocked is closed (4000)."""

from __future__ import annotations

import asyncio
from typing import Any

from playhall.config import Config
from playhall.net.session import Session
from playhall_client import Client

from .conftest import server_config


class GatedSocket:
    """A connection whose sends wait for a gate, like a peer that stopped reading."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.sent: list[bytes] = []
        self.closed: tuple[int, str] | None = None

    async def send(self, frame: bytes) -> None:
        await self.gate.wait()
        self.sent.append(frame)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


async def test_full_outbox_marks_the_room_stale_and_asks_for_a_snapshot_once_drained() -> None:
    drained: list[str] = []
    ws = GatedSocket()
    session = Session(ws, Config(outbox=3), lambda s, room: drained.append(room))  # type: ignore[arg-type]
    session.start()
    try:
        for i in range(10):
            session.push(b"update %d" % i, "room-a")
        session.reply(b"a reply")  # replies are never dropped
        session.push(b"lobby news")  # non-room pushes are dropped when full
        # Three queued; the fourth overflowed and marked the room stale (the rest were skipped
        # without queuing); the lobby push was dropped.
        assert session.is_stale("room-a") and session.frames_dropped == 2
        ws.gate.set()
        while not drained:
            await asyncio.sleep(0.01)  # the writer drains on its own task; bounded below
        assert drained == ["room-a"]
        assert b"a reply" in ws.sent and b"lobby news" not in ws.sent
        assert [f for f in ws.sent if f.startswith(b"update")] == [
            b"update 0",
            b"update 1",
            b"update 2",
        ]
    finally:
        await session.stop()


async def test_blocked_connection_is_reported_too_slow() -> None:
    ws = GatedSocket()
    config = Config(slow_timeout=5.0)
    session = Session(ws, config, lambda s, room: None)  # type: ignore[arg-type]
    session.start()
    try:
        session.push(b"frame", "room-a")
        while session.blocked_since is None:
            await asyncio.sleep(0.01)
        assert not session.too_slow(session.blocked_since + 1.0)
        assert session.too_slow(session.blocked_since + 6.0)
    finally:
        ws.gate.set()
        await session.stop()


async def test_a_stalled_spectator_catches_up_with_a_snapshot(redis_url: str) -> None:
    from playhall import app

    running = await app.start(server_config(redis_url, outbox=2))
    url = f"ws://127.0.0.1:{running.port}/"
    player = await Client.connect(url, name="player")
    watcher = await Client.connect(url, name="watcher")
    try:
        room = await player.create("mantis", 2)
        await player.add_bot(room.room, 1)
        watched = await watcher.join(room.room, watch=True)
        session = next(s for s in running.endpoint.sessions if s.player == watcher.player)
        gate = asyncio.Event()
        real_send = session.ws.send

        async def stalled_send(frame: Any) -> None:
            await gate.wait()
            await real_send(frame)

        session.ws.send = stalled_send  # type: ignore[method-assign]
        await player.ready(room.room)
        # The game goes on while the spectator cannot take frames: the room is not held up.
        while room.view["status"] != "finished" and room.version < 30:
            await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
            if room.my_turn:
                await player.move(room.room, room.view["moves"][0])
        assert session.is_stale(room.room)
        while not watcher.pushes.empty():  # what arrived before the stall
            watcher.pushes.get_nowait()
        gate.set()
        await watched.wait(lambda m: m.version == room.version, 30)
        kinds = []
        while not watcher.pushes.empty():
            kinds.append(watcher.pushes.get_nowait()["t"])
        assert "snapshot" in kinds  # it caught up by a snapshot, not by the skipped updates
        fresh = await Client.connect(url, name="fresh")
        try:
            assert (await fresh.join(room.room, watch=True)).view == watched.view
        finally:
            await fresh.close()
    finally:
        await player.close()
        await watcher.close()
        await running.drain()
