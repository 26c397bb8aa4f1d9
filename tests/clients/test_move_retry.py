"""The Python client sends a move again, with its move id, when the refusal says nothing about
the move (``store_failed``, ``overloaded``, ``draining``: PROTOCOL.md section 10), and not when
it is about the move. Against a scripted server over a real websocket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection, serve

from playhall_client import Client, ServerError

from .test_client_reconnect import HELLO_OK

SNAPSHOT = {"t": "snapshot", "room": "r1", "version": 2, "view": {"moves": []}, "presence": []}


class Refuser:
    """Answers the hello, then refuses each move with the next of ``refusals`` and accepts the
    one after them; keeps every move it got."""

    def __init__(self, refusals: list[str]) -> None:
        self.refusals = refusals
        self.moves: list[dict[str, Any]] = []

    async def handle(self, ws: ServerConnection) -> None:
        hello = msgpack.unpackb(await ws.recv())
        await ws.send(msgpack.packb({**HELLO_OK, "re": hello["id"]}))
        await ws.send(msgpack.packb(SNAPSHOT))
        async for frame in ws:
            move = msgpack.unpackb(frame)
            if move["t"] != "move":  # (the client's own requests, e.g. a clock ping)
                await ws.send(msgpack.packb({"t": "ok", "re": move["id"], "time": 0.0}))
                continue
            self.moves.append(move)
            if len(self.moves) <= len(self.refusals):
                code = self.refusals[len(self.moves) - 1]
                await ws.send(msgpack.packb(
                    {"t": "error", "re": move["id"], "code": code, "reason": "scripted"}
                ))
            else:
                await ws.send(msgpack.packb({"t": "ok", "re": move["id"], "room": "r1",
                                             "version": 3}))


async def _served(refuser: Refuser) -> AsyncIterator[str]:
    async with serve(refuser.handle, "127.0.0.1", 0, compression=None) as server:
        yield f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


@pytest.fixture
async def retried() -> AsyncIterator[tuple[Refuser, str]]:
    refuser = Refuser(["store_failed", "overloaded", "draining"])
    async for url in _served(refuser):
        yield refuser, url


@pytest.fixture
async def illegal() -> AsyncIterator[tuple[Refuser, str]]:
    refuser = Refuser(["illegal_move"])
    async for url in _served(refuser):
        yield refuser, url


async def test_a_move_refused_for_no_fault_of_its_own_is_sent_again_with_its_id(
    retried: tuple[Refuser, str],
) -> None:
    refuser, url = retried
    client = await Client.connect(url)
    try:
        await client._mirror("r1").wait(lambda m: m.version == 2)
        reply = await client.move("r1", {"type": "score"}, mid="m-1")
        assert reply["version"] == 3
        assert [m["mid"] for m in refuser.moves] == ["m-1"] * 4
        assert len({m["id"] for m in refuser.moves}) == 4
    finally:
        await client.close()


async def test_a_move_refused_for_what_it_is_is_not_sent_again(
    illegal: tuple[Refuser, str],
) -> None:
    refuser, url = illegal
    client = await Client.connect(url)
    try:
        await client._mirror("r1").wait(lambda m: m.version == 2)
        with pytest.raises(ServerError) as refused:
            await client.move("r1", {"type": "score"})
        assert refused.value.code == "illegal_move"
        assert len(refuser.moves) == 1
    finally:
        await client.close()
