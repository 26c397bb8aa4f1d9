"""``my_rooms`` over a real server and Redis: a player's own rooms with the game, the people, the
status and whom each waits for, private rooms included; right for a room this process holds
and for one it does not (read from the checkpoint and the log, without loading the room)."""

from __future__ import annotations

from playhall import app
from playhall_client import Client

from .helpers import at_least, finished_against_a_bot


async def _wait_gone(server: app.Running, room: str) -> None:
    """Let the room go from the process's memory, and wait until it has."""
    held = server.rooms.rooms[room]
    server.rooms.evict(held)
    await server.rooms._stopping.wait()


async def test_my_rooms_lists_a_private_game_with_whose_turn_it_is(
    server: app.Running, url: str
) -> None:
    host = await Client.connect(url, name="host")
    friend = await Client.connect(url, name="friend")
    try:
        mine = await host.create("mantis", 2, private=True)
        theirs = await friend.join(code=mine.view["code"])
        waiting = await host.my_rooms()
        assert [(r["room"], r["status"], r["private"], r["you"]) for r in waiting] == [
            (mine.room, "waiting", True, 0)
        ]
        await host.ready(mine.room)
        await friend.ready(mine.room)
        await mine.wait(lambda m: m.view["status"] == "playing")
        # A few moves (fewer than a checkpoint's worth), so the stored record lags the room.
        for _ in range(3):
            seat = mine.view["to_act"][0]
            mover, mirror = (host, mine) if seat == 0 else (friend, theirs)
            await mirror.wait(lambda m: m.version >= mine.version)
            reply = await mover.move(mine.room, mirror.view["moves"][0])
            await mine.wait(at_least(reply["version"]))
        [entry] = await friend.my_rooms()
        assert entry["room"] == mine.room and entry["game"] == "mantis"
        assert entry["title"] == "Mantis" and entry["private"] is True
        assert entry["players"] == ["host", "friend"] and entry["you"] == 1
        assert entry["status"] == "playing"
        assert entry["to_act"] == mine.view["to_act"] and entry["version"] == mine.version
        # Everybody leaves; the process lets the room go; the list still says whose turn.
        await host.close()
        await friend.close()
        await _wait_gone(server, mine.room)
        assert mine.room not in server.rooms.rooms
        back = await Client.connect(url, token=friend.token)
        try:
            [entry] = await back.my_rooms()
            assert entry["to_act"] == mine.view["to_act"] and entry["version"] == mine.version
            assert mine.room not in server.rooms.rooms  # asking did not load it
        finally:
            await back.close()
    finally:
        await host.close()
        await friend.close()


async def test_finished_rooms_come_after_the_others(url: str) -> None:
    client = await Client.connect(url, name="solo")
    try:
        done = await finished_against_a_bot(client)
        open_room = await client.create("mantis", 2)
        rooms = await client.my_rooms()
        assert [r["room"] for r in rooms] == [open_room.room, done.room]
        assert [r["status"] for r in rooms] == ["waiting", "finished"]
        assert rooms[1]["to_act"] == []
        stranger = await Client.connect(url, name="stranger")
        assert await stranger.my_rooms() == []
        await stranger.close()
    finally:
        await client.close()
