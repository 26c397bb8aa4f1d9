"""Data frames framed by hand are exactly what the websockets library would have sent."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from playhall.net.websocket import binary_frame


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_binary_frames_match_the_reference_framing(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False)
    assert binary_frame(payload) + payload == expected
