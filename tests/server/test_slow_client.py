"""A slow client never stalls a room: once its outbox is full, its room updates are skipped
and it gets a fresh snapshot when it drains; one that stays blocked is closed (4000)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import msgpack
from websockets.asyncio.client import connect

from playhall.config import Config
from playhall.net.session import Session
from playhall.net.websocket import WebSocket
from playhall_client import Client

from .conftest import server_config
from .helpers import play_to_the_end


class FakeSocket:
    """A connection whose transport can be made to report a full write buffer, like a peer that
    stopped reading."""

    remote_address = "test"

    def __init__(self) -> None:
        self.is_paused = False
        self.sent: list[bytes] = []
        self.closed: tuple[int, str] | None = None

    def send(self, message: bytes) -> None:
        assert not self.is_paused or self.closed, "wrote past a full buffer"
        self.sent.append(message)

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def abort(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


def test_frames_go_straight_out_while_the_socket_takes_them() -> None:
    ws = FakeSocket()
    session = Session(ws, Config(outbox=3), lambda s, room: None)
    for i in range(10):
        session.push(b"update %d" % i, "room-a")
    assert len(ws.sent) == 10 and not session.is_stale("room-a")


def test_full_outbox_marks_the_room_stale_and_asks_for_a_snapshot_once_drained() -> None:
    drained: list[str] = []
    ws = FakeSocket()
    session = Session(ws, Config(outbox=3), lambda s, room: drained.append(room))
    session.push(b"before", "room-a")
    ws.is_paused = True
    session.paused()
    for i in range(10):
        session.push(b"update %d" % i, "room-a")
    session.reply(b"a reply")  # replies are never dropped
    session.push(b"lobby news")  # non-room pushes are dropped when full
    # Three queued; the fourth overflowed and marked the room stale (the rest were skipped
    # without queuing); the lobby push was dropped.
    assert session.is_stale("room-a") and session.frames_dropped == 2
    assert ws.sent == [b"before"] and not drained
    ws.is_paused = False
    session.resumed()
    assert drained == ["room-a"]
    assert ws.sent == [b"before", b"update 0", b"update 1", b"update 2", b"a reply"]


def test_a_buffer_that_fills_again_while_draining_keeps_the_rest_queued() -> None:
    ws = FakeSocket()
    drained: list[str] = []
    session = Session(ws, Config(outbox=8), lambda s, room: drained.append(room))
    ws.is_paused = True
    session.paused()
    for i in range(4):
        session.push(b"update %d" % i, "room-a")
    real_send = ws.send

    def send_then_fill(message: bytes) -> None:
        real_send(message)
        ws.is_paused = len(ws.sent) == 2  # the transport is full again after two frames

    ws.send = send_then_fill  # type: ignore[method-assign]
    ws.is_paused = False
    session.resumed()
    assert ws.sent == [b"update 0", b"update 1"] and not drained
    session.push(b"update 4", "room-a")  # still behind the queued ones
    ws.is_paused = False
    session.resumed()
    assert ws.sent == [b"update %d" % i for i in range(5)]


def test_blocked_connection_is_reported_too_slow() -> None:
    ws = FakeSocket()
    session = Session(ws, Config(slow_timeout=5.0), lambda s, room: None)
    assert session.blocked_since is None
    ws.is_paused = True
    session.paused()
    assert session.blocked_since is not None
    assert not session.too_slow(session.blocked_since + 1.0)
    assert session.too_slow(session.blocked_since + 6.0)
    ws.is_paused = False
    session.resumed()
    assert session.blocked_since is None and not session.too_slow(1e12)


async def test_a_stalled_spectator_catches_up_with_a_snapshot(redis_url: str) -> None:
    from playhall import app

    running = await app.start(server_config(redis_url, outbox=2))
    url = f"ws://127.0.0.1:{running.port}/"
    try:
        await stalled_spectator_catches_up(url, url, running)
    finally:
        await running.drain()


async def stalled_spectator_catches_up(player_url: str, watcher_url: str, edge: Any) -> None:
    """A player at ``player_url`` plays against a bot while a spectator at ``watcher_url``
    (served by the running server ``edge``) cannot take frames: the room is not held up, the
    spectator's room is marked stale, and once its socket drains it catches up by a snapshot,
    not by the skipped updates, to the view a fresh spectator gets."""
    player = await Client.connect(player_url, name="player")
    watcher = await Client.connect(watcher_url, name="watcher")
    try:
        room = await player.create("mantis", 2)
        await player.add_bot(room.room, 1)
        watched = await watcher.join(room.room, watch=True)
        session = next(s for s in edge.endpoint.sessions if s.player == watcher.player)
        # What the transport does when the peer stops reading and its buffer fills up.
        socket = session.ws
        assert isinstance(socket, WebSocket)
        socket.pause_writing()
        await player.ready(room.room)
        # The game goes on while the spectator cannot take frames: the room is not held up.
        while room.view["status"] != "finished" and room.version < 30:
            await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
            if room.my_turn:
                await player.move(room.room, room.view["moves"][0])
        assert session.is_stale(room.room)
        while not watcher.pushes.empty():  # what arrived before the stall
            watcher.pushes.get_nowait()
        socket.resume_writing()
        await watched.wait(lambda m: m.version == room.version, 30)
        kinds = []
        while not watcher.pushes.empty():
            kinds.append(watcher.pushes.get_nowait()["t"])
        assert "snapshot" in kinds  # it caught up by a snapshot, not by the skipped updates
        assert not session.is_stale(room.room)
        fresh = await Client.connect(player_url, name="fresh")
        try:
            assert (await fresh.join(room.room, watch=True)).view == watched.view
        finally:
            await fresh.close()
    finally:
        await player.close()
        await watcher.close()


async def _stalled_watcher(url: str, room: str) -> Any:
    """A spectator of ``room`` over a raw websocket that then stops reading its socket."""
    # A small receive window, set before connecting (afterwards the kernel may keep a larger
    # one): then a few kilobytes in flight fill it.
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    host, port = url.removeprefix("ws://").rstrip("/").split(":")
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    ws = await connect(url, compression=None, max_size=None, sock=sock)
    await ws.send(msgpack.packb({"t": "hello", "id": 1, "protocol": 1, "name": "stalled"}))
    hello = msgpack.unpackb(await ws.recv())
    await ws.send(msgpack.packb({"t": "join", "id": 2, "room": room, "watch": True}))
    while msgpack.unpackb(await ws.recv()).get("re") != 2:
        pass
    ws.transport.pause_reading()
    return ws, hello["player"]


def _shrink_send_buffer(session: Session) -> None:
    """Small buffers on the server's side of one connection, so a stalled peer fills them
    within a few moves rather than megabytes."""
    ws = session.ws
    assert isinstance(ws, WebSocket) and ws.transport is not None
    ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    ws.transport.set_write_buffer_limits(high=2048)


async def _start_with_player(redis_url: str, slow_timeout: float) -> tuple[Any, Client]:
    """A server with a tiny outbox and no rate limit to speak of, and one player on it."""
    from playhall import app

    running = await app.start(
        server_config(redis_url, outbox=2, slow_timeout=slow_timeout, rate=10_000.0, burst=10_000)
    )
    return running, await Client.connect(f"ws://127.0.0.1:{running.port}/", name="player")


async def _stall_a_watcher(running: Any, player: Client, room: str) -> tuple[Any, Session]:
    """A spectator of ``room`` that stops reading, and its server-side session, whose buffers
    are then filled (by ``player``'s chat) until they stay full."""
    ws, watcher = await _stalled_watcher(f"ws://127.0.0.1:{running.port}/", room)
    session = next(s for s in running.endpoint.sessions if s.player == watcher)
    _shrink_send_buffer(session)
    await _fill(player, room)
    return ws, session


async def _fill(player: Client, room: str) -> None:
    """Chat far more than the kernel's buffers of a stalled connection can hold (~200 KB),
    so the server's side of it stays full: nobody reads at the other end."""
    for i in range(400):
        await player.chat(room, f"{i:03d} " + "x" * 490)


async def test_a_spectator_that_stops_reading_is_skipped_then_resnapshotted(
    redis_url: str,
) -> None:
    running, player = await _start_with_player(redis_url, slow_timeout=60.0)
    try:
        room = await player.create("mantis", 2)
        await player.add_bot(room.room, 1)
        ws, session = await _stall_a_watcher(running, player, room.room)
        assert session.blocked_since is not None  # the transport said so (pause_writing)
        await player.ready(room.room)
        # The game goes on while the spectator takes nothing: the room is not held up.
        await play_to_the_end(player, room)
        assert session.blocked_since is not None and session.is_stale(room.room)
        ws.transport.resume_reading()
        # Reading again, it gets what was queued, then a snapshot of the finished game.
        while True:
            frame = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
            if frame["t"] == "snapshot" and frame["version"] == room.version:
                break
        assert frame["view"]["status"] == "finished"
        assert not session.is_stale(room.room) and session.blocked_since is None
        await ws.close()
    finally:
        await player.close()
        await running.drain()


async def test_a_peer_that_stays_stalled_is_closed_as_too_slow(redis_url: str) -> None:
    running, player = await _start_with_player(redis_url, slow_timeout=0.5)
    try:
        room = await player.create("mantis", 2)
        ws, session = await _stall_a_watcher(running, player, room.room)
        assert session.blocked_since is not None
        # The sweeper (every second) closes it once blocked for longer than slow_timeout; the
        # closing handshake cannot get through, so the socket is dropped.
        await asyncio.wait_for(session.ws.wait_closed(), 10)
        assert session not in running.endpoint.sessions
        ws.transport.abort()
    finally:
        await player.close()
        await running.drain()
