"""A whole Mantis game between two real clients over real websockets, with Redis behind."""

from __future__ import annotations

import asyncio

from playhall_client import Client, RoomMirror


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
            await mirror.wait(lambda m, v=version: m.version > v, timeout)

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
