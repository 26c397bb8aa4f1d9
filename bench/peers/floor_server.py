"""The duel on a floor of Playhall's own parts (bench/peers/run.py, systems ``floor`` and
``floor-redis``): the least a server built on them does per move, to tell how much of a Playhall
move's cost is those parts and how much is the rest of its work.

The parts: Playhall's websocket layer (``playhall.net.websocket``: its fast path for whole
binary frames over websockets' Sans-I/O core, the frames of a loop pass written together), on
uvloop, and for ``floor-redis`` its command pipe to Redis (``playhall.store.pipe``: a loop
pass's commands in one write, each reply handed to its callback as hiredis parses it). Nothing
else: the state is a turn flag and a count, as the peers' (colyseus_server.js); no game, views,
protocol, sessions, limits, logs or metrics. A player connects to ``/<room>/<seat>``; a move is
any message; the update, sent to both seats, is ``<turn> <count>`` in ASCII. A move from
the seat not to move is ignored. With a Redis URL, each move is appended to its room's list in
Redis (``RPUSH floor:<room>``) and the update goes out once Redis has answered: stored before
anyone sees it, as Playhall's moves are.

    python floor_server.py PORT [REDIS_URL]

It prints the port it listens on (PORT 0: one the system picked) once it listens. Written for
the benchmark alone: it trusts its clients and bounds nothing.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import uvloop
from websockets.http11 import Request

from playhall.net.websocket import WebSocket, WriteBatch
from playhall.store.pipe import RedisPipe


class Room:
    def __init__(self, key: bytes) -> None:
        self.key = key
        self.seats: list[WebSocket | None] = [None, None]
        self.turn = 0
        self.count = 0

    def moved(self, _reply: Any = None, failure: BaseException | None = None) -> None:
        """The update, to both seats (once Redis stored the move, given a pipe)."""
        if failure is not None:
            raise failure  # the benchmark's Redis is its own: a failure is a bug here
        update = b"%d %d" % (self.turn, self.count)
        for ws in self.seats:
            if ws is not None:
                ws.send(update)


class Player:
    """One connection: its seat, taken at the handshake, and its moves (a ``Handler``)."""

    def __init__(self, rooms: dict[str, Room], pipe: RedisPipe | None,
                 writes: WriteBatch) -> None:
        self.rooms = rooms
        self.pipe = pipe
        self.room: Room | None = None
        self.seat = -1
        self.ws = WebSocket(on_request=self.seated, on_open=lambda _: self, max_size=1024,
                            batch=writes)

    def seated(self, request: Request) -> None:
        """Accepts every handshake, to the seat its path names."""
        room_id, seat = request.path.strip("/").split("/")
        self.room = self.rooms.get(room_id) or self.rooms.setdefault(
            room_id, Room(b"floor:" + room_id.encode()))
        self.seat = int(seat)
        self.room.seats[self.seat] = self.ws

    def message_received(self, message: bytes | str) -> None:
        room = self.room
        if room is None or room.turn != self.seat:
            return  # out of turn: ignored
        room.turn = 1 - room.turn
        room.count += 1
        if self.pipe is None:
            room.moved()
        else:
            self.pipe.call_then(room.moved, b"RPUSH", room.key, b"%d" % room.count)

    def paused(self) -> None:
        pass

    def resumed(self) -> None:
        pass

    def closed(self) -> None:
        if self.room is not None:
            self.room.seats[self.seat] = None


async def serve(port: int, redis_url: str | None) -> None:
    pipe = RedisPipe(redis_url) if redis_url is not None else None
    if pipe is not None:
        await pipe.connected()
    rooms: dict[str, Room] = {}
    writes = WriteBatch()
    server = await asyncio.get_running_loop().create_server(
        lambda: Player(rooms, pipe, writes).ws, "127.0.0.1", port)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(serve(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
