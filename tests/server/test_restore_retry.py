"""A room only the server drives (bots, automatic steps) is resumed by a process with another
name after its owner was SIGKILLed: the new process keeps trying it until the dead owner's
lease runs out, then loads it, and the game moves on with nobody asking for it."""

from __future__ import annotations

import asyncio
import time
import uuid

import redis.asyncio as aioredis

from playhall_client import Client

from .conftest import free_port
from .process import ServerProcess
from .redis_replies import raw

LEASE_MS = 5000


async def stored_version(client: aioredis.Redis, prefix: str, room: str) -> int:
    return int(raw(await client.hget(f"{prefix}room:{{{room}}}", "v")))


async def test_a_bots_only_room_moves_again_within_the_lease_after_its_owner_is_killed(
    redis_url: str,
) -> None:
    prefix = f"b{uuid.uuid4().hex[:8]}:"
    extra = ["--bot-delay", "0.25", "--lease-ms", str(LEASE_MS)]
    first = ServerProcess(free_port(), redis_url, prefix, "owner-a", extra)
    second = ServerProcess(free_port(), redis_url, prefix, "owner-b", extra)
    redis = aioredis.Redis.from_url(redis_url)
    try:
        await first.start()
        # Nobody plays: the creator watches, both seats are the server's bots (Mandala's bot
        # games run a hundred steps or so: far longer than this test).
        client = await Client.connect(first.url, reconnect=False)
        mirror = await client.create("mandala", 2, sit=False)
        await client.add_bot(mirror.room, 0)
        await client.add_bot(mirror.room, 1)
        await mirror.wait(lambda m: m.view["status"] == "playing" and m.version >= 6, 30)
        first.kill()
        killed = time.monotonic()
        await client.close()  # nobody will ask the new process for this room
        at_kill = await stored_version(redis, prefix, mirror.room)
        await second.start()
        # The new process is up while the dead owner's lease still holds the room.
        assert await redis.pttl(f"{prefix}lease:{{{mirror.room}}}") > 0, "started too late to tell"
        deadline = killed + LEASE_MS / 1000 + 1.0
        while await stored_version(redis, prefix, mirror.room) == at_kill:
            assert time.monotonic() < deadline, "the room did not move again in time"
            await asyncio.sleep(0.05)  # polling Redis for the change, not standing in for sync
        assert await redis.get(f"{prefix}lease:{{{mirror.room}}}") is not None
        owner = raw(await redis.get(f"{prefix}lease:{{{mirror.room}}}")).decode()
        assert owner.startswith("owner-b|")
    finally:
        await redis.aclose()
        second.terminate()
        if first.process is not None and first.process.poll() is None:
            first.terminate()
