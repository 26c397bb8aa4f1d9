"""One client connection: who it is, its bounded outbox, and the task that writes it.

Outbox policy: replies always queue (one per request, and requests are rate limited). Room
frames queue while the outbox is below its bound; past it, that room is marked stale for this
connection and its further updates are skipped, and once the outbox drains the room sends a
fresh snapshot instead. Lobby, chat and presence pushes are dropped when full. A connection
whose socket does not take a frame within ``slow_timeout`` seconds is closed (4000); the
client library reconnects and resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from playhall.config import Config
from playhall.net.ratelimit import TokenBucket


class Session:
    def __init__(
        self, ws: ServerConnection, config: Config, on_drained: Callable[[Session, str], None]
    ) -> None:
        self.ws = ws
        self.config = config
        self.player = ""
        self.name = ""
        self.protocol = 0
        self.rooms: set[str] = set()
        self.bucket = TokenBucket(config.rate, config.burst)
        self._outbox: deque[bytes] = deque()
        self._wake = asyncio.Event()
        self._stale: set[str] = set()
        self._on_drained = on_drained
        self._writer: asyncio.Task[None] | None = None
        self.frames_dropped = 0
        self._sending = False
        self.blocked_since: float | None = None
        self._idle = asyncio.Event()  # set whenever the outbox has just been emptied

    @property
    def greeted(self) -> bool:
        return bool(self.player)

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write_forever())

    async def stop(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    # -- queuing -------------------------------------------------------------------------------

    def reply(self, frame: bytes) -> None:
        self._outbox.append(frame)
        self._wake.set()

    def push(self, frame: bytes, room: str | None = None) -> None:
        if room is not None and room in self._stale:
            return
        if len(self._outbox) >= self.config.outbox:
            self.frames_dropped += 1
            if room is not None:
                self._stale.add(room)
            return
        self._outbox.append(frame)
        self._wake.set()

    def is_stale(self, room: str) -> bool:
        return room in self._stale

    def clear_stale(self, room: str) -> None:
        self._stale.discard(room)

    async def close(self, code: int, reason: str, flush_timeout: float = 2.0) -> None:
        """Close after sending what is queued (the replies explaining why, above all)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + flush_timeout
        while (self._outbox or self._sending) and loop.time() < deadline:
            self._idle.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), deadline - loop.time())
        await self.ws.close(code, reason)

    def too_slow(self, now: float) -> bool:
        return (
            self.blocked_since is not None and now - self.blocked_since > self.config.slow_timeout
        )

    # -- writing -------------------------------------------------------------------------------

    async def _write_forever(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                self._sending = True
                while self._outbox:
                    frame = self._outbox.popleft()
                    # Not asyncio.wait_for (a task per frame): the endpoint's sweeper closes
                    # connections whose send has been blocked for longer than slow_timeout.
                    self.blocked_since = time.monotonic()
                    await self.ws.send(frame)
                    self.blocked_since = None
                self._sending = False
                self._idle.set()
                for room in list(self._stale):
                    self._on_drained(self, room)
        except ConnectionClosed:
            return
