"""The websocket connection layer over real sockets: messages in fragments, the keepalive that
drops a peer which stopped answering, the handshake deadline, and plain HTTP answers."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator
from http import HTTPStatus

import msgpack
import pytest
from websockets.asyncio.client import connect
from websockets.http11 import Request

from playhall.net.websocket import WebSocket

from .helpers import QuietHandler


class Echo(QuietHandler):
    """Sends every binary message back."""

    def message_received(self, message: bytes | str) -> None:
        self.ws.send(message if isinstance(message, bytes) else message.encode())


def answer(request: Request) -> tuple[HTTPStatus, str] | None:
    return (HTTPStatus.OK, "plain\n") if request.path == "/plain" else None


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    def factory() -> WebSocket:
        return WebSocket(
            on_request=answer,
            on_open=Echo,
            max_size=1024,
            ping_interval=0.2,
            ping_timeout=0.2,
            open_timeout=0.3,
            close_timeout=0.3,
        )

    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    yield int(server.sockets[0].getsockname()[1])
    server.close()


async def handshake(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    status = await reader.readuntil(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 101")
    return reader, writer


async def test_a_message_in_fragments_arrives_whole(url: str) -> None:
    async with connect(url, compression=None) as ws:
        hello = msgpack.packb({"t": "hello", "id": 1, "protocol": 1, "name": "frag"})
        await ws.send([hello[:5], hello[5:9], hello[9:]])  # three frames, one message
        reply = msgpack.unpackb(await ws.recv())
        assert reply["t"] == "ok" and reply["re"] == 1 and reply["name"] == "frag"


async def test_a_peer_that_stops_answering_pings_is_dropped(echo_port: int) -> None:
    reader, writer = await handshake(echo_port)
    try:
        # A ping arrives (opcode 9, unmasked from the server); it goes unanswered, and the server
        # fails the connection with 1011 and closes the socket.
        first = await asyncio.wait_for(reader.readexactly(2), 2)
        assert first[0] == 0x89
        await reader.readexactly(first[1] & 0x7F)
        close = await asyncio.wait_for(reader.readexactly(2), 2)
        assert close[0] == 0x88
        body = await reader.readexactly(close[1] & 0x7F)
        assert int.from_bytes(body[:2], "big") == 1011 and b"keepalive" in body
        assert await asyncio.wait_for(reader.read(), 2) == b""  # then the socket is closed
    finally:
        writer.close()


async def test_a_peer_that_answers_pings_stays(echo_port: int) -> None:
    async with connect(f"ws://127.0.0.1:{echo_port}/", ping_interval=None) as ws:
        # The client library answers the server's pings on its own; several intervals pass.
        await asyncio.sleep(1.0)
        await ws.send(b"still here")
        assert await ws.recv() == b"still here"


async def test_a_connection_that_never_sends_its_handshake_is_dropped(echo_port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", echo_port)
    try:
        assert await asyncio.wait_for(reader.read(), 2) == b""
    finally:
        writer.close()


async def test_plain_http_gets_a_plain_answer(echo_port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", echo_port)
    try:
        writer.write(b"GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        response = await asyncio.wait_for(reader.read(), 2)
        assert response.startswith(b"HTTP/1.1 200") and response.endswith(b"plain\n")
    finally:
        writer.close()


async def test_an_oversized_message_closes_with_1009(echo_port: int) -> None:
    async with connect(f"ws://127.0.0.1:{echo_port}/", max_size=None) as ws:
        await ws.send(b"x" * 2000)
        await ws.wait_closed()
        assert ws.close_code == 1009
