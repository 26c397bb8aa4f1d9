"""Frames done by hand: data frames sent are exactly what the websockets library would have
sent, and frames read by the fast path give what the library's parser would have given."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.frames import Frame, Opcode

from playhall.net.websocket import WebSocket, binary_frame

from .helpers import QuietHandler


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_binary_frames_match_the_reference_framing(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False)
    assert binary_frame(payload) + payload == expected


# -- reading: whole binary frames are parsed here, everything else by the Sans-I/O core --------


class Recorder(QuietHandler):
    """A connection's handler that keeps the messages it is given."""

    def __init__(self, ws: WebSocket) -> None:
        super().__init__(ws)
        self.messages: list[bytes | str] = []

    def message_received(self, message: bytes | str) -> None:
        self.messages.append(message)


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing


HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def opened(max_size: int = 1024) -> tuple[WebSocket, Transport, Recorder]:
    handlers: list[Recorder] = []

    def on_open(ws: WebSocket) -> Recorder:
        handlers.append(Recorder(ws))
        return handlers[0]

    ws = WebSocket(on_request=lambda request: None, on_open=on_open, max_size=max_size)
    transport = Transport()
    ws.connection_made(transport)
    ws.data_received(HANDSHAKE)
    assert transport.written.startswith(b"HTTP/1.1 101")
    transport.written.clear()
    return ws, transport, handlers[0]


def client_frame(opcode: Opcode, payload: bytes, fin: bool = True) -> bytes:
    return Frame(opcode, payload, fin=fin).serialize(mask=True)


def sent_frames(data: bytes) -> list[tuple[int, bytes]]:
    """(opcode, payload) of the unmasked server frames in ``data``."""
    frames = []
    while data:
        size, start = data[1] & 0x7F, 2
        if size == 126:
            size, start = int.from_bytes(data[2:4], "big"), 4
        frames.append((data[0] & 0x0F, data[start : start + size]))
        data = data[start + size :]
    return frames


async def test_every_way_a_stream_can_be_cut_delivers_the_same_messages() -> None:
    # Whole binary frames (short and 16-bit lengths), a ping, a fragmented message and a text
    # frame between them: cut at every byte, and cut into single bytes.
    stream = b"".join(
        [
            client_frame(Opcode.BINARY, b"one"),
            client_frame(Opcode.BINARY, b"x" * 300),
            client_frame(Opcode.PING, b"hi"),
            client_frame(Opcode.BINARY, b"fr", fin=False),
            client_frame(Opcode.CONT, b"ag", fin=True),
            client_frame(Opcode.BINARY, b""),
            client_frame(Opcode.TEXT, b"tekst"),
            client_frame(Opcode.BINARY, b"last"),
        ]
    )
    expected = [b"one", b"x" * 300, b"frag", b"", "tekst", b"last"]
    cuts: list[list[bytes]] = [[stream[:i], stream[i:]] for i in range(len(stream) + 1)]
    cuts.append([stream[i : i + 1] for i in range(len(stream))])
    for pieces in cuts:
        ws, transport, handler = opened()
        for piece in pieces:
            if piece:
                ws.data_received(piece)
        assert handler.messages == expected, pieces
        assert sent_frames(bytes(transport.written)) == [(Opcode.PONG.value, b"hi")]


async def test_what_the_fast_path_leaves_is_refused_as_the_rfc_says() -> None:
    # An unmasked client frame is a protocol error (1002); one over max_size is 1009 (a 16-bit
    # length the fast path reads, then leaves to the core); frames after either are not read.
    unmasked = Frame(Opcode.BINARY, b"plain").serialize(mask=False)
    for bad, code in [(unmasked, 1002), (client_frame(Opcode.BINARY, b"y" * 2000), 1009)]:
        ws, transport, handler = opened(max_size=1024)
        ws.data_received(
            client_frame(Opcode.BINARY, b"ok") + bad + client_frame(Opcode.BINARY, b"z")
        )
        assert handler.messages == [b"ok"]
        (opcode, payload), *_ = sent_frames(bytes(transport.written))
        assert opcode == Opcode.CLOSE.value and int.from_bytes(payload[:2], "big") == code


async def test_a_handler_that_closes_mid_read_sees_what_the_core_alone_would_show() -> None:
    # Once the handler starts the closing handshake the fast path stops and hands the rest to
    # the core. Fed one byte at a time, the fast path never sees a whole frame: the core alone.
    stream = client_frame(Opcode.BINARY, b"a") + client_frame(Opcode.BINARY, b"b")
    seen = []
    for pieces in ([stream], [stream[i : i + 1] for i in range(len(stream))]):
        ws, transport, handler = opened()

        def close_on_first(
            message: bytes | str, ws: WebSocket = ws, handler: Recorder = handler
        ) -> None:
            handler.messages.append(message)
            if len(handler.messages) == 1:
                ws.close(1008, "enough")

        handler.message_received = close_on_first  # type: ignore[method-assign]
        for piece in pieces:
            ws.data_received(piece)
        seen.append((handler.messages, sent_frames(bytes(transport.written)), ws.protocol.state))
    assert seen[0] == seen[1]
    assert seen[0][1][0] == (Opcode.CLOSE.value, (1008).to_bytes(2, "big") + b"enough")


def _masked(payload: bytes, mask: bytes) -> bytes:
    """A whole, final, masked binary frame (short length) with the given mask."""
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes((0x82, 0x80 | len(payload))) + mask + body


@pytest.mark.parametrize("cut", [2, 4, 6], ids=lambda cut: f"cut after {cut} bytes")
async def test_a_frame_cut_after_its_header_is_finished_by_the_core_not_the_fast_path(
    cut: int,
) -> None:
    """The core takes a frame's header off its buffer as soon as it has it, so an empty buffer
    does not mean the core is between frames. Bytes that finish its frame must go to it even
    when they look like the start of a frame (a mask starting 0x82 here)."""
    ws, _transport, handler = opened()
    first = _masked(b"first", b"\x82\x83\x82\x83")
    second = _masked(b"second", b"\x01\x02\x03\x04")
    ws.data_received(first[:cut])
    ws.data_received(first[cut:] + second)
    assert handler.messages == [b"first", b"second"]


@pytest.mark.parametrize("cut", [0, 1, 2, 7, 11], ids=lambda cut: f"{cut} bytes with it")
async def test_frames_that_came_with_the_handshake_request_are_read_whole(cut: int) -> None:
    """A client that sends frames before the answer to its handshake: what came in the same
    read as the request went to the core, and the fast path waits until the core is between
    frames again."""
    messages: list[bytes | str] = []

    def on_open(ws: WebSocket) -> Recorder:
        handler = Recorder(ws)
        handler.messages = messages
        return handler

    ws = WebSocket(on_request=lambda request: None, on_open=on_open, max_size=1024)
    ws.connection_made(Transport())
    first = _masked(b"first", b"\x82\x83\x82\x83")
    second = _masked(b"second", b"\x82\x86\x00\x00")
    ws.data_received(HANDSHAKE + first[:cut])
    ws.data_received(first[cut:] + second)
    assert messages == [b"first", b"second"]
