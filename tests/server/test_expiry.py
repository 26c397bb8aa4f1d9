"""What Redis forgets, and when: a finished room's fence counter and join code go with it; a
player lives ``player_ttl`` after their last hello; a player's room list forgets expired rooms."""

from __future__ import annotations

from playhall import app
from playhall_client import Client

from .conftest import server_config
from .helpers import play_to_the_end


async def test_a_finished_private_room_takes_its_code_and_fence_with_it(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, finished_ttl=600))
    url = f"ws://127.0.0.1:{running.port}/"
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2, private=True)
        code = room.view["code"]
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        redis, p = running.redis, running.config.key_prefix
        assert await redis.ttl(f"{p}code:{code}") == -1  # kept while the room lives
        assert await redis.ttl(f"{p}fence:{room.room}") == -1
        await play_to_the_end(alice, room)
        for key in (f"room:{room.room}", f"room:{room.room}:log", f"fence:{room.room}"):
            assert 0 < await redis.ttl(p + key) <= 600, key
        assert 0 < await redis.ttl(f"{p}code:{code}") <= 600
    finally:
        await alice.close()
        await running.drain()


async def test_a_player_is_kept_player_ttl_after_each_hello(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, player_ttl=1000))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    try:
        await alice.create("mantis", 2)  # so the room set exists
        assert 0 < await redis.ttl(f"{p}player:{alice.player}") <= 1000
        await redis.expire(f"{p}player:{alice.player}", 10)
        token = alice.token
    finally:
        await alice.close()
    again = await Client.connect(url, token=token)
    try:
        assert again.player == alice.player  # the token still works, and the clock restarted
        assert 10 < await redis.ttl(f"{p}player:{alice.player}") <= 1000
        assert 0 < await redis.ttl(f"{p}player:{alice.player}:rooms") <= 1000
    finally:
        await again.close()
        await running.drain()


async def test_hello_forgets_rooms_that_expired(redis_url: str) -> None:
    running = await app.start(server_config(redis_url))
    url = f"ws://127.0.0.1:{running.port}/"
    redis, p = running.redis, running.config.key_prefix
    alice = await Client.connect(url, name="alice")
    try:
        kept = await alice.create("mantis", 2)
        gone = await alice.create("mantis", 2)
        token = alice.token
    finally:
        await alice.close()
    await redis.delete(f"{p}room:{gone.room}")  # as its expiry would
    again = await Client.connect(url, token=token)
    try:
        assert again.welcome["rooms"] == [kept.room]
        members = await redis.smembers(f"{p}player:{alice.player}:rooms")
        assert {m.decode() for m in members} == {kept.room}
    finally:
        await again.close()
        await running.drain()
