"""Client addresses an operator refuses for a time (``playhall admin refuse``), on every server
process together: one key per address, ``p refused:{<address>}``, whose value says who refused
it, why and until when, and whose TTL is the time left, so a refusal lapses by itself.

Read once per ``hello`` (:meth:`RefusedAddresses.check`), which every connection must say
before it can do anything; and, for the connections greeted before their address was refused,
by every process every third of ``lease_ms``, but only once the counter ``p refusals`` (moved on
by every refusal made or lifted) says something changed (:meth:`RefusedAddresses.stamp`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgpack
import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_bytes, as_text, scan_pattern


@dataclass(frozen=True)
class Refusal:
    """One refused address."""

    address: str
    #: When the refusal lapses (Unix seconds).
    until: float
    #: Who refused it (the operator's name) and why.
    by: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"address": self.address, "until": self.until, "by": self.by,
                "reason": self.reason}


class RefusedAddresses:
    def __init__(self, client: aioredis.Redis, keys: Keys) -> None:
        self.redis = client
        self.keys = keys

    async def refuse(
        self, address: str, seconds: float, by: str, reason: str, now: float
    ) -> Refusal:
        """Refuse ``address`` for ``seconds`` from ``now`` (a refusal already there is
        replaced: the last word counts)."""
        refusal = Refusal(address, now + seconds, by, reason)
        blob = msgpack.packb([refusal.until, by, reason])
        # (Two slots, so two writes: the refusal, then the stamp that has every process read
        # the refusals again. Each may be repeated; the stamp moving on alone costs a read.)
        await self.redis.set(
            self.keys.refused_key(address), blob, px=max(1, math.ceil(seconds * 1000))
        )
        await self.redis.incr(self.keys.refusals_key())
        return refusal

    async def lift(self, address: str) -> bool:
        """End ``address``'s refusal now; False if it had none."""
        deleted = await self.redis.delete(self.keys.refused_key(address))
        await self.redis.incr(self.keys.refusals_key())  # (as in refuse)
        return bool(deleted)

    async def stamp(self) -> int:
        """The refusals' counter: it moves on whenever a refusal is made or lifted."""
        value = await self.redis.get(self.keys.refusals_key())
        return 0 if value is None else int(value)

    async def refused_among(self, addresses: list[str]) -> set[str]:
        """Those of ``addresses`` refused now (one round trip: a read per address, each in
        its address's slot)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for address in addresses:
                pipe.get(self.keys.refused_key(address))
            blobs = await pipe.execute()
        return {a for a, blob in zip(addresses, blobs, strict=True) if blob is not None}

    async def check(self, address: str) -> Refusal | None:
        """``address``'s refusal, if it has one now."""
        blob = await self.redis.get(self.keys.refused_key(address))
        return None if blob is None else _unpack(address, as_bytes(blob))

    async def all(self, limit: int) -> list[Refusal]:
        """The refusals in force (at most ``limit``), soonest to lapse first."""
        prefix = self.keys.refused_key("").partition("{")[0]  # (the name before the tag)
        found: list[Refusal] = []
        async for key in self.redis.scan_iter(match=scan_pattern(prefix + "{"), count=500):
            name = as_text(key)
            blob = await self.redis.get(name)
            if blob is not None:
                found.append(_unpack(name[len(prefix) + 1 : -1], as_bytes(blob)))
            if len(found) >= limit:
                break
        return sorted(found, key=lambda r: r.until)


def _unpack(address: str, blob: bytes) -> Refusal:
    until, by, reason = msgpack.unpackb(blob)
    return Refusal(address, float(until), str(by), str(reason))

