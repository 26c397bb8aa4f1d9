"""Every key a player or a room owns expires with it, whenever it is first written: a new
player's room set (made after the hello that set the player's expiry), and a chat list first
written after its room finished (after the commit that set the room's expiry)."""

from __future__ import annotations

from playhall import app
from playhall_client import Client

from .conftest import server_config
from .helpers import play_to_the_end


async def test_a_new_players_room_set_expires_with_the_player(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, player_ttl=1000))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")  # a new player: no room set yet
    try:
        await alice.create("mantis", 2)  # the set is made now, after the hello
        player_ttl = await redis.pttl(f"{p}player:{alice.player}")
        rooms_ttl = await redis.pttl(f"{p}player:{alice.player}:rooms")
        assert 0 < rooms_ttl <= 1_000_000
        assert abs(rooms_ttl - player_ttl) < 5_000  # the same expiry, give or take the test
    finally:
        await alice.close()
        await running.drain()


async def test_a_chat_list_begun_after_the_room_finished_expires_with_it(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, finished_ttl=600))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        assert await redis.exists(f"{p}room:{room.room}:chat") == 0  # nobody spoke yet
        await alice.chat(room.room, "good game")
        assert 0 < await redis.ttl(f"{p}room:{room.room}:chat") <= 600
    finally:
        await alice.close()
        await running.drain()
