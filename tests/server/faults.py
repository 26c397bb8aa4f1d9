"""A fault-injecting TCP proxy to put between the server and a real Redis: it forwards bytes
both ways, and when armed, lets the next command that carries a marker through to Redis,
waits for Redis' reply (so the command certainly ran), drops that reply and resets the
server's connection: a reply lost after the write."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from urllib.parse import urlparse


class ResetProxy:
    def __init__(self, upstream_url: str) -> None:
        target = urlparse(upstream_url)
        self._host = target.hostname or "127.0.0.1"
        self._port = target.port or 6379
        self._db = target.path or "/0"
        self._server: asyncio.Server | None = None
        self._markers: tuple[bytes, ...] | None = None
        #: Set once an armed cut has happened.
        self.cut = asyncio.Event()
        #: Whether the cut takes Redis "down" too (every connection reset, new ones refused)
        #: until :meth:`come_up`.
        self._down_after_cut = False
        self._answer: bytes | None = None
        self.down = False
        self._clients: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> ResetProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}{self._db}"

    def arm(self, *markers: bytes, then_down: bool = False, answer: bytes | None = None) -> None:
        """Cut after the next chunk from the server that holds every one of ``markers``; with
        ``then_down``, go down at that moment. With ``answer``, that chunk is not forwarded
        at all: the proxy answers it with these bytes itself (e.g. an error reply) instead."""
        self.cut.clear()
        self._markers = markers
        self._down_after_cut = then_down
        self._answer = answer

    def go_down(self) -> None:
        """Reset every connection and refuse new ones, as an unreachable Redis."""
        self.down = True
        for writer in list(self._clients):
            reset(writer)

    def come_up(self) -> None:
        self.down = False

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        if self.down:
            reset(writer)
            self._tasks.discard(task)
            return
        self._clients.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(self._host, self._port)
        except OSError:
            writer.close()
            self._clients.discard(writer)
            self._tasks.discard(task)
            return
        cut_pending = asyncio.Event()  # a marked command went up: its reply is not to come back

        async def upward() -> None:
            while data := await reader.read(1 << 16):
                markers = self._markers
                if markers is not None and all(m in data for m in markers):
                    self._markers = None
                    if self._answer is not None:
                        writer.write(self._answer)
                        self.cut.set()
                        continue
                    cut_pending.set()
                up_writer.write(data)
                await up_writer.drain()

        async def downward() -> None:
            while data := await up_reader.read(1 << 16):
                if cut_pending.is_set():  # Redis has run it: drop the reply, reset the client
                    reset(writer)
                    up_writer.close()
                    if self._down_after_cut:
                        self.go_down()
                    self.cut.set()
                    return
                writer.write(data)
                await writer.drain()

        pumps = [asyncio.ensure_future(upward()), asyncio.ensure_future(downward())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for w in (writer, up_writer):
                with contextlib.suppress(Exception):
                    w.close()
            self._clients.discard(writer)
            self._tasks.discard(task)


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a dropped connection looks to its peer."""
    sock = writer.get_extra_info("socket")
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
