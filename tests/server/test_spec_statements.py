"""PROTOCOL.md's statements about what the server does, checked on the wire against a real
server: request ids out of range, which refused moves carry ``version``, the creator's bots,
and the order and content of a catch-up."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import ClientConnection, connect

from playhall_client import Client, ServerError

from .helpers import started_table


class Raw:
    """One websocket spoken to by hand: every message a client sends and receives, unfiltered."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(msgpack.packb(message))

    async def until_reply(self, rid: int | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The pushes received before the reply to ``rid``, and the reply."""
        pushes: list[dict[str, Any]] = []
        while True:
            message = msgpack.unpackb(await asyncio.wait_for(self.ws.recv(), 10))
            if "re" in message and message["re"] == rid:
                return pushes, message
            pushes.append(message)

    async def request(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        await self.send(message)
        return await self.until_reply(message.get("id"))


async def test_ids_outside_the_range_get_re_nil(url: str) -> None:
    async with connect(url) as ws:
        raw = Raw(ws)
        await raw.request({"t": "hello", "id": 1, "protocol": [1]})
        for rid in (-1, 2**53, 2**63):
            await raw.send({"t": "ping", "id": rid})
            _, reply = await raw.until_reply(None)
            assert reply["t"] == "error" and reply["code"] == "bad_message"
        # The largest id in range is echoed.
        _, reply = await raw.request({"t": "ping", "id": 2**53 - 1})
        assert reply["t"] == "ok" and reply["re"] == 2**53 - 1


async def test_which_refused_moves_carry_the_rooms_version(url: str) -> None:
    table = await started_table(url)
    async with connect(url) as ws:
        raw = Raw(ws)
        await raw.request({"t": "hello", "id": 1, "protocol": [1], "name": "stranger"})
        version = table.mirrors[0].version
        move = {"t": "move", "room": table.room, "version": version, "mid": "m",
                "move": {"type": "score"}}
        # Refusals before the room looks at the move: no version.
        cases = [
            ({**move, "id": 2, "room": "no-such-room"}, "no_such_room"),
            ({**move, "id": 3}, "not_seated"),
            ({**move, "id": 4, "version": "5"}, "bad_message"),
        ]
        for request, code in cases:
            _, reply = await raw.request(request)
            assert reply["code"] == code and "version" not in reply, reply
    # Refusals of a seated player's move by the room or the game: with the version.
    mover = table.mover()
    other = table.clients[1 - mover]
    for fields, code in (({"version": version + 5}, "stale"), ({}, "not_your_turn")):
        sent: dict[str, Any] = {"version": version, **fields}
        with pytest.raises(ServerError) as err:
            await other.request("move", room=table.room, mid="x", move={"type": "score"}, **sent)
        assert err.value.code == code and err.value.reply["version"] == version
    await table.close()


async def test_the_creator_may_seat_bots_without_a_seat_and_nobody_else_may(url: str) -> None:
    creator = await Client.connect(url, name="host")
    stranger = await Client.connect(url, name="stranger")
    try:
        room = (await creator.create("mantis", 2, sit=False)).room
        await stranger.join(room, watch=True)
        with pytest.raises(ServerError) as err:
            await stranger.add_bot(room, 0)
        assert err.value.code == "not_seated"
        await creator.add_bot(room, 0)
        await creator.add_bot(room, 1)  # an all-bot room: it starts by itself
        mirror = creator.rooms[room]
        await mirror.wait(lambda m: m.view["status"] != "waiting")
        assert mirror.view["you"] is None and all(s["bot"] for s in mirror.view["seats"])
    finally:
        await creator.close()
        await stranger.close()


async def test_catching_up_replays_the_live_frames_with_events_then_presence(url: str) -> None:
    table = await started_table(url)
    alice, bob = table.clients
    a, b = table.mirrors
    # Play until it is Bob's turn, then Alice's connection goes away.
    while b.view["to_act"] != [1]:
        mover = table.mover()
        await table.clients[mover].move(table.room, table.mirrors[mover].view["moves"][0])
        await a.wait(lambda m: m.version == b.version)
    have, token = a.version, alice.token
    await alice.close()
    await b.wait(lambda m: m.presence == [False, True])
    seen = b.version
    await bob.move(table.room, b.view["moves"][0])
    await b.wait(lambda m: m.version > seen)
    async with connect(url) as ws:
        raw = Raw(ws)
        await raw.request({"t": "hello", "id": 1, "protocol": [1], "token": token})
        pushes, reply = await raw.request({"t": "sync", "id": 2, "room": table.room,
                                           "version": have})
    assert reply["caught_up"] == "diffs" and reply["version"] == b.version
    updates = [p for p in pushes if p["t"] == "update"]
    assert [(u["from"], u["to"]) for u in updates] == [
        (v, v + 1) for v in range(have, b.version)]
    assert all(u["events"] for u in updates), "catch-up updates carry their events"
    # The presence change her arrival made (sent to every viewer) may come first; the
    # presence after the replayed frames is last.
    assert {p["t"] for p in pushes} == {"update", "presence"}
    assert pushes[-1] == {"t": "presence", "room": table.room, "presence": [True, True],
                          "watching": 0, "watchers": [], "stand_in_at": [None, None]}
    await bob.close()


async def test_players_are_told_how_many_people_watch(url: str) -> None:
    table = await started_table(url)
    a = table.mirrors[0]
    watcher = await Client.connect(url, name="watcher")
    try:
        await watcher.join(table.room, watch=True)
        await a.wait(lambda m: m.watching == 1)
        assert watcher.rooms[table.room].watching == 1
        await watcher.leave(table.room)
        await a.wait(lambda m: m.watching == 0)
    finally:
        await watcher.close()
        await table.close()
