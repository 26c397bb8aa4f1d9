"""A pipelined Redis connection for the commands of the hot path: every move's commit script,
and the lease scripts.

Why not redis-py for this: its pipelines pack commands in pure Python and read replies through
a stream reader and a task per batch, which cost more than the commit itself. Here commands
queued during one pass of the event loop are written together in one ``write``, and replies are
parsed by hiredis in ``data_received`` and handed straight to the waiting futures, in order
(Redis answers the commands of a connection in the order it got them). Everything else the
server asks of Redis (hello, lobby, chat) is rarer and stays on redis-py.

A connection lost fails every command in flight with ``redis.exceptions.ConnectionError``; the
next command reconnects.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Protocol, cast

import hiredis
from redis.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from playhall.eventloop import Transport
from playhall_protocol import codec


class CommandPipe(Protocol):
    """What the store needs of its hot-path connection: :class:`RedisPipe`, or a stand-in (the
    room-path benchmark answers every command in the next pass of the loop)."""

    on_answer: Callable[[], None] | None
    preamble: list[bytes]

    async def call(self, *args: bytes) -> Any: ...

    async def call_encoded(self, command: bytes) -> Any: ...

    def close(self) -> None: ...


def encode_command(args: list[bytes]) -> bytes:
    """One command in RESP: an array of bulk strings."""
    return b"*%d\r\n" % len(args) + encode_bulk(args)


def encode_bulk_reference(args: list[bytes]) -> bytes:
    """Bulk strings, the elements of a command's array (its header is the caller's): a command
    whose first arguments never change can keep them encoded. (``encode_bulk`` is this, or its
    C twin in ``_resp.c`` where that is built.)"""
    parts = []
    for arg in args:
        size = len(arg)
        parts.append(_BULK_HEADS[size] if size < _SHORT else b"$%d\r\n" % size)
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


#: The header of a bulk string of each short length, made once: a commit has some twenty
#: arguments, nearly all short, and formatting each header would be a third of encoding them.
_SHORT: Final = 512
_BULK_HEADS: Final = [b"$%d\r\n" % size for size in range(_SHORT)]


def _c_encode_bulk() -> Callable[[list[bytes]], bytes] | None:
    """The C twin, unless the speedups are switched off (``PLAYHALL_SPEEDUPS=0``, as for the
    protocol's) or it was not built."""
    if not codec.SPEEDUPS_WANTED:
        return None
    try:
        from playhall.store._resp import encode_bulk
    except ImportError:
        return None
    return encode_bulk


encode_bulk: Final = _c_encode_bulk() or encode_bulk_reference


class _Connection(asyncio.Protocol):
    def __init__(self, owner: RedisPipe, loop: asyncio.AbstractEventLoop) -> None:
        self.owner = owner
        #: The loop the connection lives on, kept: every command needs it, and on Python 3.11
        #: ``asyncio.get_running_loop()`` is a getpid() system call (its fork check).
        self.loop = loop
        self.reader = hiredis.Reader(replyError=ResponseError)
        self.transport: Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        waiting = self.owner.waiting
        while (reply := self.reader.gets()) is not False:
            future = waiting.popleft()
            if not future.done():
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        self.owner.answered()

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.lost(self, exc)


class RedisPipe:
    """Sends commands on one connection of its own; :meth:`call` returns the reply."""

    def __init__(self, url: str) -> None:
        self._params: dict[str, Any] = parse_url(url)
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self._queued: list[bytes] = []
        self._flush_scheduled = False
        self._connection: _Connection | None = None
        self._connecting: asyncio.Future[_Connection] | None = None
        #: Set by the owner: called whenever Redis answers (for the health check).
        self.on_answer: Callable[[], None] | None = None
        #: Set by the owner: commands (in RESP) sent first on every new connection, before any
        #: other (the store's ``SCRIPT LOAD``s: a fresh connection may be to a Redis that
        #: restarted, and without them every room's first commit is refused NOSCRIPT and sent
        #: again in full).
        self.preamble: list[bytes] = []

    async def call(self, *args: bytes) -> Any:
        """Send one command (pipelined with others of the same loop pass); its reply, or the
        ``ResponseError`` Redis answered with, raised."""
        return await self.call_encoded(encode_command(list(args)))

    async def call_encoded(self, command: bytes) -> Any:
        """:meth:`call` for a command already in RESP."""
        connection = self._connection
        if connection is None:
            connection = await self._connect()
        loop = connection.loop
        future: asyncio.Future[Any] = loop.create_future()
        self.waiting.append(future)
        self._queued.append(command)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._flush_scheduled = False
        queued, self._queued = self._queued, []
        if self._connection is not None and self._connection.transport is not None and queued:
            self._connection.transport.write(b"".join(queued))

    async def _connect(self) -> _Connection:
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
        try:
            return await asyncio.shield(self._connecting)
        finally:
            if self._connecting is not None and self._connecting.done():
                self._connecting = None

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        params = self._params
        try:
            if "path" in params:
                _, connection = await loop.create_unix_connection(
                    lambda: _Connection(self, loop), params["path"]
                )
            else:
                _, connection = await loop.create_connection(
                    lambda: _Connection(self, loop),
                    params.get("host", "localhost"),
                    params.get("port", 6379),
                )
        except OSError as exc:
            raise RedisConnectionError(f"cannot reach Redis: {exc}") from exc
        self._connection = connection
        setup = []
        if params.get("password"):
            auth = [b"AUTH", str(params["password"]).encode()]
            if params.get("username"):
                auth.insert(1, str(params["username"]).encode())
            setup.append(self.call(*auth))
        if params.get("db"):
            setup.append(self.call(b"SELECT", str(params["db"]).encode()))
        setup.extend(self.call_encoded(command) for command in self.preamble)
        try:
            await asyncio.gather(*setup)
        except Exception:
            self.close()
            raise
        return connection

    def answered(self) -> None:
        if self.on_answer is not None:
            self.on_answer()

    def lost(self, connection: _Connection, exc: Exception | None) -> None:
        if self._connection is connection:
            self._connection = None
        waiting, self.waiting = self.waiting, deque()
        self._queued = []
        for future in waiting:
            if not future.done():
                future.set_exception(RedisConnectionError(f"connection to Redis lost: {exc}"))

    def close(self) -> None:
        if self._connection is not None and self._connection.transport is not None:
            self._connection.transport.close()
        self._connection = None
