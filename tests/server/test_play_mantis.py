"""A whole Mantis game between two real clients over real websockets, with Redis behind."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from websockets.asyncio.client import connect

from playhall_client import Client, RoomMirror

from .helpers import newer_than


async def play_until_over(players: list[tuple[Client, RoomMirror]], timeout: float = 60) -> int:
    """Each player moves (first legal move) whenever it is their turn; returns moves made."""
    moves = 0

    async def run(client: Client, mirror: RoomMirror) -> None:
        nonlocal moves
        while True:
            await mirror.wait(
                lambda m: m.view.get("status") == "finished" or bool(m.view.get("moves")), timeout
            )
            if mirror.view["status"] == "finished":
                return
            version = mirror.version
            await client.move(mirror.room, mirror.view["moves"][0])
            moves += 1
            await mirror.wait(newer_than(version), timeout)

    await asyncio.gather(*(run(c, m) for c, m in players))
    return moves


async def test_two_clients_play_a_whole_game(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        room_a = await alice.create("mantis", 2)
        assert room_a.view["seats"][0]["name"] == "alice"
        room_b = await bob.join(room_a.room)
        assert room_b.seat == 1
        await alice.ready(room_a.room)
        await bob.ready(room_a.room)
        await room_a.wait(lambda m: m.view["status"] == "playing")
        moves = await play_until_over([(alice, room_a), (bob, room_b)])
        await room_a.wait(lambda m: m.version == room_b.version and m.view["status"] == "finished")
        await room_b.wait(lambda m: m.version == room_a.version)
        assert moves > 0
        assert room_a.view["outcome"] == room_b.view["outcome"]
        assert room_a.view["outcome"]["winners"]
        # Both mirrors, kept by diffs alone, equal fresh snapshots.
        for client, mirror in ((alice, room_a), (bob, room_b)):
            kept = mirror.view
            mirror.version = -1
            await client.sync(mirror.room)
            await mirror.wait(lambda m: m.version >= 0)
            assert mirror.view == kept
    finally:
        await alice.close()
        await bob.close()


async def test_a_moves_reply_follows_the_update_it_caused(url: str) -> None:
    """The mover hears of its move's effect before the move's ``ok``: a client that waits for
    the reply may read its mirror at once (the server sends both in one write, in this order)."""
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        # The bot moves at once when it is first; then it waits for alice.
        await room.wait(lambda m: m.view["status"] == "playing" and m.my_turn)
        token = alice.token
    finally:
        await alice.close()
    async with connect(url, compression=None) as ws:

        async def request(message: dict[str, object]) -> list[dict[str, Any]]:
            """The frames received up to and including the reply to ``message``."""
            await ws.send(msgpack.packb(message))
            frames = []
            while True:
                frame = msgpack.unpackb(await ws.recv())
                frames.append(frame)
                if frame.get("re") == message["id"]:
                    return frames

        await request({"t": "hello", "id": 1, "protocol": 1, "token": token})
        synced = await request({"t": "sync", "id": 2, "room": room.room})
        snapshot = next(f for f in synced if f["t"] == "snapshot")
        version = snapshot["version"]
        move = snapshot["view"]["moves"][0]
        frames = await request(
            {"t": "move", "id": 3, "room": room.room, "version": version, "mid": "m", "move": move}
        )
        kinds = [(f["t"], f.get("to", f.get("version"))) for f in frames]
        assert kinds == [("update", version + 1), ("ok", version + 1)]
