"""The expiry index in Redis: when each unfinished room is next due for the check whether it has
been left alone long enough to go (``playhall.rooms.commands.expire`` decides; the keeper's
sweeper, ``playhall.rooms.keeper``, hands due rooms to their actors)."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_text
from playhall.store.pipe import CommandPipe


class ExpiryStore:
    def __init__(self, client: aioredis.Redis, pipe: CommandPipe, keys: Keys) -> None:
        self.redis = client
        self.pipe = pipe
        self.key = keys.expiry

    async def set_due(self, room: str, when: float) -> None:
        """Check at ``when`` whether the unfinished ``room`` has been left alone long enough.
        (Through the command pipe, as the commits go. A change of the room's status writes its
        own around its commit: ``rooms.RoomStore.commit``.)"""
        await self.pipe.call(b"ZADD", self.key.encode(), repr(when).encode(), room.encode())

    async def drop_due(self, room: str) -> None:
        await self.pipe.call(b"ZREM", self.key.encode(), room.encode())

    async def due(self, now: float, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` rooms due for the check at ``now``, with when they were due."""
        found: list[Any] = await self.redis.zrangebyscore(
            self.key, "-inf", now, start=0, num=limit, withscores=True
        )
        return [(as_text(room), float(when)) for room, when in found]
