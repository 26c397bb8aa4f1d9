"""Which rooms a process lets go from memory, and when: a finished room nobody watches goes after
``finished_evict``, any other room nobody watches after ``idle_evict``; a room let go is still
in Redis and comes back, the same, when somebody asks for it."""

from __future__ import annotations

import asyncio

from playhall import app
from playhall_client import Client

from .conftest import server_config
from .helpers import play_to_the_end


async def _until_gone(running: app.Running, room: str, timeout: float = 10.0) -> None:
    """Wait for the process to let ``room`` go (its idle timer firing), or fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while room in running.rooms.rooms:
        assert loop.time() < deadline, f"room {room} still in memory after {timeout} s"
        await asyncio.sleep(0.01)


async def test_a_finished_room_nobody_watches_goes_first_and_comes_back_the_same(
    redis_url: str,
) -> None:
    running = await app.start(server_config(redis_url, finished_evict=0.05, idle_evict=600.0))
    url = f"ws://127.0.0.1:{running.port}/"
    alice = await Client.connect(url, name="alice")
    try:
        waiting = await alice.create("mantis", 2)
        room = await alice.create("mantis", 2)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        finished_view, finished_version = room.view, room.version
        assert finished_view["outcome"] is not None

        await alice.leave(waiting.room)
        await alice.leave(room.room)
        await _until_gone(running, room.room)
        # Nobody watches the waiting room either, but it is kept for idle_evict.
        assert waiting.room in running.rooms.rooms

        await alice.sync(room.room)  # loaded again from Redis
        again = alice.rooms[room.room]
        assert room.room in running.rooms.rooms
        assert again.version == finished_version
        assert again.view == finished_view
    finally:
        await alice.close()
        await running.drain()
