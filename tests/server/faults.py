"""A fault-injecting TCP proxy to put between the server and a real Redis: it forwards bytes
both ways, and when armed, lets the next command that carries a marker through to Redis,
waits for Redis' reply (so the command certainly ran), drops that reply and resets the
server's connection: a reply lost after the write. Or it resets the connection without
forwarding the command (Redis died just before it), or answers the command itself; and it can
go down (every connection reset, new ones refused) at that moment. Several cuts can be armed
in a row: each is armed once the one before it has happened; a repeating cut stays armed until
it is disarmed (a Redis that keeps failing one command)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections import deque
from dataclasses import dataclass
from urllib.parse import urlparse


@dataclass(frozen=True)
class _Cut:
    """One armed fault: the command it waits for (every marker in one chunk) and what it does."""

    markers: tuple[bytes, ...]
    then_down: bool
    answer: bytes | None
    forward: bool
    repeat: bool


def commands_in(data: bytes) -> int:
    """How many whole commands (RESP arrays of bulk strings) ``data`` holds."""
    count, at = 0, 0
    while data.startswith(b"*", at):
        end = data.index(b"\r\n", at)
        items, at = int(data[at + 1 : end]), end + 2
        for _ in range(items):
            end = data.index(b"\r\n", at)
            at = end + 2 + int(data[at + 1 : end]) + 2
        count += 1
    return count


def standing_in(answer: bytes) -> bytes:
    """A command Redis answers with ``answer``, an error reply (``-CODE text\\r\\n``)."""
    if not (answer.startswith(b"-") and answer.endswith(b"\r\n")):
        raise ValueError("an answer is an error reply")
    script = b"return redis.error_reply('%s')" % answer[1:-2].replace(b"'", b"\\'")
    return b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script)


class ResetProxy:
    def __init__(self, upstream_url: str) -> None:
        target = urlparse(upstream_url)
        self._host = target.hostname or "127.0.0.1"
        self._port = target.port or 6379
        self._db = target.path or "/0"
        self._server: asyncio.Server | None = None
        #: The cuts armed, the next first.
        self._cuts: deque[_Cut] = deque()
        #: Set once every armed cut has happened.
        self.cut = asyncio.Event()
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

    def arm(
        self,
        *markers: bytes,
        then_down: bool = False,
        answer: bytes | None = None,
        forward: bool = True,
        after: bool = False,
        repeat: bool = False,
    ) -> None:
        """Cut after the next chunk from the server that holds every one of ``markers``; with
        ``then_down``, go down at that moment. With ``answer`` (an error reply), that chunk is
        not forwarded at all: each of its commands is answered with it instead.
        Without ``forward``, the chunk is not forwarded either, and its connection is reset at
        once (Redis never saw the command). With ``after``, the cut is armed once those
        already armed have happened; without, they are forgotten. With ``repeat``, the cut
        happens to every chunk that holds the markers until :meth:`disarm` (``cut`` is set at
        the first)."""
        if not after:
            self._cuts.clear()
        self.cut.clear()
        self._cuts.append(_Cut(markers, then_down, answer, forward, repeat))

    def disarm(self) -> None:
        """Forget every armed cut (a repeating one included)."""
        self._cuts.clear()

    def _take_cut(self, data: bytes) -> _Cut | None:
        """The armed cut ``data`` triggers (taken off the queue unless it repeats), if any."""
        if self._cuts and all(m in data for m in self._cuts[0].markers):
            return self._cuts[0] if self._cuts[0].repeat else self._cuts.popleft()
        return None

    def _cut_done(self, cut: _Cut) -> None:
        if cut.then_down:
            self.go_down()
        if cut.repeat or not self._cuts:
            self.cut.set()

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
        pending: list[_Cut] = []  # a marked command went up: its reply is not to come back

        async def upward() -> None:
            while data := await reader.read(1 << 16):
                cut = self._take_cut(data)
                if cut is not None and cut.answer is not None:
                    # Answered in its place, and in order: what Redis gets instead of each
                    # command of the chunk is a script that returns the error, so replies to
                    # commands still in flight before it come back first, as from Redis.
                    up_writer.write(standing_in(cut.answer) * commands_in(data))
                    await up_writer.drain()
                    self._cut_done(cut)
                    continue
                if cut is not None and not cut.forward:  # as if Redis died just before it
                    reset(writer)
                    up_writer.close()
                    self._cut_done(cut)
                    return
                if cut is not None:
                    pending.append(cut)
                up_writer.write(data)
                await up_writer.drain()

        async def downward() -> None:
            while data := await up_reader.read(1 << 16):
                if pending:  # Redis has run it: drop the reply, reset the client
                    reset(writer)
                    up_writer.close()
                    self._cut_done(pending[0])
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
