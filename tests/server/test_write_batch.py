"""One connection's failed write must not hold anyone else's frames: the write batch (every
connection's frames of one loop pass, written by one callback) goes on past a connection whose
transport is closed or whose write raises. A unit test with transports that record what they
are given, and one over real sockets with clients that reset their connection while a room
broadcasts to spectators after them."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect

from playhall import app
from playhall.net.websocket import WebSocket, WriteBatch
from playhall_client import Client
from playhall_protocol import encode

from .conftest import server_config
from .helpers import QuietHandler


class RecordingTransport:
    """Keeps what it is given; ``closed``: as after the peer reset the connection; ``broken``:
    its write raises (as uvloop's does on a transport whose handle is closed)."""

    def __init__(self, *, closed: bool = False, broken: bool = False) -> None:
        self.written: list[bytes] = []
        self.closed = closed
        self.broken = broken
        self.aborted = False

    def write(self, data: bytes) -> None:
        if self.broken or self.closed:
            raise RuntimeError("unable to perform operation: the handler is closed")
        self.written.append(data)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default


def opened(batch: WriteBatch, transport: RecordingTransport) -> WebSocket:
    """A server connection through its opening handshake, writing to ``transport``."""
    ws = WebSocket(on_request=lambda r: None, on_open=QuietHandler, max_size=1024, batch=batch)
    ws.connection_made(transport)  # type: ignore[arg-type]
    key = base64.b64encode(os.urandom(16)).decode()
    ws.data_received(
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert transport.written and transport.written[0].startswith(b"HTTP/1.1 101")
    transport.written.clear()
    return ws


async def next_pass() -> None:
    """Let the batch's callback (scheduled with call_soon) run."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


@pytest.mark.parametrize("failing", ["closed", "broken"])
async def test_a_failing_connection_mid_batch_holds_nobody_elses_frames(failing: str) -> None:
    batch = WriteBatch()
    before, after = RecordingTransport(), RecordingTransport()
    bad = RecordingTransport()
    sockets = [opened(batch, t) for t in (before, bad, after)]
    bad.closed = failing == "closed"
    bad.broken = failing == "broken"
    for ws in sockets:
        ws.send(b"first")
    await next_pass()
    assert b"first" in b"".join(before.written)
    assert b"first" in b"".join(after.written)
    # And the connections after it are not left marked "write scheduled": the next pass writes.
    for ws in sockets:
        ws.send(b"second")
    await next_pass()
    assert b"second" in b"".join(after.written)
    if failing == "broken":
        assert bad.aborted  # a connection whose writes raise is dropped


async def test_the_batch_asks_for_the_loop_once_not_once_a_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On Python 3.11 ``asyncio.get_running_loop()`` is a getpid() system call; a batch runs in
    every pass that sends anything, so it keeps the loop it found first. Every pass still
    writes what it was given."""
    asked = []
    real = asyncio.get_running_loop

    def counted() -> asyncio.AbstractEventLoop:
        asked.append(1)
        return real()

    batch = WriteBatch()
    transport = RecordingTransport()
    ws = opened(batch, transport)
    monkeypatch.setattr(asyncio, "get_running_loop", counted)
    for n in range(3):
        ws.send(b"pass %d" % n)
        await next_pass()
        assert transport.written[-1].endswith(b"pass %d" % n)
    assert len(asked) <= 1


# -- over real sockets ---------------------------------------------------------------------------


class Listener:
    """A raw connection that watches a room and notes when each chat line arrives."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.player = ""
        self.arrived: dict[str, float] = {}
        self.replies = 0
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    @classmethod
    async def watching(cls, url: str, room: str) -> Listener:
        ws = await connect(url, compression=None)
        await ws.send(msgpack.packb({"t": "hello", "id": 1, "protocol": [1]}))
        await ws.send(msgpack.packb({"t": "join", "id": 2, "room": room, "watch": True}))
        listener = cls(ws)
        await listener.wait(lambda: listener.replies == 2)
        return listener

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            async for frame in self.ws:
                message = msgpack.unpackb(frame)
                if message.get("t") == "chat":
                    self.arrived[message["text"]] = loop.time()
                elif message.get("t") == "ok":
                    self.replies += 1
                    self.player = message.get("player", self.player)
                self.changed.set()
        except Exception:  # the reset one ends here
            pass

    async def wait(self, condition: Any, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def reset(self) -> None:
        """Drop the connection with a TCP reset (SO_LINGER 0), as a vanished peer does."""
        sock = self.ws.transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.ws.transport.abort()

    async def close(self) -> None:
        self.task.cancel()
        await self.ws.close()


@pytest.fixture
async def running(redis_url: str) -> AsyncIterator[app.Running]:
    running = await app.start(server_config(redis_url))
    yield running
    await running.drain()


async def test_spectators_after_a_reset_connection_get_every_push_at_once(
    running: app.Running,
) -> None:
    """Viewers watch a room in this order: a first listener, a connection that resets, ten
    spectators. The reset reaches the server while a broadcast to all of them waits in the
    write batch (the server runs in this test's loop: the broadcast and the reset are made in
    one step of it, so the server reads the reset before the batch is written). Every chat
    line after it still reaches every spectator as soon as it reaches the first listener."""
    url = f"ws://127.0.0.1:{running.port}/"
    talker = await Client.connect(url, name="talker")
    room = (await talker.create("mantis", 2, sit=False)).room
    first = await Listener.watching(url, room)
    doomed = await Listener.watching(url, room)
    spectators = [await Listener.watching(url, room) for _ in range(10)]
    by_player = {s.player: s for s in running.endpoint.sessions}
    line = encode({"t": "chat", "room": room, "player": talker.player, "text": "mid-broadcast"})
    transport = by_player[doomed.player].ws.transport  # type: ignore[attr-defined]
    doomed.reset()
    async with asyncio.timeout(5):
        # Checked once per pass of the loop: the pass after the server read the reset, before
        # its connection hears of it (that callback was queued after this test's next step).
        while not transport.is_closing():
            await asyncio.sleep(0)
    for listener in [first, doomed, *spectators]:  # the broadcast, as the room pushes it
        by_player[listener.player].push(line, room)
    for n in range(30):
        await talker.chat(room, f"line {n}")
    await first.wait(lambda: len(first.arrived) == 31)
    lines = dict(first.arrived)
    # Every line reaches every spectator (one held back would wait for the 20 s keepalive).
    waits = [s.wait(lambda s=s: lines.keys() <= s.arrived.keys(), 2) for s in spectators]
    await asyncio.gather(*waits, return_exceptions=True)
    late = {
        text: max(s.arrived.get(text, float("inf")) for s in spectators) - at
        for text, at in lines.items()
    }
    # Written in the same batch as the first listener's: apart only by the time this process
    # takes to read them (generous for a loaded machine).
    held = sorted(text for text, delay in late.items() if delay > 0.1)
    assert not held, f"{len(held)} of {len(late)} lines reached a spectator late: {held[:5]}"
    for listener in [first, *spectators]:
        await listener.close()
    await talker.close()


async def test_the_writes_that_go_first_run_before_any_connection_is_written() -> None:
    batch = WriteBatch()
    transport = RecordingTransport()
    ws = opened(batch, transport)
    seen: list[int] = []
    batch.first.append(lambda: seen.append(len(transport.written)))
    ws.send(b"frame")
    assert seen == [] and transport.written == []  # (written at the end of the pass)
    await next_pass()
    assert seen == [0]  # nothing written yet when it ran
    assert len(transport.written) == 1


async def test_a_write_first_that_raises_does_not_hold_the_connections_frames() -> None:
    batch = WriteBatch()
    transport = RecordingTransport()
    ws = opened(batch, transport)

    def broken() -> None:
        raise RuntimeError("a bug")

    batch.first.append(broken)
    ws.send(b"frame")
    await next_pass()
    assert len(transport.written) == 1


async def test_a_server_sends_its_batches_to_other_processes_before_its_clients_frames(
    running: app.Running,
) -> None:
    assert running.endpoint.writes.first == [running.fleet.owner.mail.flush]
