"""The keeper's lease renewal against a real Redis: a renewal Redis failed for some rooms (on a
Cluster, the primary of their slot being replaced) is tried again soon, not a third of the
lease later, so their leases do not run out between the promotion and the next round."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from playhall.counters import Counters
from playhall.lobby import Lobby
from playhall.net.replies import ReplyRouter
from playhall.rooms.keeper import RENEW_AGAIN_AFTER, Keeper
from playhall.rooms.manager import RoomManager
from playhall.store import scripts
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store

from .conftest import server_config
from .test_room_loading import started_room
from .test_store_commit import CountingPipe

ROOM = "renewAgain1"
#: A third of it, 1.5 s, is the keeper's usual wait between renewals.
LEASE_MS = 4500


class FirstRenewalFails(CountingPipe):
    """A pipe whose first renewal of ``ROOM``'s lease fails as a lost connection does; the
    loop time of every renewal of it is kept."""

    def __init__(self, pipe: Any, lease_key: bytes) -> None:
        super().__init__(pipe)
        self.lease_key = lease_key
        self.renewals: list[float] = []

    async def call_encoded(self, *command: bytes) -> Any:
        if scripts.RENEW.by_sha in command and any(self.lease_key in p for p in command):
            self.renewals.append(asyncio.get_running_loop().time())
            if len(self.renewals) == 1:
                raise RedisConnectionError("the node is away")
        return await super().call_encoded(*command)


@pytest.fixture
async def manager(redis_url: str) -> AsyncIterator[tuple[RoomManager, FirstRenewalFails]]:
    config = server_config(redis_url, lease_ms=LEASE_MS)
    client = aioredis.Redis.from_url(redis_url)
    pipe = FirstRenewalFails(RedisPipe(redis_url), f"{config.key_prefix}lease:{{{ROOM}}}".encode())
    store = Store(client, pipe, config.key_prefix)
    pipe.pipe.preamble = pipe.preamble  # the scripts loaded first, as the store's own pipe has
    rooms = RoomManager(store, config, Lobby(store), ReplyRouter(Counters()))
    yield rooms, pipe
    await rooms.close()
    store.close()
    await client.aclose()


async def test_a_renewal_redis_failed_is_tried_again_soon_and_the_room_kept(
    manager: tuple[RoomManager, FirstRenewalFails],
) -> None:
    rooms, pipe = manager
    await started_room(rooms, ROOM)
    keeper = Keeper(rooms)
    keeper.start()
    try:
        async with asyncio.timeout(20):
            while len(pipe.renewals) < 3:
                await asyncio.sleep(0.05)
    finally:
        await keeper.stop()
    usual = LEASE_MS / 3000
    failed, again, next_one = pipe.renewals[:3]
    assert again - failed < usual / 2  # tried again after RENEW_AGAIN_AFTER, not `usual`
    assert again - failed >= RENEW_AGAIN_AFTER
    assert next_one - again >= usual  # renewed: back to the usual pace
    assert ROOM in rooms.rooms  # its lease never lost


async def test_stop_returns_once_the_keepers_loops_have_ended(
    manager: tuple[RoomManager, FirstRenewalFails],
) -> None:
    """A drain goes on to close the rooms only when no renewal, restore or sweep of the keeper
    is still running beside it."""
    rooms, pipe = manager
    await started_room(rooms, ROOM)
    before = asyncio.all_tasks()
    keeper = Keeper(rooms)
    keeper.start()
    loops = asyncio.all_tasks() - before
    assert len(loops) == 3
    async with asyncio.timeout(20):
        while not pipe.renewals:  # the loops under way
            await asyncio.sleep(0.01)
    await keeper.stop()
    assert all(task.done() for task in loops)
