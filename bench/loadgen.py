"""A lean load-generating client for bench/moves.py: the per-move path is plain callbacks.

The websockets asyncio client costs a reader task, a frame assembler and a few awaits per
message (~250 us of CPU per move); driving thousands of moves per second from one core shared
with Redis needs far less. Here:

- the HTTP upgrade is done by hand (``loop.sock_*``), then the socket joins a ``Hub``: one
  epoll, watched by asyncio as a single fd, whose callback drains every ready socket in a loop
  (no transport, handle or fresh buffer per read);
- server frames (unmasked) are parsed in ``data_received``, pings answered, close echoed;
  client frames are masked with a fresh 4-byte key each (RFC 6455), by websockets' C helper;
- the room view is mirrored by applying every diff (``apply_ops``: the common ops inline, the
  rest by ``playhall_protocol.apply_diff``) and, when the view says it is the client's turn, the
  first legal move is sent from inside the callback: no task, future or await per move.

Lobby requests (hello, create, join, sync, ready, rematch, leave) stay plain ``async`` code
with a future per request. The workload is the same as ``--client websockets``': R rooms x 2
clients, Mantis with target 105, rematch and leave the finished room when a game ends; latency
runs from sending a move to receiving the update it caused.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
import select
import socket
import time
from typing import Any, Protocol

import msgpack

from playhall_protocol import apply_diff, decode

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - the C helper ships with websockets' wheels

    def apply_mask(data: bytes | bytearray | memoryview, mask: bytes | bytearray) -> bytes:
        n = len(data)
        key = int.from_bytes((mask * ((n >> 2) + 1))[:n], "big")
        return (int.from_bytes(data, "big") ^ key).to_bytes(n, "big")


GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 2**22  # server messages: accept at least 4 MiB, like the reference client

_packb = msgpack.packb
# The protocol's own decoder (C where built): it keeps recent map keys interned by their bytes,
# where msgpack decodes and interns every key of every message (~1 us more per update).
_decode = decode
_getrandbits = random.getrandbits
_clock = time.perf_counter
_MISSING: Any = object()


def frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame: masked with a fresh key."""
    n = len(payload)
    mask = _getrandbits(32).to_bytes(4, "big")
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    return head + mask + apply_mask(payload, mask)


def _walk(node: Any, steps: list[Any]) -> Any:
    """The value at ``steps`` from ``node``, with the reference's checks (a str step into a map,
    a non-bool int in range into an array), or ``_MISSING``."""
    for step in steps:
        if type(node) is dict:
            node = node.get(step, _MISSING) if type(step) is str else _MISSING
        elif type(node) is list and type(step) is int and 0 <= step < len(node):
            node = node[step]
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


def apply_ops(view: Any, ops: list[Any]) -> Any:
    """``apply_diff`` for a diff just decoded from a frame, with its common ops inline.

    ``set`` (non-empty path) and ``len`` are done here, with the reference's checks (a str step
    into a map, a non-bool int in range into an array) but without copying values: a freshly
    decoded diff shares nothing with the view or between its ops, and is dropped afterwards.
    Anything else (``del``, an empty path, an op that does not fit) hands the rest of the diff
    to ``apply_diff``, which applies it or raises ``ValueError`` as the reference does.
    """
    i = -1
    for op in ops:
        i += 1
        if type(op) is not list or len(op) != 3:
            return apply_diff(view, ops[i:])
        path = op[1]
        if type(path) is not list or not path:
            return apply_diff(view, ops[i:])
        kind = op[0]
        if kind == "set":
            parent = _walk(view, path[:-1]) if len(path) > 1 else view
            key = path[-1]
            if type(parent) is dict and type(key) is str:
                parent[key] = op[2]
                continue
            if type(parent) is list and type(key) is int and 0 <= key <= len(parent):
                if key == len(parent):
                    parent.append(op[2])
                else:
                    parent[key] = op[2]
                continue
        elif kind == "len":
            target = _walk(view, path)
            n = op[2]
            if type(target) is list and type(n) is int and 0 <= n <= len(target):
                del target[n:]
                continue
        return apply_diff(view, ops[i:])
    return view


