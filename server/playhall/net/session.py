"""One client connection: who it is, the messages it sent that wait to be handled, and its
bounded outbox.

Frames are written to the socket at once while it takes them. Once the transport's write buffer
is full (the peer reads slower than we write) frames queue in the outbox instead. Outbox policy:
replies always queue (one per request, and requests are rate limited). Room frames queue while
the outbox is below its bound; past it, that room is marked stale for this connection and its
further updates are skipped, and once the outbox drains the room sends a fresh snapshot
instead. Lobby, chat and presence pushes are dropped when full. A connection whose socket has
not taken data for ``slow_timeout`` seconds is closed (4000); the client library reconnects and
resumes.

Rate limiting happens as messages arrive, before they queue: a client over its rate gets
``rate_limited`` for each message dropped, and a flooding one is closed (1008).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Protocol

from playhall import log
from playhall.config import Config
from playhall.counters import Counters
from playhall.net.ratelimit import TokenBucket
from playhall.tasks import Tasks
from playhall_protocol import ProtocolError, decode, encode, errors
from playhall_protocol.codec import frame_head, pack
from playhall_protocol.messages import read, request_id_of


class Request:
    """A client message as it arrived, decoded and checked once: its kind and request id, or
    the :class:`ProtocolError` that refuses it (with the request id, when one was readable)."""

    __slots__ = ("kind", "rid", "message", "error")

    def __init__(self, frame: bytes | str) -> None:
        self.kind = ""
        self.rid: int | None = None
        self.message: Any = None
        self.error: ProtocolError | None = None
        try:
            self.message, self.kind, self.rid = read(frame)
        except ProtocolError as exc:
            self.rid = exc.request_id
            self.message = exc.decoded
            self.error = exc


class Socket(Protocol):
    """What a session needs of its connection (:class:`playhall.net.websocket.WebSocket`)."""

    remote_address: str
    is_paused: bool

    def send(self, message: bytes) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def abort(self) -> None: ...

    async def wait_closed(self) -> None: ...


#: Tries to handle a request at once, without the connection's task; True if it took it.
FastPath = Callable[["Session", Request], bool]


class Session:
    def __init__(
        self,
        ws: Socket,
        config: Config,
        on_drained: Callable[[Session, str], None],
        fast_path: FastPath | None = None,
        counters: Counters | None = None,
        on_closed: Callable[[Session], None] | None = None,
    ) -> None:
        self.ws = ws
        self.config = config
        self.counters = counters if counters is not None else Counters()
        #: The connection's id in this process (set by the endpoint): replies are addressed
        #: to it (see ``replies``).
        self.id = 0
        self.player = ""
        self.name = ""
        self.protocol = 0
        #: The player has sat down, created a room or chatted (their record is kept long).
        self.used = False
        #: The client address this connection counts against (see net/admission.py).
        self.address = ""
        #: Whether the connection is counted against its address on every process together
        #: (since its hello; see ``playhall.caps``).
        self.counted = False
        self.rooms: set[str] = set()
        self.bucket = TokenBucket(config.rate, config.burst)
        self.frames_dropped = 0
        self.blocked_since: float | None = None
        self.flooded = False
        self.log: Any = None  # the connection's bound logger, set by the endpoint
        #: The connection's task is handling a request / a move is with its room. Either way
        #: the next request waits: requests are handled in order, one at a time.
        self.busy = False
        self.in_flight = False
        self._fast_path = fast_path
        self._inbox: deque[Request] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._gone = False
        self._outbox: deque[bytes] = deque()
        self._stale: set[str] = set()
        self._on_drained = on_drained
        self._on_closed = on_closed
        self._idle = asyncio.Event()  # set whenever the outbox is empty
        self._idle.set()

    @property
    def greeted(self) -> bool:
        return bool(self.player)

    # -- messages in (the Handler interface of the websocket) ----------------------------------

    def message_received(self, message: bytes | str) -> None:
        if self.flooded:
            return
        if not self.bucket.allow():
            if self.bucket.flooding:
                self.flooded = True
                self.close_soon(errors.CLOSE_POLICY, "flooding: too many messages")
                return
            self.counters.request("unread", errors.RATE_LIMITED)
            self.reply(
                error_frame(
                    _request_id(message),
                    errors.RATE_LIMITED,
                    f"more than {self.config.rate:g} messages/s; this one was dropped",
                )
            )
            return
        request = Request(message)
        if (
            self._fast_path is not None
            and not (self._inbox or self.busy or self.in_flight)
            and self._try_fast_path(self._fast_path, request)
        ):
            return
        self._inbox.append(request)
        self._wake()

    def _try_fast_path(self, fast_path: FastPath, request: Request) -> bool:
        """``fast_path(request)``, contained: it runs inside the transport's read callback,
        where an exception would abort the connection and lose the rest of the read. One that
        raises leaves the request to the connection's task, which answers every request
        exactly once (``internal`` if it raises there too). The fast path hands a move to its
        room only as its last step, so one that raised has not taken the request."""
        try:
            return fast_path(self, request)
        except Exception:
            if self.log is not None:
                self.log.exception("fast_path_failed", req=request.rid, player=self.player)
            return False

    def closed(self) -> None:
        self._gone = True
        self._wake()
        if self._on_closed is not None:
            self._on_closed(self)

    @property
    def gone(self) -> bool:
        """The connection is closed (its task may still be finishing its last request)."""
        return self._gone

    def paused(self) -> None:
        self.blocked_since = time.monotonic()

    def resumed(self) -> None:
        self.blocked_since = None
        while self._outbox and not self.ws.is_paused:
            self.ws.send(self._outbox.popleft())
        if not self._outbox:
            self._idle.set()
            for room in list(self._stale):
                self._on_drained(self, room)

    async def next_request(self) -> Request | None:
        """The next request to handle, in arrival order, once the one in flight (if any) is
        answered; None once the connection is gone and nothing is in flight."""
        while self.in_flight or not self._inbox:
            if self._gone and not self.in_flight:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._inbox.popleft()

    def answered(self) -> None:
        """The request in flight (see :attr:`in_flight`) has its reply."""
        self.in_flight = False
        if self._inbox or self._gone:  # else the task would only wake to wait again
            self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- frames out ----------------------------------------------------------------------------

    def reply(self, frame: bytes) -> None:
        if self._outbox or self.ws.is_paused:
            self._outbox.append(frame)
            self._idle.clear()
        else:
            self.ws.send(frame)

    def push(self, frame: bytes, room: str | None = None) -> None:
        if room is not None and room in self._stale:
            return
        if not (self._outbox or self.ws.is_paused):
            self.ws.send(frame)
            return
        if len(self._outbox) >= self.config.outbox:
            self.frames_dropped += 1
            self.counters.frames_dropped += 1
            if room is not None:
                self._stale.add(room)
            return
        self._outbox.append(frame)
        self._idle.clear()

    def queued(self) -> int:
        """Frames waiting in the outbox."""
        return len(self._outbox)

    def is_stale(self, room: str) -> bool:
        return room in self._stale

    def clear_stale(self, room: str) -> None:
        self._stale.discard(room)

    def mark_stale(self, room: str) -> None:
        """Drop the room's frames until a snapshot comes (after a frame was lost on its way
        from another process: see playhall.fleet.edge)."""
        self._stale.add(room)

    # -- closing -------------------------------------------------------------------------------

    async def close(self, code: int, reason: str, flush_timeout: float = 2.0) -> None:
        """Close after sending what is queued (the replies explaining why, above all)."""
        try:
            await asyncio.wait_for(self._idle.wait(), flush_timeout)
        except TimeoutError:
            pass
        self.ws.close(code, reason)

    def close_soon(self, code: int, reason: str) -> None:
        """Close now if nothing is queued, else once the outbox has drained."""
        if self._idle.is_set():
            self.ws.close(code, reason)
            return
        _closing.spawn(self.close(code, reason))

    def too_slow(self, now: float) -> bool:
        return (
            self.blocked_since is not None and now - self.blocked_since > self.config.slow_timeout
        )


_closing: Final = Tasks("connection close", log.get("playhall.net"))


def ok_frame(rid: int, result: dict[str, Any]) -> bytes:
    """A request's answer, ``{"t": "ok", "re": rid, **result}`` (``result`` has neither key),
    byte for byte what ``encode`` makes of it: spliced from the result packed alone, because a
    move's answer goes out many times a second and building the merged map cost more than
    packing it."""
    if len(result) < len(_OK_HEADS):
        return b"".join((_OK_HEADS[len(result)], pack(rid), pack(result)[1:]))
    return encode({"t": "ok", "re": rid, **result})


#: How an answer with each number of result fields begins (the map's header, t, "ok" and the
#: "re" key), for results packed as a fixmap (fewer than 16 entries), whose header is one byte.
_OK_HEADS: Final = [frame_head({"t": "ok"}, 1 + n) + pack("re") for n in range(16)]


def error_frame(rid: int | None, code: str, reason: str, **extra: Any) -> bytes:
    """An error reply: every refusal has this one shape."""
    return encode({"t": "error", "re": rid, "code": code, "reason": reason, **extra})


def _request_id(message: bytes | str) -> int | None:
    """The request id of ``message`` when it has a readable one."""
    if isinstance(message, bytes):
        try:
            return request_id_of(decode(message))
        except ProtocolError:
            return None
    return None
