"""Helpers for server tests: a seated two-player Mantis room, playing a game out against bots,
reading pushed messages, a websocket handler to build test handlers on, a room as Redis
holds it, a process's /healthz, a websocket that never answers its closing, and what a bus's
handlers heard."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from playhall import app
from playhall.catalog import get_game
from playhall.net.websocket import WebSocket
from playhall.rooms.record import RoomRecord
from playhall.rooms.replay import replay
from playhall.store.connect import parse_target
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store
from playhall.store.rooms import Stored
from playhall_client import Client, RoomMirror, ServerError

from .conftest import server_config
from .metrics_scrape import http_get


class QuietHandler:
    """A connection's handler that ignores everything; tests override what they watch."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws

    def message_received(self, message: bytes | str) -> None:
        pass

    def paused(self) -> None:
        pass

    def resumed(self) -> None:
        pass

    def closed(self) -> None:
        pass


@dataclass
class Table:
    clients: list[Client]
    mirrors: list[RoomMirror]

    @property
    def room(self) -> str:
        return self.mirrors[0].room

    def mover(self) -> int:
        """Index of the seat to move."""
        return self.mirrors[0].view["to_act"][0]

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def started_table(
    url: str, game: str = "mantis", seats: int = 2, options: dict[str, Any] | None = None
) -> Table:
    clients = [await Client.connect(url, name=f"p{i}") for i in range(seats)]
    first = await clients[0].create(game, seats, options=options)
    mirrors = [first] + [await c.join(first.room) for c in clients[1:]]
    for client in clients:
        await client.ready(first.room)
    for mirror in mirrors:
        await mirror.wait(lambda m: m.view["status"] == "playing")
    return Table(clients, mirrors)


async def next_push(client: Client, kind: str, timeout: float = 10) -> dict[str, Any]:
    """The next pushed message (or unrequested reply) of type ``kind``."""
    while True:
        message = await asyncio.wait_for(client.pushes.get(), timeout)
        if message.get("t") == kind:
            return message


def newer_than(version: int) -> Callable[[RoomMirror], bool]:
    """A :meth:`RoomMirror.wait` condition: the mirror is past ``version`` (the value given
    now, not the one it names when the condition is checked)."""
    return lambda mirror: mirror.version > version


def at_least(version: int) -> Callable[[RoomMirror], bool]:
    """A :meth:`RoomMirror.wait` condition: the mirror is at ``version`` or past it."""
    return lambda mirror: mirror.version >= version


def redis_client(url: str) -> aioredis.Redis:
    """A redis-py client for ``url``: a ``RedisCluster`` for a ``redis+cluster://`` URL (its
    first seed is enough to find the rest), else one Redis's."""
    target = parse_target(url)
    if target.cluster:
        return cast(aioredis.Redis, RedisCluster.from_url(target.seeds[0]))
    return aioredis.Redis.from_url(url)


async def stored_room(redis_url: str, prefix: str, room: str) -> tuple[Stored, RoomRecord]:
    """The room as Redis holds it (its last checkpoint and the log since) and the record a
    server loading it would make of that (the checkpoint with the log replayed)."""
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url), prefix)
    try:
        stored = await store.rooms.load(room)
    finally:
        store.close()
        await client.aclose()
    assert stored is not None, f"no room {room} in Redis"
    record = RoomRecord.unpack(stored.record)
    game = get_game(record.game)
    assert game is not None
    return stored, replay(record, game, stored.since)


async def until(condition: Callable[[], bool], timeout: float = 20) -> None:
    """Wait until ``condition()`` holds: it reads a server's own counts, which nothing
    announces."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def wait_for_redis(condition: Callable[[], Awaitable[bool]], timeout: float = 30) -> None:
    """Wait until ``condition()`` holds, asking Redis again and again (the condition is about
    what Redis holds, which no push announces)."""
    async with asyncio.timeout(timeout):
        while not await condition():
            await asyncio.sleep(0.05)


async def finished_against_a_bot(client: Client) -> RoomMirror:
    """A two-seat Mantis room of ``client``'s, played to the end against a server bot."""
    room = await client.create("mantis", 2)
    await client.add_bot(room.room, 1)
    await client.ready(room.room)
    await play_to_the_end(client, room)
    return room


async def at_a_bots_turn(client: Client) -> RoomMirror:
    """A two-seat Mantis room of ``client``'s against a server bot, in play, at the bot's turn
    (where it stays while the server's ``bot_delay`` is long): a room in the active set."""
    room = await client.create("mantis", 2)
    await client.add_bot(room.room, 1)
    await client.ready(room.room)
    await room.wait(lambda m: m.view["status"] == "playing")
    if room.my_turn:
        await client.move(room.room, room.view["moves"][0])
    await room.wait(lambda m: not m.my_turn)
    return room


async def play_to_the_end(client: Client, room: RoomMirror, timeout: float = 30) -> None:
    """Make ``client``'s first legal move whenever it is its turn, until ``room`` is finished
    (its other seats being the server's bots)."""
    while room.view["status"] != "finished":
        await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, timeout)
        if room.my_turn:
            await client.move(room.room, room.view["moves"][0])


@contextlib.asynccontextmanager
async def server_with_player(
    redis_url: str, **settings: Any
) -> AsyncIterator[tuple[app.Running, Client]]:
    """A server with these settings (beside the tests' own) and one player connected to it."""
    running = await app.start(server_config(redis_url, **settings))
    try:
        player = await Client.connect(f"ws://127.0.0.1:{running.port}/")
        try:
            yield running, player
        finally:
            await player.close()
    finally:
        await running.drain()


async def too_many_rooms(make: Awaitable[Any], why: str) -> ServerError:
    """``make`` (a create or a rematch) is refused ``too_many_rooms`` for ``why`` (words of
    the reason: "waiting", "a minute", ...)."""
    with pytest.raises(ServerError) as refused:
        await make
    assert refused.value.code == "too_many_rooms" and why in refused.value.reason
    return refused.value


async def healthz(port: int) -> tuple[int, str]:
    """``GET /healthz`` of the process on ``port``: the status and the body, stripped."""
    status, _, body = await http_get(port, "/healthz")
    return status, body.strip()


async def silent_websocket(port: int) -> asyncio.StreamWriter:
    """A websocket, opened by hand, that never answers the server's closing handshake: a drain
    waits for it (``Endpoint.close_all``, 5 s), which keeps the process draining that long."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
         f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
         "\r\n").encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101"), head
    return writer


@dataclass
class Heard:
    """What a bus's handlers were handed, by channel, and its ``on_reconnect`` calls."""

    messages: dict[bytes, list[bytes]] = field(default_factory=lambda: defaultdict(list))
    reconnects: int = 0

    def handler(self, channel: bytes) -> Callable[[bytes], None]:
        return lambda data: self.messages[channel].append(data)

    def reconnected(self) -> None:
        self.reconnects += 1

    async def wait(self, condition: Callable[[], bool], timeout: float = 20) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.01)  # polling what the bus's connections heard


class Recorder:
    """A logger that keeps what it is told, by level, to stand for a module's ``logger``
    (monkeypatched): the tests' own log level (error) drops warnings before structlog's
    processors, or its ``capture_logs``, see them."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def bind(self, **fields: Any) -> Recorder:
        return self  # (what is bound is not kept)

    def __getattr__(self, level: str) -> Callable[..., None]:
        def record(event: str, **fields: Any) -> None:
            self.lines.append((level, event, fields))
        return record

    def events(self, event: str) -> list[dict[str, Any]]:
        """The fields of every line of ``event``."""
        return [fields for _, said, fields in self.lines if said == event]
