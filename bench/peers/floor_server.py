"""The duel on a floor of Python (bench/peers/run.py, systems ``floor`` and ``floor-redis``):
the least a Python server built on Playhall's parts can do per move, to tell how much of
Playhall's cost is its own work and how much is the parts'.

Playhall's parts: websockets' Sans-I/O protocol (which Playhall's ``net/websocket.py`` runs)
under an asyncio protocol, on uvloop, and for ``floor-redis`` a Redis connection whose commands
of one loop pass go out in one write and whose replies hiredis parses in the read callback (as
Playhall's ``store/pipe.py``). Nothing else: the state is a turn flag and a count, as the peers'
(colyseus_server.js); no game, views, protocol, sessions, limits, logs or metrics. A player
connects to ``/<room>/<seat>``; a move is the text ``m``; the update, sent to both seats, is the
text ``<turn> <count>``. A move from the seat not to move is ignored. With a Redis URL, each
move is appended to its room's list in Redis (``RPUSH``) and the update goes out once Redis has
answered: stored before anyone sees it, as Playhall's moves are.

    python floor_server.py PORT [REDIS_URL]

Written for the benchmark alone: it trusts its clients and keeps no bound on anything.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Callable
from typing import cast
from urllib.parse import urlsplit

import hiredis
import uvloop
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol


class Pipe(asyncio.Protocol):
    """One Redis connection: the commands queued in a loop pass written together at its end,
    each reply handed to its command's callback, in order."""

    def __init__(self) -> None:
        self.reader = hiredis.Reader()
        self.queued: list[bytes] = []
        self.waiting: deque[Callable[[object], None]] = deque()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def call(self, then: Callable[[object], None], *args: bytes) -> None:
        if not self.queued:
            asyncio.get_running_loop().call_soon(self.flush)
        self.queued.append(b"*%d\r\n" % len(args)
                           + b"".join(b"$%d\r\n%s\r\n" % (len(arg), arg) for arg in args))
        self.waiting.append(then)

    def flush(self) -> None:
        assert self.transport is not None
        self.transport.write(b"".join(self.queued))
        self.queued.clear()

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            self.waiting.popleft()(reply)


class Room:
    def __init__(self, key: bytes) -> None:
        self.key = key
        self.seats: list[Player | None] = [None, None]
        self.turn = 0
        self.count = 0

    def moved(self, _reply: object = None) -> None:
        """The update, to both seats."""
        update = b"%d %d" % (self.turn, self.count)
        for player in self.seats:
            if player is not None:
                player.send(update)


class Player(asyncio.Protocol):
    def __init__(self, rooms: dict[str, Room], pipe: Pipe | None) -> None:
        self.rooms = rooms
        self.pipe = pipe
        self.protocol = ServerProtocol()
        self.transport: asyncio.Transport | None = None
        self.room: Room | None = None
        self.seat = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            if isinstance(event, Request):
                self.seated(event)
            elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                self.move()
        self.flush()

    def seated(self, request: Request) -> None:
        self.protocol.send_response(self.protocol.accept(request))
        room_id, seat = request.path.strip("/").split("/")
        self.room = self.rooms.get(room_id) or self.rooms.setdefault(
            room_id, Room(b"floor:" + room_id.encode()))
        self.seat = int(seat)
        self.room.seats[self.seat] = self

    def move(self) -> None:
        room = self.room
        if room is None or room.turn != self.seat:
            return  # out of turn: ignored
        room.turn = 1 - room.turn
        room.count += 1
        if self.pipe is None:
            room.moved()
        else:
            self.pipe.call(room.moved, b"RPUSH", room.key, b"%d" % room.count)

    def send(self, update: bytes) -> None:
        self.protocol.send_text(update)
        self.flush()

    def flush(self) -> None:
        assert self.transport is not None
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)
            else:  # the closing handshake is done
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.room is not None:
            self.room.seats[self.seat] = None


async def serve(port: int, redis_url: str | None) -> None:
    loop = asyncio.get_running_loop()
    pipe = None
    if redis_url is not None:
        where = urlsplit(redis_url)
        _, pipe = await loop.create_connection(Pipe, where.hostname or "127.0.0.1",
                                                where.port or 6379)
    rooms: dict[str, Room] = {}
    server = await loop.create_server(lambda: Player(rooms, pipe), "127.0.0.1", port)
    await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