class Hub:
    """The sockets of one load process, polled by one epoll that asyncio watches as one fd.

    asyncio's transports cost a handle, two method layers and a fresh receive buffer per
    readable socket; here one callback drains every ready socket in a loop. Sockets are
    non-blocking; what a send cannot take now waits for EPOLLOUT.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.epoll = select.epoll()
        self.clients: dict[int, LeanClient] = {}
        loop.add_reader(self.epoll.fileno(), self.poll)

    def add(self, client: LeanClient) -> None:
        self.clients[client.fd] = client
        self.epoll.register(client.fd, select.EPOLLIN)

    def remove(self, client: LeanClient) -> None:
        if self.clients.pop(client.fd, None) is not None:
            self.epoll.unregister(client.fd)

    def poll(self) -> None:
        clients = self.clients
        for fd, events in self.epoll.poll(0):
            client = clients.get(fd)
            if client is None:
                continue
            if events & select.EPOLLOUT:
                client.flush()
            if events & _READABLE:
                try:
                    data = client.sock.recv(262144)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:
                    client.connection_lost(exc)
                    continue
                if data:
                    client.data_received(data)
                else:
                    client.connection_lost(None)

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.epoll.fileno())
        self.epoll.close()


_READABLE = select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR


class LeanClient:
    """One WebSocket connection to the server, one seat in one room at a time."""

    def __init__(self, hub: Hub, sock: socket.socket, stats: dict[str, Any], stop_at: float,
                 measure_from: float) -> None:
        self.hub = hub
        self.sock = sock
        self.fd = sock.fileno()
        self.stats = stats
        self.lat: list[float] = stats["lat"]
        self.done_at: list[float] = stats["done_at"]  # when each latency in lat was taken
        self.stop_at = stop_at
        self.measure_from = measure_from
        self.loop = asyncio.get_running_loop()
        self.out: list[bytes] = []  # what the socket did not take yet
        self.buf = b""  # an incomplete frame
        self.fragments: list[bytes] = []
        self.closed = False
        self.ids = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        # The room mirror and the per-move state.
        self.room = ""
        self.version = -1
        self.view: dict[str, Any] = {}
        self.seat = -1
        self.move_id = -1  # the request id of the move in flight, until its reply
        self.sent_at = 0.0  # 0: no move in flight
        self.sent_version = -1
        self.finished: asyncio.Future[None] | None = None  # set when the game ends or time is up
        # Paced play (``lean_pair(pace=...)``): the pair's next move is due at slot[0], one
        # every ``pace`` seconds; 0: move as soon as it is this seat's turn (closed loop).
        self.pace = 0.0
        self.slot = [0.0]
        self.waiting = False  # a paced move is scheduled
        self.due = False  # a paced move's time came

    # --- connection -------------------------------------------------------------------------

    @classmethod
    async def connect(cls, hub: Hub, host: str, port: int, stats: dict[str, Any],
                      stop_at: float, measure_from: float) -> LeanClient:
        """Connect and do the HTTP upgrade (plain async code), then join the hub."""
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await loop.sock_connect(sock, (host, port))
            key = base64.b64encode(os.urandom(16))
            await loop.sock_sendall(sock, (
                b"GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n") % (host.encode(), port, key))
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = await loop.sock_recv(sock, 65536)
                if not chunk:
                    raise ConnectionError("connection closed during the handshake")
                head += chunk
        except BaseException:
            sock.close()
            raise
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(b":") for line in lines[1:])}
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        if not lines[0].startswith(b"HTTP/1.1 101") or \
                headers.get(b"sec-websocket-accept") != accept:
            sock.close()
            raise ConnectionError(f"handshake refused: {lines[0]!r}")
        client = cls(hub, sock, stats, stop_at, measure_from)
        hub.add(client)
        if rest:
            client.data_received(rest)
        return client

    def write(self, data: bytes) -> None:
        if self.out:
            self.out.append(data)
            return
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self.connection_lost(exc)
            return
        if sent < len(data):
            self.out.append(data[sent:])
            self.hub.epoll.modify(self.fd, select.EPOLLIN | select.EPOLLOUT)

    def flush(self) -> None:
        data = b"".join(self.out)
        self.out = []
        self.write(data)
        if not self.out and not self.closed:
            self.hub.epoll.modify(self.fd, select.EPOLLIN)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.fd in self.hub.clients:
            self.hub.remove(self)
            self.sock.close()
        self.closed = True
        error = ConnectionError(f"connection lost: {exc}")
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()
        self._finish()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.write(frame(8, (1000).to_bytes(2, "big")))
            self.hub.remove(self)
            self.sock.close()

    # --- frames -----------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.buf:
            data = self.buf + data
            self.buf = b""
        n = len(data)
        pos = 0
        while n - pos >= 2:
            b0 = data[pos]
            length = data[pos + 1]  # server frames are never masked: the top bit is 0
            if length < 126:
                start = pos + 2
            elif length == 126:
                start = pos + 4
                if start > n:
                    break
                length = int.from_bytes(data[pos + 2:start], "big")
            else:
                start = pos + 10
                if start > n:
                    break
                length = int.from_bytes(data[pos + 2:start], "big")
                if length > MAX_MESSAGE:
                    raise ConnectionError(f"frame of {length} bytes")
            end = start + length
            if end > n:
                break
            pos = end
            if b0 == 0x82:  # a whole binary message: the common case
                self.on_message(_decode(data[start:end]))
            else:
                self._other_frame(b0, data[start:end])
        if pos < n:
            self.buf = data[pos:]

    def _other_frame(self, b0: int, payload: bytes) -> None:
        opcode = b0 & 0x0F
        if opcode == 9:  # ping
            self.write(frame(10, payload))
        elif opcode == 8:  # close: echo the code, then the server closes TCP
            if not self.closed:
                self.closed = True
                self.write(frame(8, payload[:2]))
        elif opcode in (0, 2):  # a fragmented binary message
            self.fragments.append(payload)
            if b0 & 0x80:
                message = b"".join(self.fragments)
                self.fragments = []
                self.on_message(_decode(message))
        # pong (10) and text (1, never sent by the server) are ignored

    # --- messages ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(2, _packb(message)))

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.ids += 1
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.pending[self.ids] = future
        self.send({"t": kind, "id": self.ids, **fields})
        reply = await future
        if reply["t"] == "error":
            raise RuntimeError(f"{kind}: {reply['code']}: {reply['reason']}")
        return reply

    def on_message(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "update":
            if message["room"] != self.room:
                return
            if message["from"] == self.version:
                try:
                    self.view = apply_ops(self.view, message["diff"])
                except ValueError:
                    self.version = -1
                    self.stats["resyncs"] += 1
                    self.send({"t": "sync", "id": 0, "room": self.room})
                    return
                self.version = message["to"]
            elif message["to"] <= self.version:
                return
            elif self.version < 0:  # no view yet: the sync under way brings one
                return
            else:  # a gap: catch up from the version we have
                self.stats["resyncs"] += 1
                self.send({"t": "sync", "id": 0, "room": self.room, "version": self.version})
                return
            self.changed()
        elif kind == "ok" or kind == "error":
            re = message.get("re")
            if re == self.move_id:
                self.move_id = -1
                if kind == "error":  # refused (stale...): decide again at the next update
                    self.stats["refused"] += 1
                    self.sent_at = 0.0
                return
            future = self.pending.pop(re, None) if re else None
            if future is not None and not future.done():
                future.set_result(message)
        elif kind == "snapshot":
            if message["room"] != self.room:
                return
            self.view, self.version = message["view"], message["version"]
            self.changed()
        # presence, chat, lobby: nothing to do

    def changed(self) -> None:
        """The mirror moved on: take the latency of our move, then move if it is our turn."""
        if self.sent_at and self.version > self.sent_version:
            now = _clock()
            if now >= self.measure_from:
                self.lat.append(now - self.sent_at)
                self.done_at.append(now)
            self.sent_at = 0.0
        view = self.view
        if view.get("status") == "finished":
            self._finish()
            return
        if self.finished is None:
            return
        now = _clock()
        if now >= self.stop_at:
            self._finish()
            return
        if not self.sent_at and view.get("you") == self.seat and self.seat in view.get(
                "to_act", ()):
            if self.pace and not self.due:
                if self.waiting:
                    return
                due = max(now, self.slot[0])
                self.slot[0] = due + self.pace
                if due > now:  # the latency runs from the move sent, not from its turn
                    self.waiting = True
                    self.loop.call_at(self.loop.time() + (due - now), self._paced)
                    return
            self.due = False
            self.sent_at = now
            self.sent_version = self.version
            self.ids += 1
            self.move_id = self.ids
            self.write(frame(2, _packb({
                "t": "move", "id": self.ids, "room": self.room, "version": self.version,
                "mid": self.ids, "move": view["moves"][0]})))
            if now >= self.measure_from:
                self.stats["moves"] += 1

    def _paced(self) -> None:
        """A paced move's time came: make it (the turn is still this seat's: nobody else
        moves meanwhile)."""
        self.waiting = False
        self.due = True
        self.changed()

    def _finish(self) -> None:
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)

    def play(self, seat: int) -> asyncio.Future[None]:
        """Move whenever it is ``seat``'s turn; resolves when the game ends or time is up."""
        self.seat = seat
        self.finished = self.loop.create_future()
        self.changed()
        return self.finished


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}

