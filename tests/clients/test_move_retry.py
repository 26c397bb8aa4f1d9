"""The Python client sends a move again, with its move id, when the refusal says nothing about
the move (``store_failed``, ``overloaded``, ``draining``: PROTOCOL.md section 10), and not when
it is about the move. Against a scripted server over a real websocket."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection

from playhall_client import Client, ServerError

from .scripted import HELLO_OK, served

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


@contextlib.asynccontextmanager
async def in_the_room(refuser: Refuser) -> AsyncIterator[Client]:
    """A client connected to ``refuser``, once it holds the room's snapshot."""
    async with served(refuser.handle) as url:
        client = await Client.connect(url)
        try:
            await client._mirror("r1").wait(lambda m: m.version == 2)
            yield client
        finally:
            await client.close()


async def test_a_move_refused_for_no_fault_of_its_own_is_sent_again_with_its_id() -> None:
    refuser = Refuser(["store_failed", "overloaded", "draining"])
    async with in_the_room(refuser) as client:
        reply = await client.move("r1", {"type": "score"}, mid="m-1")
    assert reply["version"] == 3
    assert [m["mid"] for m in refuser.moves] == ["m-1"] * 4
    assert len({m["id"] for m in refuser.moves}) == 4


async def test_a_move_refused_for_what_it_is_is_not_sent_again() -> None:
    refuser = Refuser(["illegal_move"])
    async with in_the_room(refuser) as client:
        with pytest.raises(ServerError) as refused:
            await client.move("r1", {"type": "score"})
    assert refused.value.code == "illegal_move"
    assert len(refuser.moves) == 1
