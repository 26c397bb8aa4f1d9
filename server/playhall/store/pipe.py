"""A pipelined Redis connection for the commands of the hot path: every move's commit script,
and the lease scripts.

Why not redis-py for this: its pipelines pack commands in pure Python and read replies through
a stream reader and a task per batch, which cost more than the commit itself. Here commands
queued during one pass of the event loop are written together in one ``write``, and replies are
parsed by hiredis in ``data_received`` and handed straight to the waiting futures, in order
(Redis answers the commands of a connection in the order it got them), or, for a caller that
acts on every reply at once (``call_then``: the fleet's publishes), to its callback. The pipe also
carries what every game's end and rematch write and read (results, ratings, the rooms a player
made, the check a join makes), some sixteen commands a game that cost a benchmark game more on
redis-py than its moves' commits; what the server asks of Redis more rarely (hello, lobby
pages, chat, the reads of a profile) stays on redis-py.

The URL is read as redis-py reads it (``store.dial``): ``rediss://`` speaks TLS with the
``ssl_*`` options of its query string, the user name and password are sent with ``AUTH``, the
path's database is selected. A connection lost fails every command in flight with
``redis.exceptions.ConnectionError``; the next command reconnects. Every command has a deadline
(``timeout`` seconds, connecting included): a command Redis has not answered by then fails with
:class:`CommandTimeout`, and so does every other in flight on that connection, which is dropped
(its replies could no longer be matched to their commands) and made again by the next command.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol, cast

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from playhall import log
from playhall.eventloop import Transport
from playhall.store.dial import CommandTimeout, Dial
from playhall_protocol import codec


class CommandPipe(Protocol):
    """What the store needs of its hot-path connection: :class:`RedisPipe`, or a stand-in (the
    room-path benchmark answers every command in the next pass of the loop)."""

    on_answer: Callable[[], None] | None
    preamble: list[bytes]

    def call(self, *args: bytes) -> Awaitable[Any]: ...

    def call_encoded(self, *command: bytes) -> Awaitable[Any]: ...

    def close(self) -> None: ...


def encode_command(args: list[bytes]) -> bytes:
    """One command in RESP: an array of bulk strings."""
    return b"*%d\r\n" % len(args) + encode_bulk(args)


def encode_bulk_reference(args: list[bytes]) -> bytes:
    """Bulk strings, the elements of a command's array (its header is the caller's): a command
    whose first arguments never change can keep them encoded. (:data:`encode_bulk` is this, or
    its C twin in ``_resp.c`` where that is built: docs/operations.md, "The C speedups".)"""
    heads = _BULK_HEADS  # a local (docs/operations.md, "The compiled build")
    parts = []
    for arg in args:
        size = len(arg)
        parts.append(heads[size] if size < len(heads) else b"$%d" % size)
        parts.append(arg)
    # Each header and each argument a part of its own, every CRLF put in by join: that makes
    # no new bytes object per argument (a header joined to its argument would).
    parts.append(b"")
    return b"\r\n".join(parts)


#: The start of a bulk string of each short length (its CRLF is the join's), made once: a
#: commit has some twenty arguments, nearly all short, and formatting each header would be a
#: third of encoding them.
_BULK_HEADS: Final = [b"$%d" % size for size in range(512)]


def _c_encode_bulk() -> Callable[[list[bytes]], bytes] | None:
    """The C twin, unless the speedups are switched off (``PLAYHALL_SPEEDUPS=0``, read by the
    protocol's codec) or it was not built."""
    if not codec.SPEEDUPS_WANTED:
        return None
    try:
        from playhall.store._resp import encode_bulk
    except ImportError:
        return None
    return encode_bulk


#: Encodes a command's arguments as RESP bulk strings: :func:`encode_bulk_reference`, in C
#: where built.
encode_bulk: Final = _c_encode_bulk() or encode_bulk_reference

logger = log.get("playhall.store")


#: Gets a command's reply, or the error it failed with (then the reply is None).
Callback = Callable[[Any, BaseException | None], None]


class Owed(Protocol):
    """What waits for a command's reply: its future, or a :class:`Then`."""

    def done(self) -> bool: ...

    def set_result(self, result: Any, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...


class Then:
    """A command's reply handed to a callback by the read callback that parsed it
    (:meth:`RedisPipe.call_then`): no future, and no pass of the event loop before the caller
    sees it (a future's done callback runs in the pass after the one that set it). Each
    forwarded move publishes twice (the request, its batch) and acts on both answers."""

    __slots__ = ("callback", "answered")

    def __init__(self, callback: Callback) -> None:
        self.callback = callback
        self.answered = False

    def done(self) -> bool:
        return self.answered

    def set_result(self, result: Any, /) -> None:
        self._give(result, None)

    def set_exception(self, exception: BaseException, /) -> None:
        self._give(None, exception)

    def _give(self, result: Any, error: BaseException | None) -> None:
        self.answered = True
        try:  # (in the connection's read callback: the replies after this one must still go)
            self.callback(result, error)
        except Exception:
            logger.exception("pipe_callback_failed")


def then_of(sent: Awaitable[Any], callback: Callback) -> None:
    """``callback`` given what ``sent`` (a future, or a coroutine: made a task) is answered,
    once it is: the form of :class:`Then` for a pipe or bus without ``call_then``."""
    future = asyncio.ensure_future(sent)
    _answering.add(future)  # (a task the loop alone refers to may be collected mid-way)
    future.add_done_callback(functools.partial(_answer_then, callback))


#: What :func:`then_of` waits on.
_answering: set[asyncio.Future[Any]] = set()


def _answer_then(callback: Callback, done: asyncio.Future[Any]) -> None:
    _answering.discard(done)
    if done.cancelled():
        callback(None, asyncio.CancelledError())
    elif (error := done.exception()) is not None:
        callback(None, error)
    else:
        callback(done.result(), None)


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
        if self.owner.connection is not self:
            return  # given up on: its commands were failed already
        self.reader.feed(data)
        waiting = self.owner.waiting
        deadlines = self.owner.deadlines
        while (reply := self.reader.gets()) is not False:
            future = waiting.popleft()
            deadlines.popleft()
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

    def __init__(self, url: str, *, timeout: float = 5.0) -> None:
        self._dial = Dial(url, timeout=timeout)
        self.timeout = timeout
        self.waiting: deque[Owed] = deque()
        #: When each command in ``waiting`` is due (the loop's clock), in the same order.
        self.deadlines: deque[float] = deque()
        #: Fires at the first command's deadline while commands wait (one timer, not one per
        #: command: it is moved on, not cancelled, when that command is answered in time).
        self._watchdog: asyncio.TimerHandle | None = None
        self._queued: list[bytes] = []
        self._flush_scheduled = False
        #: Whether a write was made early (``at_once``, ``now``) since the last scheduled one:
        #: a pass makes at most one write more than its own.
        self._early = False
        #: The connection in use; None until the next command makes one.
        self.connection: _Connection | None = None
        self._connecting: asyncio.Future[_Connection] | None = None
        #: Commands made while there was no connection, with their futures (see _hold).
        self._held: list[tuple[tuple[bytes, ...], asyncio.Future[Any]]] = []
        #: Set by the owner: called whenever Redis answers (for the health check).
        self.on_answer: Callable[[], None] | None = None
        #: Set by the owner: commands (in RESP) sent first on every new connection, before any
        #: other (the store's ``SCRIPT LOAD``s: a fresh connection may be to a Redis that
        #: restarted, and without them every room's first commit is refused NOSCRIPT and sent
        #: again in full).
        self.preamble: list[bytes] = []

    def call(self, *args: bytes) -> Awaitable[Any]:
        """Send one command, pipelined with the others of the same loop pass: awaited, its
        reply, or the ``ResponseError`` Redis answered with, raised. The command is queued by
        the call itself, so commands go in the order of the calls."""
        return self.call_encoded(encode_command(list(args)))

    def call_encoded(self, *command: bytes) -> Awaitable[Any]:
        """:meth:`call` for a command already in RESP, in one or more parts: they are written
        with the rest of the batch in one join, so the caller need not join them first.

        Not a coroutine while connected: the future Redis's reply settles is returned as it
        is, which spares every commit a coroutine of its own."""
        connection = self.connection
        if connection is None:
            return self._hold(command)
        return self._queue(connection, command)

    def call_early(self, command: bytes, at_once: bool, now: bool) -> Awaitable[Any]:
        """:meth:`call_encoded` for one command another process waits on, written early as
        :meth:`call_then` says (``ClusterPipe.call_early``: a Cluster's publishes, whose
        answers come through its redirections). Apart from :meth:`call_encoded`, whose
        every call (each commit's) would otherwise pay for parsing keyword arguments."""
        connection = self.connection
        if connection is None:
            return self._hold((command,))
        return self._queue(connection, (command,), at_once, None, now)

    async def connected(self) -> None:
        """Connect now if not connected: the calls that follow are queued as they are made,
        with nothing of another caller between them."""
        if self.connection is None:
            await asyncio.shield(self._connect())

    def _hold(self, command: tuple[bytes, ...]) -> asyncio.Future[Any]:
        """A command made while there is no connection: sent first on the next one (after its
        setup), in the order of the calls, before any command made once it is open. (Were each
        caller to send its own once connected, a command made in the meantime would overtake
        it: two batches to one edge would arrive in the wrong order.)"""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._held.append((command, future))
        self._connect()
        return future

    def call_then(
        self, callback: Callback, *args: bytes, at_once: bool = False, now: bool = False
    ) -> None:
        """:meth:`call`, its reply (or failure) handed to ``callback`` from the read callback
        that parsed it (:class:`Then`). ``at_once``: the command starts a path another process
        waits on (the fleet's requests and batches): written by the call itself when no write
        is due this pass, rather than in a loop pass after this one; otherwise queued behind the
        others, in order. The pass's later commands wait for the one write scheduled then.
        ``now``: written by the call itself whatever is due, with the commands queued before it
        (a forwarded request's answer: see ``EdgeMail.send_now``), unless a write was made
        early in this pass already: then with the pass's write. Either way a pass makes at most
        one write more than its own, never one per command: under load, when one pass answers
        many rooms, their answers share a write again."""
        connection = self.connection
        command = (encode_command(list(args)),)
        if connection is None:
            then_of(self._hold(command), callback)
        else:
            self._queue(connection, command, at_once, Then(callback), now)

    def _queue(
        self, connection: _Connection, command: tuple[bytes, ...], at_once: bool = False,
        then: Then | None = None, now: bool = False,
    ) -> asyncio.Future[Any]:
        """Queue ``command`` for the pass's write, or write it early (``at_once``, ``now``:
        see :meth:`call_then`)."""
        loop = connection.loop
        # (With ``then``: the Then, which call_then does not return.)
        future: Any = loop.create_future() if then is None else then
        self.waiting.append(future)
        self.deadlines.append(loop.time() + self.timeout)
        if self._watchdog is None:
            self._watchdog = loop.call_later(self.timeout, self._check_deadline)
        self._queued.extend(command)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            if at_once:  # (nothing else is queued: no write is due)
                self._early = True
                self._write()
            loop.call_soon(self._flush)
        if now and self._queued and not self._early:  # (at most one early write a pass)
            self._early = True
            self._write()
        return future

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._early = False
        self._write()

    def _write(self) -> None:
        queued, self._queued = self._queued, []
        if self.connection is not None and self.connection.transport is not None and queued:
            self.connection.transport.write(b"".join(queued))

    def _check_deadline(self) -> None:
        self._watchdog = None
        connection = self.connection
        if not self.deadlines or connection is None:
            return
        loop = connection.loop
        if self.deadlines[0] > loop.time():
            self._watchdog = loop.call_at(self.deadlines[0], self._check_deadline)
            return
        late = f"Redis did not answer within {self.timeout:g} s"
        self._fail_all(CommandTimeout(late))
        self.close()

    def _fail_all(self, error: Exception) -> None:
        waiting, self.waiting = self.waiting, deque()
        self.deadlines = deque()
        self._queued = []
        for future in waiting:
            if not future.done():
                future.set_exception(error)

    def _connect(self) -> asyncio.Future[_Connection]:
        """The connection being opened (opening it if none is)."""
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
            self._connecting.add_done_callback(self._opened)
        return self._connecting

    def _opened(self, connecting: asyncio.Future[_Connection]) -> None:
        self._connecting = None
        failure = (
            RedisConnectionError("connecting to Redis was cancelled") if connecting.cancelled()
            else connecting.exception()
        )
        if failure is None:
            return
        held, self._held = self._held, []  # (none if the failure came after the setup)
        for _, future in held:
            if not future.done():
                future.set_exception(failure)

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        connection = self.connection = await self._dial.connect(lambda: _Connection(self, loop))
        setup = [self.call(*command) for command in self._dial.login()]
        setup.extend(self.call_encoded(command) for command in self.preamble)
        # The commands made meanwhile go now, behind the setup and ahead of any made later;
        # each caller gets its reply once the setup went through, else the setup's failure
        # (a wrong password refuses them NOAUTH: the caller is told why).
        held, self._held = self._held, []
        queued = [(self._queue(connection, command), future) for command, future in held]
        try:
            await asyncio.gather(*setup)
        except Exception as exc:
            for _, future in queued:
                if not future.done():
                    future.set_exception(exc)
            self.close()
            raise
        finally:
            for sent, future in queued:
                sent.add_done_callback(functools.partial(_pass_on, future))
        return connection

    def answered(self) -> None:
        if self.on_answer is not None:
            self.on_answer()

    def lost(self, connection: _Connection, exc: Exception | None) -> None:
        if self.connection is not connection:
            return  # given up on (close): its commands were failed already
        self.connection = None
        self._fail_all(RedisConnectionError(f"connection to Redis lost: {exc}"))

    def close(self) -> None:
        """Drop the connection; commands still waiting on it fail (ConnectionError)."""
        if self.connection is not None and self.connection.transport is not None:
            self.connection.transport.abort()  # a Redis that stopped reading would keep close()
        self.connection = None
        self._fail_all(RedisConnectionError("connection to Redis closed"))


def _pass_on(to: asyncio.Future[Any], done: asyncio.Future[Any]) -> None:
    """Give ``to`` what ``done`` got (unless it has its answer already)."""
    if to.done():
        if not done.cancelled():
            done.exception()  # (retrieved: the caller was told the setup's failure instead)
        return
    if done.cancelled():
        to.cancel()
        return
    failure = done.exception()
    if failure is not None:
        to.set_exception(failure)
    else:
        to.set_result(done.result())