#: Seconds the connections stay open after the window closes. A pair stops moving at
#: ``stop_at``, but other rooms' moves are still in flight then, and their latencies count: had
#: every pair hung up at once, the server would be answering a thousand disconnects while it
#: answered those last moves, a storm no steady-state workload has, and their latencies would
#: measure it.
LINGER = 1.0


class Player(Protocol):
    async def request(self, kind: str, **fields: Any) -> dict[str, Any]: ...


async def next_game(a: Player, b: Player, room: str) -> str:
    """After a game in ``room``: ``a`` makes its rematch and joins it, and both leave the
    finished room as real players do, so the server may let it go. The rematch's room."""
    rematch: str = (await a.request("rematch", room=room))["room"]
    await a.request("join", room=rematch)
    await a.request("leave", room=room)
    await b.request("leave", room=room)
    return rematch


async def linger(stop_at: float) -> None:
    """Wait until ``LINGER`` seconds after ``stop_at`` (``time.perf_counter`` seconds)."""
    await asyncio.sleep(max(0.0, stop_at + LINGER - _clock()))


async def lean_pair(host: str, port: int, stats: dict[str, Any], stop_at: float,
                    measure_from: float, pace: float = 0.0, port_b: int = 0,
                    ports: tuple[int, ...] = ()) -> None:
    """Two clients in a room: play, rematch and leave the old room, until ``stop_at``;
    ``pace``: a move every so many seconds in the room (0: each as soon as it may);
    ``port_b``: the second client connects there (its latencies in ``stats["lat_b"]``);
    ``ports``: each client connects to one of them drawn at random (``port`` unused)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub(loop)
    if ports:
        port, port_b = random.choice(ports), random.choice(ports)
    a = await LeanClient.connect(hub, host, port, stats, stop_at, measure_from)
    b = await LeanClient.connect(hub, host, port_b or port, stats, stop_at, measure_from)
    if port_b:
        b.lat = stats.setdefault("lat_b", [])
    a.pace = b.pace = pace
    # One schedule for the room, its phase drawn at random: rooms started together would
    # otherwise all move at the same instants, a burst every ``pace`` seconds (a queue).
    a.slot = b.slot
    b.slot[0] = _clock() + random.random() * pace
    await a.request("hello", protocol=1, name="a")
    await b.request("hello", protocol=1, name="b")
    reply = await a.request("create", game="mantis", seats=2, options={"target": 105})
    room = reply["room"]
    # A room where nobody can move would never resolve its futures: wake everyone at the end.
    deadline = loop.time() + (stop_at - _clock())
    while _clock() < stop_at:
        a.room = b.room = room
        a.version = b.version = -1
        await b.request("join", room=room, seat=1)
        await a.request("sync", room=room)
        done = (a.play(0), b.play(1))
        await a.request("ready", room=room)
        await b.request("ready", room=room)
        timers = [loop.call_at(deadline + 1.0, c._finish) for c in (a, b)]
        await asyncio.gather(*done)
        for timer in timers:
            timer.cancel()
        a.finished = b.finished = None
        if _clock() >= stop_at:
            break
        stats["games"] += 1
        room = await next_game(a, b, room)
    await linger(stop_at)
    a.close()
    b.close()
