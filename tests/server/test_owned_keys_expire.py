"""Every key a player or a room owns expires with it, whenever it is first written: a new
player's room set (made after the hello that set the player's expiry), and a chat list first
written after its room finished (after the commit that set the room's expiry)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from redis.asyncio import Redis

from playhall import app
from playhall_client import Client

from .conftest import server_config
from .helpers import finished_against_a_bot


@asynccontextmanager
async def server_and_alice(redis_url: str, **overrides: int) -> AsyncIterator[Served]:
    """A server with these settings, and a new player on it."""
    running = await app.start(server_config(redis_url, **overrides))
    alice = await Client.connect(f"ws://127.0.0.1:{running.port}/", name="alice")
    try:
        yield Served(running.redis, running.config.key_prefix, alice)
    finally:
        await alice.close()
        await running.drain()


@dataclass
class Served:
    redis: Redis
    p: str
    alice: Client


async def test_a_new_players_room_set_expires_with_the_player(redis_url: str) -> None:
    async with server_and_alice(redis_url, player_ttl=1000) as s:  # no room set yet
        await s.alice.create("mantis", 2)  # the set is made now, after the hello
        player_ttl = await s.redis.pttl(f"{s.p}player:{{{s.alice.player}}}")
        rooms_ttl = await s.redis.pttl(f"{s.p}player:{{{s.alice.player}}}:rooms")
        assert 0 < rooms_ttl <= 1_000_000
        assert abs(rooms_ttl - player_ttl) < 5_000  # the same expiry, give or take the test


async def test_a_chat_list_begun_after_the_room_finished_expires_with_it(redis_url: str) -> None:
    async with server_and_alice(redis_url, finished_ttl=600) as s:
        room = await finished_against_a_bot(s.alice)
        assert await s.redis.exists(f"{s.p}room:{{{room.room}}}:chat") == 0  # nobody spoke yet
        await s.alice.chat(room.room, "good game")
        assert 0 < await s.redis.ttl(f"{s.p}room:{{{room.room}}}:chat") <= 600
