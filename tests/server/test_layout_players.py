"""Keys of the players, addresses, join-code tries, refusals, results and quick play as the last
release (key layout 1) named them and wrote them are moved to layout 2 (``store/layout.py``)
and read back by this release's stores, once even if the move is run again. Real Redis."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall.store.code_tries import CodeTries
from playhall.store.keys import as_text, scan_pattern
from playhall.store.layout import move_to_current
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store
from playhall.store.results import ResultsStore
from playhall.store.seeks import Claim, SeekStore

POOL = "mantis:0123456789abcdef"


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    store = Store(
        aioredis.Redis.from_url(redis_url), RedisPipe(redis_url), f"t{uuid.uuid4().hex[:8]}:"
    )
    yield store
    store.close()
    await store.redis.aclose()


async def _layout_1(redis: aioredis.Redis, p: str) -> None:
    """What the last release leaves: its names, its values."""
    now_ms = int(time.time() * 1000)
    await redis.hset(f"{p}player:p1", mapping={"name": "Ann", "th": "hash"})
    await redis.expire(f"{p}player:p1", 3600)
    await redis.sadd(f"{p}player:p1:rooms", "room1")
    await redis.sadd(f"{p}player:p1:made", "room2")
    await redis.set(f"{p}player:p1:created", 2, ex=60)
    await redis.set(f"{p}player:p1:renamed", 1, ex=60)
    await redis.set(f"{p}address:::1:created", 3, ex=60)
    await redis.set(f"{p}address:::1:players", 4, ex=60)
    await redis.zadd(f"{p}address:::1:conns", {"i:1": now_ms + 60_000})
    await redis.hset(f"{p}tries:player:p1", mapping={"n": 9, "at": now_ms})
    await redis.hset(f"{p}tries:address:::1", mapping={"n": 1, "at": now_ms})
    await redis.set(f"{p}refused:::1", msgpack.packb([time.time() + 60, "op", "why"]), ex=60)
    await redis.set(f"{p}refusals", 1)
    await redis.zadd(f"{p}history:p1", {"room0": 5})
    await redis.hset(f"{p}stats:p1", mapping={"mantis:w": 1, "mantis:mu": "27.0"})
    await redis.zadd(f"{p}leaderboard:mantis", {"p1": 27.0})
    await redis.zadd(f"{p}results:due", {"room3": 7})
    await redis.hset(f"{p}results:expect", "room3", msgpack.packb({"stood_in": [1]}))
    await redis.zadd(f"{p}seek:{POOL}", {"room4": 8})
    await redis.hset(f"{p}seektable:room4", mapping={
        "seats": 3, "taken": 1, "rating": "", "lo": "", "hi": "", "bots": "1", "pool": POOL,
        "opened": 8,
    })
    await redis.set(f"{p}seeker:p2", "room4", ex=600)
    await redis.set(f"{p}seeker:p9", "gone", ex=600)  # a table that expired
    await redis.zadd(f"{p}seek:due", {"room4": now_ms + 60_000, "gone": 1})


async def test_the_last_release_keys_are_read_after_the_move(store: Store) -> None:
    p = store.keys.p
    await _layout_1(store.redis, p)
    assert await move_to_current(store.redis, store.keys, "new") > 0
    # A process that died before it wrote the layout: the next one finds nothing to move.
    await store.redis.delete(store.keys.layout)
    assert await move_to_current(store.redis, store.keys, "next") == 0
    left = {as_text(k) async for k in store.redis.scan_iter(match=scan_pattern(p))}
    assert {key for key in left if "{" not in key} == {
        f"{p}refusals", f"{p}leaderboard:mantis", f"{p}seek:due", f"{p}layout",
    }
    players, keys = store.players, store.keys
    stored = await players.player("p1")
    assert stored is not None and stored.name == "Ann"
    assert 0 < await store.redis.ttl(keys.player_key("p1")) <= 3600
    assert await store.redis.smembers(keys.player_rooms_key("p1")) == {b"room1"}
    assert await players.created_rooms("p1") == {"room2": None}
    assert await store.redis.get(keys.player_counter_key("p1", "created")) == b"2"
    assert await store.redis.get(keys.player_counter_key("p1", "renamed")) == b"1"
    assert await store.redis.get(keys.address_counter_key("::1", "created")) == b"3"
    assert await store.redis.get(keys.address_counter_key("::1", "players")) == b"4"
    assert not await players.admit_connection("::1", "i:2", 1, 60_000)  # i:1 is counted
    tries = CodeTries(store.redis, p, free=5, first=2.0, longest=60.0)
    assert (await tries.take(["player:p1", "address:::1"])).wait > 0
    refusal = await store.refused.check("::1")
    assert refusal is not None and refusal.reason == "why"
    results = ResultsStore(store.redis, store.pipe, keys)
    assert await results.history("p1", None, 5) == [("room0", 5)]
    assert (await results.stats("p1"))["mantis:w"] == "1"
    assert await results.due(10, 5) == [("room3", 7, {"stood_in": [1]})]
    seeks = SeekStore(store.redis, store.pipe, keys)
    table = Claim(POOL, "room4")
    assert await seeks.holding("p2") == table
    assert await seeks.holding("p9") is None
    assert await seeks.due(int(time.time() * 1000) + 120_000, 5) == [table]
    assert await seeks.claim(POOL, "p3", (3, 3), None, (None, None), 1, "r5", 9, 60) == (
        "seat", table,
    )
