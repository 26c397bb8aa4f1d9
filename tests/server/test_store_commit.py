"""Room commits against a real Redis: the fencing and version checks refuse what they must, and
the part of a commit kept encoded per room (digest, keys, lease) follows the lease it was made
under, so a commit never goes out under a lease the room no longer holds."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Commit, Fenced, Store, VersionConflict


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url), f"c{uuid.uuid4().hex[:8]}:")
    yield store
    store.close()
    await client.aclose()


def change(room: str, lease: str, prev: int, record: bytes = b"r") -> Commit:
    return Commit(
        room=room, lease=lease, prev_version=prev, version=prev + 1, record=record,
        log={"v": prev + 1, "k": "move", "s": 0, "m": b"\x80"},
    )  # fmt: skip


async def stored(store: Store, room: str) -> tuple[int, bytes] | None:
    return await store.load(room)


async def test_commits_follow_the_lease_they_are_made_under(store: Store) -> None:
    room = "r1"
    first = await store.acquire(room, "one", 10_000)
    assert first is not None
    await store.commit(change(room, first, -1, b"v0"))
    await store.commit(change(room, first, 0, b"v1"))
    # Another process takes the room over (the first's lease lapsed): the first is fenced out.
    await store.release(room, first)
    second = await store.acquire(room, "two", 10_000)
    assert second is not None and second != first
    with pytest.raises(Fenced):
        await store.commit(change(room, first, 1, b"stale"))
    await store.commit(change(room, second, 1, b"v2"))
    assert await stored(store, room) == (2, b"v2")
    # The log holds one entry per version, the fenced commit none.
    assert [e["v"] for e in await store.log(room)] == [b"0", b"1", b"2"]


async def test_a_commit_against_another_version_is_refused_and_changes_nothing(
    store: Store,
) -> None:
    room = "r2"
    lease = await store.acquire(room, "one", 10_000)
    assert lease is not None
    await store.commit(change(room, lease, -1, b"v0"))
    for wrong in (-1, 1, 5):
        with pytest.raises(VersionConflict):
            await store.commit(change(room, lease, wrong, b"nope"))
    assert await stored(store, room) == (0, b"v0")
    assert len(await store.log(room)) == 1
