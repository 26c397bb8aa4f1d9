"""Every field of every request, given a value of every wrong shape, gets exactly one reply,
and the connection goes on answering: a bad field is refused, never a dropped connection, a
lost frame or a second answer (the move's fast path looks the room up, so it must validate the
message first)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest

from playhall import app, log
from playhall.config import Config
from playhall.net.session import Request, Session
from playhall_client import Client
from playhall_protocol.messages import CLIENT_MESSAGES

from .conftest import server_config
from .helpers import Table, started_table

#: An array, a map, bytes, nil, a float and an int past every range (msgpack's largest).
WRONG: list[Any] = [[1, 2], {"a": 1}, b"\x00\x01", None, 1.5, 2**64 - 1]


def base_message(kind: str, room: str, version: int) -> dict[str, Any]:
    """A well-formed message of ``kind`` with every field it may carry."""
    values: dict[str, Any] = {
        "protocol": [1],
        "token": "abc.def",
        "name": "someone",
        "game": "mantis",
        "seats": 2,
        "options": {},
        "private": False,
        "sit": True,
        "room": room,
        "code": "ABCDEF",
        "seat": 1,
        "watch": True,
        "ready": True,
        "text": "hello",
        "version": version,
        "mid": "m-1",
        "limit": 10,
        "move": {"type": "steal", "target": 1},
    }
    by_kind: dict[type, Any] = {str: "x", int: 1, bool: True, dict: {}, list: [1], bytes: b"x"}
    fields = {f.name: values.get(f.name, by_kind[f.kinds[0]]) for f in CLIENT_MESSAGES[kind]}
    return {"t": kind, "id": 10**9, **fields}


def cases() -> list[tuple[str, str]]:
    return [
        (kind, name)
        for kind, fields in CLIENT_MESSAGES.items()
        for name in ["t", "id", *(f.name for f in fields)]
    ]


@pytest.fixture
async def table(redis_url: str) -> AsyncIterator[Table]:
    # A rate limit out of the way: this test sends hundreds of messages in a few seconds.
    running = await app.start(server_config(redis_url, rate=1e6, burst=10**6))
    t = await started_table(f"ws://127.0.0.1:{running.port}/")
    yield t
    await t.close()
    await running.drain()


async def one_reply_then_ping(client: Client, frame: bytes) -> list[dict[str, Any]]:
    """Send ``frame``, then a ``ping``; the replies that came between (pushes aside)."""
    while not client.pushes.empty():
        client.pushes.get_nowait()
    await client.send_raw(frame)
    pong = await client.request("ping", retry=False)
    assert pong["t"] == "ok"
    replies = []
    while not client.pushes.empty():
        message = client.pushes.get_nowait()
        if message.get("t") in ("ok", "error"):
            replies.append(message)
    return replies


async def test_every_field_of_every_request_in_every_wrong_shape(table: Table) -> None:
    client = table.clients[1]
    reconnects = client.reconnects
    for kind, name in cases():
        for wrong in WRONG:
            message = base_message(kind, table.room, table.mirrors[1].version)
            message[name] = wrong
            replies = await one_reply_then_ping(client, msgpack.packb(message))
            assert len(replies) == 1, (kind, name, wrong, replies)
            reply = replies[0]
            # Refused as bad input, or (a wrong shape that is a right one here, such as an
            # array of protocol versions) answered as that request would be: never internal.
            assert reply.get("code") != "internal", (kind, name, wrong, reply)
    assert client.reconnects == reconnects  # the connection was never dropped


class _Socket:
    remote_address = "test"
    is_paused = False

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, message: bytes) -> None:
        self.sent.append(message)

    def close(self, code: int, reason: str) -> None:
        pass

    def abort(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


async def test_a_fast_path_that_raises_leaves_the_message_to_the_connection_task() -> None:
    """An exception in the read callback's fast path must not escape into the transport (which
    would abort the connection): the message goes to the connection's task, which answers it."""

    def broken(session: Session, request: Request) -> bool:
        raise TypeError("a bug in the fast path")

    session = Session(_Socket(), Config(), lambda s, r: None, broken)
    session.log = log.get("test")
    frame = msgpack.packb({"t": "move", "id": 3})
    session.message_received(frame)
    request = await session.next_request()
    assert request is not None and request.message == {"t": "move", "id": 3}
