"""WebSocket connections driven by asyncio callbacks, on the Sans-I/O core of ``websockets``.

Why not ``websockets``' own asyncio layer: it gives every connection a reader task, an assembler
and a coroutine ``send`` with a lock, so each frame in or out costs several task switches. Here a
connection is a plain :class:`asyncio.Protocol`: bytes from the socket go through
``websockets.server.ServerProtocol`` (which parses the handshake and frames, enforces the frame
size limit, answers pings and runs the closing handshake) and each complete message is handed to
the :class:`Handler` in the same callback; what :meth:`WebSocket.send` is given during one pass
of the event loop is written in one ``write`` at the end of it. The Sans-I/O protocol is the
part of ``websockets`` meant for exactly this
(https://websockets.readthedocs.io/en/stable/howto/sansio.html).

Most frames a server reads are whole, unfragmented binary messages, often several in one read.
Those are parsed and unmasked here (:meth:`WebSocket._whole_frames`), a tenth of what a frame
costs through the Sans-I/O parser's generators; everything else (partial frames, control and
text frames, fragments, anything malformed or oversized, anything once closing has begun) goes
to the Sans-I/O core, which answers it as the RFC says. The split is exact: the fast path only
runs while the core holds no unparsed bytes, and it stops at the first frame it does not take.

The fast path may only start where a frame starts. The core takes a frame's header off its
buffer as soon as it has it, so whether it is between frames is worked out here from public
things alone: the bytes it was given since the handshake, less the wire size of each frame it
returned (:attr:`WebSocket._core_owes`). Data frames are framed here as RFC 6455 says
(:func:`binary_frame`, checked against the library's own ``Frame.serialize``).

Flow control is the transport's: when its write buffer passes the high-water mark the handler is
told (:meth:`Handler.paused`), and told again when it drains (:meth:`Handler.resumed`); the
session above keeps its own bounded outbox meanwhile.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from http import HTTPStatus
from typing import Protocol, cast

from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import CONNECTING, OPEN
from websockets.server import ServerProtocol

from playhall import log
from playhall.counters import Counters
from playhall.eventloop import Transport

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - websockets' wheels ship the C helper
    from websockets.utils import apply_mask

logger = log.get("playhall.net")


class Handler(Protocol):
    """What a :class:`WebSocket` reports to the layer above (a session)."""

    def message_received(self, message: bytes | str) -> None: ...

    def paused(self) -> None: ...

    def resumed(self) -> None: ...

    def closed(self) -> None: ...


#: Answers a handshake request with a plain HTTP response (a whole ``Response``, or a status and
#: a text body), or None to accept it.
RequestHook = Callable[[Request], Response | tuple[HTTPStatus, str] | None]
#: Makes the handler of a connection whose handshake was accepted.
OpenHook = Callable[["WebSocket"], Handler]
#: Told of a connection as it is accepted, before any byte of it is read: False drops it (the
#: hook has aborted it).
ConnectHook = Callable[["WebSocket"], bool]
#: Told of a connection that is gone, whatever became of it.
LostHook = Callable[["WebSocket"], None]


def binary_frame(payload: bytes) -> bytes:
    """The header of an unfragmented, unmasked binary frame (RFC 6455, 5.2) carrying ``payload``.

    Data frames are framed here rather than by the Sans-I/O core's ``send_binary``: a server's
    frames need no mask and this server negotiates no extension, so the header is all there is
    to it, and building a ``Frame`` per message cost more than the rest of the send."""
    size = len(payload)
    if size < 126:
        return bytes((0x82, size))
    if size < 65536:
        return b"\x82\x7e" + size.to_bytes(2, "big")
    return b"\x82\x7f" + size.to_bytes(8, "big")


def wire_size(frame: Frame) -> int:
    """How many bytes a frame from a client took on the wire: its header, mask and payload
    (clients always mask; no extension is negotiated, so the payload is as sent)."""
    size = len(frame.data)
    return 6 + size + (0 if size < 126 else 2 if size < 65536 else 8)


class WriteBatch:
    """Writes the data frames that connections were given during one pass of the event loop,
    with one callback for all of them (rather than one per connection); the frames and bytes
    written are counted in ``counters``.

    ``first``: callbacks run before the connections are written, each pass that writes: other
    writes of the pass whose path is longer than a frame's to its client, so they start first
    (the fleet's batches to other processes, which still go through Redis and another
    process: see ``playhall.app``). Each does nothing when it has nothing to send."""

    def __init__(self, counters: Counters | None = None) -> None:
        self._waiting: list[WebSocket] = []
        self.counters = counters if counters is not None else Counters()
        self.first: list[Callable[[], None]] = []
        # The loop, kept from the first pass that wrote: on Python 3.11 every
        # ``asyncio.get_running_loop()`` is a getpid() system call (its fork check), and this
        # runs in every pass of the loop that sends anything.
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, ws: WebSocket) -> None:
        if not self._waiting:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self._flush)
        self._waiting.append(ws)

    def _flush(self) -> None:
        for write in self.first:
            try:
                write()
            except Exception:  # (a bug there must not hold every client's frames)
                logger.exception("write_first_failed")
        waiting, self._waiting = self._waiting, []
        for ws in waiting:
            try:
                ws.flush()
            except Exception:  # one connection's failure must not hold the others' frames
                ws.write_failed()


class WebSocket(asyncio.Protocol):
    """One server-side websocket connection."""

    def __init__(
        self,
        *,
        on_request: RequestHook,
        on_open: OpenHook,
        max_size: int,
        ping_interval: float = 20.0,
        ping_timeout: float = 20.0,
        open_timeout: float = 10.0,
        close_timeout: float = 5.0,
        write_limit: int = 64 * 1024,
        batch: WriteBatch | None = None,
        on_connect: ConnectHook | None = None,
        on_lost: LostHook | None = None,
    ) -> None:
        self.protocol = ServerProtocol(max_size=max_size)
        self._max_size = max_size
        # Shared by the server's connections; a connection on its own flushes by itself.
        self._batch = batch if batch is not None else WriteBatch()
        self._on_request = on_request
        self._on_open = on_open
        self._on_connect = on_connect
        self._on_lost = on_lost
        self._ping_interval = ping_interval
        self._ping_timeout = ping_timeout
        self._open_timeout = open_timeout
        self._close_timeout = close_timeout
        self._write_limit = write_limit
        self.transport: Transport | None = None
        self.handler: Handler | None = None
        self.remote_address: str = ""
        #: The client's address as the server counts connections (the peer's host, set when
        #: the connection is accepted; or a trusted proxy's forwarded address, set at the
        #: handshake).
        self.client_address: str = ""
        #: How this connection counts against ``client_address`` until it is lost, as the
        #: layer above counts (playhall.net.admission): "open", "refusing", or not at all.
        self.admission = ""
        self.is_paused = False
        # What the Sans-I/O core would say, kept up to date after each call that can change it
        # (see _core_called): the hot path asked the core's ``state`` property ~5 times a move,
        # each a call into interpreted code.
        self._open = False  # the core's state is OPEN
        #: Bytes the core was given since the handshake that are not yet part of a frame it
        #: returned: while not 0 it is inside a frame, and what comes next is its to parse.
        self._core_owes = 0
        #: The last bytes of the handshake request read so far (its end may straddle reads).
        self._request_tail = b""
        self._core_wrote = False  # the core may have bytes to send (data_to_send)
        self._fragments: list[bytes] = []
        self._fragment_text = False
        self._timer: asyncio.TimerHandle | None = None
        self._ping_payload: bytes | None = None
        self._closing = False  # the close deadline is armed
        self._write_scheduled = False
        self._outgoing: list[bytes] = []  # data frames sent in this pass of the loop
        self._closed = asyncio.get_running_loop().create_future()

    # -- for the layer above ---------------------------------------------------------------------

    def send(self, message: bytes) -> None:
        """Send one binary message; a no-op once the connection is closing.

        Messages sent during one pass of the event loop leave in one write at the end of it:
        a player's move brings it the update and the reply together, and a write is a system
        call, the dearest thing a frame costs here."""
        if self._open:
            self._outgoing.append(binary_frame(message))
            self._outgoing.append(message)
            if not self._write_scheduled:
                self._write_scheduled = True
                self._batch.add(self)

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the socket is dropped if the peer does not answer."""
        if self._open:
            self.protocol.send_close(code, reason)
            self._core_called()
            self.flush()
            self._closing = True
            self._arm(self._close_timeout, self.abort)

    async def wait_closed(self) -> None:
        await asyncio.shield(self._closed)

    def abort(self) -> None:
        """Drop the connection now, without a closing handshake."""
        if self.transport is not None:
            self.transport.abort()

    # -- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = self.transport = cast(Transport, transport)
        stream.set_write_buffer_limits(high=self._write_limit)
        peer = stream.get_extra_info("peername")
        self.remote_address = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        if self._on_connect is not None and not self._on_connect(self):
            return  # dropped
        self._arm(self._open_timeout, self.abort)

    def data_received(self, data: bytes) -> None:
        if self._open and not self._fragments and not self._core_owes:
            data = self._whole_frames(data)
            if not data:
                return
        after = b""
        if self._open:
            self._core_owes += len(data)
        elif self.protocol.state is CONNECTING:
            data, after = self._split_request(data)
        self.protocol.receive_data(data)
        self._core_called()
        events = self.protocol.events_received()
        self.flush()
        for event in events:
            if isinstance(event, Frame):
                self._core_owes -= wire_size(event)
                self._frame(event)
            elif isinstance(event, Request):
                self._handshake(event)
        if self.protocol.close_expected() and not self._closing:
            self._closing = True
            self._arm(self._close_timeout, self.abort)
        if after and self._open:  # frames sent before the handshake's answer came
            self.data_received(after)

    def eof_received(self) -> bool | None:
        self.protocol.receive_eof()
        self._core_called()
        self.protocol.events_received()
        self.flush()
        return None  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()
        self._core_called()
        self._cancel_timer()
        if not self._closed.done():
            self._closed.set_result(None)
        if self._on_lost is not None:
            self._on_lost(self)
        if self.handler is not None:
            handler, self.handler = self.handler, None
            handler.closed()

    def pause_writing(self) -> None:
        self.is_paused = True
        if self.handler is not None:
            self.handler.paused()

    def resume_writing(self) -> None:
        self.is_paused = False
        if self.handler is not None:
            self.handler.resumed()

    # -- internals -------------------------------------------------------------------------------

    def _handshake(self, request: Request) -> None:
        answer = self._on_request(request)
        if isinstance(answer, Response):
            response: Response = answer
        elif answer is not None:
            response = self.protocol.reject(answer[0], answer[1])
        else:
            response = self.protocol.accept(request)
        self.protocol.send_response(response)
        self._core_called()
        self.flush()
        if self._open:
            self._cancel_timer()
            self.handler = self._on_open(self)
            self._schedule_ping()
        else:
            self._arm(self._close_timeout, self.abort)

    def _split_request(self, data: bytes) -> tuple[bytes, bytes]:
        """``data`` read before the handshake was answered, cut where the request ends: the
        core is given the request alone, and what follows waits for its answer. Behind an
        accepted handshake that is frames (a client should wait for the answer, but may not);
        behind any other answer it is dropped, since every plain HTTP answer closes the
        connection: a second request pipelined in the same write would otherwise reach the
        core as frames, fail it, and lose the first answer."""
        probe = self._request_tail + data
        end = probe.find(b"\r\n\r\n")
        if end < 0:
            self._request_tail = probe[-3:]
            return data, b""
        cut = end + 4 - len(self._request_tail)
        return data[:cut], data[cut:]

    def _core_called(self) -> None:
        """Note what a call into the Sans-I/O core may have changed: its state (a close frame
        received or sent, a failure, the end of the stream, the handshake), and that it may
        have something to send."""
        self._open = self.protocol.state is OPEN
        self._core_wrote = True

    def _whole_frames(self, data: bytes) -> bytes:
        """Deliver the whole, final, masked binary frames at the start of ``data`` of at most
        ``max_size`` bytes (no extension is negotiated, so their first byte is exactly 0x82);
        return the bytes from the first frame that is anything else, or is cut short."""
        pos = 0
        end = len(data)
        while end - pos >= 6 and data[pos] == 0x82:
            size = data[pos + 1] ^ 0x80  # the mask bit must be set: >= 0x80 when it is not
            if size < 126:
                start = pos + 2
            elif size == 126 and end - pos >= 8:
                start = pos + 4
                size = int.from_bytes(data[pos + 2 : start], "big")
            else:  # unmasked, or a 64-bit length, or a length not here yet
                break
            stop = start + 4 + size
            if size > self._max_size or stop > end:
                break
            message = apply_mask(data[start + 4 : stop], data[start : start + 4])
            pos = stop
            if self.handler is not None:
                self.handler.message_received(message)
            if not self._open:  # the handler closed it: the core takes over
                break
        return data[pos:] if pos else data

    def _frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        data = frame.data if isinstance(frame.data, bytes) else bytes(frame.data)
        if opcode is Opcode.BINARY or opcode is Opcode.TEXT:
            if frame.fin:
                self._deliver(data, opcode is Opcode.TEXT)
            else:
                self._fragments = [data]
                self._fragment_text = opcode is Opcode.TEXT
        elif opcode is Opcode.CONT:
            # The Sans-I/O core checks continuation order and the total size against max_size.
            self._fragments.append(data)
            if frame.fin:
                whole, self._fragments = b"".join(self._fragments), []
                self._deliver(whole, self._fragment_text)
        elif opcode is Opcode.PONG and data == self._ping_payload:
            self._ping_payload = None
            self._schedule_ping()

    def _deliver(self, data: bytes, text: bool) -> None:
        if self.handler is not None:
            self.handler.message_received(data.decode("utf-8", "replace") if text else data)

    def flush(self) -> None:
        """Write what is waiting: data frames first, then what the protocol has to send.

        A transport already closing (the peer reset the connection, or it was aborted) takes
        nothing more: its frames are dropped (uvloop's transports raise on such a write)."""
        self._write_scheduled = False
        transport = self.transport
        if transport is None:
            return
        if transport.is_closing():
            self._outgoing = []
            return
        outgoing = self._outgoing
        if outgoing:  # data frames go before whatever the protocol wrote since (a close)
            data = b"".join(outgoing)
            transport.write(data)
            self._outgoing = []
            counters = self._batch.counters
            counters.frames_sent += len(outgoing) >> 1  # a header and a payload each
            counters.bytes_sent += len(data)
        if not self._core_wrote:  # only the core's own calls give it anything to send
            return
        self._core_wrote = False
        for data in self.protocol.data_to_send():
            if data:
                transport.write(data)
            else:  # the protocol is done writing: close once the buffer is flushed
                transport.close()

    def write_failed(self) -> None:
        """A write raised (the socket failed under it): log it, drop what was waiting, and
        drop the connection; its handler hears of it through ``connection_lost``."""
        logger.warning("write_failed", peer=self.remote_address, exc_info=True)
        self._outgoing = []
        self._write_scheduled = False
        try:
            self.abort()
        except Exception:  # already torn down: nothing more to do
            pass

    def _schedule_ping(self) -> None:
        if self._open:
            self._arm(self._ping_interval, self._ping)

    def _ping(self) -> None:
        if not self._open:
            return
        self._ping_payload = os.urandom(4)
        self.protocol.send_ping(self._ping_payload)
        self._core_wrote = True
        self.flush()
        self._arm(self._ping_timeout, self._ping_lost)

    def _ping_lost(self) -> None:
        if self._open:
            self.protocol.fail(1011, "keepalive ping timeout")
            self._core_called()
            self.flush()
        self._arm(self._close_timeout, self.abort)

    def _arm(self, delay: float, callback: Callable[[], None]) -> None:
        self._cancel_timer()
        self._timer = asyncio.get_running_loop().call_later(delay, callback)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
