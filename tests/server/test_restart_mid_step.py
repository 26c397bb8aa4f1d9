"""Restarts at the awkward moments the games have: a Mandala resolution waiting for a pick,
Master Yoga's paced automatic move waiting for its deadline, a Math Magic Card choice waiting
for its seat. The server is SIGKILLed right there; the new process must show every seat the very
same view, keep the same deadline, and let the game go on from that point."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall.rooms.record import RoomRecord
from playhall_client import Client, RoomMirror

from .conftest import free_port
from .helpers import at_least, newer_than, stored_room
from .process import ServerProcess
from .redis_replies import stream_entries

Pred = Callable[[dict[str, Any]], bool]


async def play_until(
    clients: list[Client],
    mirrors: list[RoomMirror],
    until: Pred,
    rng: random.Random,
    limit: int = 600,
) -> None:
    """Random legal moves by whichever seat may act, until ``until(view)`` holds."""
    for _ in range(limit):
        lead = max(mirrors, key=lambda m: m.version)
        for m in mirrors:
            await m.wait(at_least(lead.version))
        if until(lead.view["state"]):
            return
        assert lead.view["status"] == "playing", "the game ended before the moment came"
        seat = rng.choice(lead.view["to_act"]) if lead.view["to_act"] else None
        if seat is None:  # an automatic step is due: wait for it
            await lead.wait(newer_than(lead.version), 30)
            continue
        mover = next(i for i, m in enumerate(mirrors) if m.seat == seat)
        # Playing on, not resigning (the Math Magic Card duel allows it at any time).
        moves = [
            m
            for m in mirrors[mover].view["moves"]
            if not m.get("template") and m.get("type") != "resign"
        ]
        before = lead.version
        await clients[mover].move(lead.room, rng.choice(moves), version=before)
        await lead.wait(newer_than(before), 30)
    raise AssertionError("the moment never came")


async def stored(redis_url: str, prefix: str, room: str) -> RoomRecord:
    return (await stored_room(redis_url, prefix, room))[1]


CASES = [
    pytest.param("mandala", 2, {}, lambda s: s["phase"] == "resolve", id="mandala-mid-resolution"),
    pytest.param(
        "mandala",
        1,
        {"mode": "solo", "yoga_delay_ms": 1500},
        lambda s: s["phase"] == "yoga",
        id="mandala-mid-yoga-move",
    ),
    pytest.param(
        "math_card", 2, {}, lambda s: s.get("pending") is not None, id="math-card-mid-choice"
    ),
]


@pytest.mark.parametrize("game, seats, options, moment", CASES)
async def test_restart_at_the_awkward_moment(
    redis_url: str, game: str, seats: int, options: dict, moment: Pred
) -> None:
    port = free_port()
    prefix = f"m{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "moment-test")
    await first.start()
    second = ServerProcess(first.port, redis_url, prefix, "moment-test")
    clients = [await Client.connect(first.url, name=f"p{i}") for i in range(seats)]
    try:
        mirrors = [await clients[0].create(game, seats, options=options)]
        mirrors += [await c.join(mirrors[0].room) for c in clients[1:]]
        room = mirrors[0].room
        if seats > 1:
            for c in clients:
                await c.ready(room)
        await mirrors[0].wait(lambda m: m.view["status"] == "playing")
        await play_until(clients, mirrors, moment, random.Random(7))
        before = await stored(redis_url, prefix, room)
        views_before = [m.view for m in mirrors]
        first.kill()
        await second.start()
        for client in clients:
            await client.request("ping")  # back online
        for mirror, view in zip(mirrors, views_before, strict=True):
            await mirror.wait(at_least(before.version))
            if mirror.version == before.version:
                assert mirror.view == view  # the same view, seat by seat
        after = await stored(redis_url, prefix, room)
        assert after.version >= before.version
        if after.version == before.version:
            assert msgpack.packb(after.state) == msgpack.packb(before.state)
            assert after.deadline == before.deadline  # a paced step keeps its moment
        if before.deadline is not None:
            # The paced step ran at its stored moment: not lost, not re-armed from zero, and
            # not early (a stream id is the time Redis stored the entry, in milliseconds).
            await mirrors[0].wait(newer_than(before.version), 30)
            r = aioredis.Redis.from_url(redis_url)
            try:
                entries = stream_entries(await r.xrange(f"{prefix}room:{{{room}}}:log"))
            finally:
                await r.aclose()
            step_id, step = next((i, f) for i, f in entries if int(f[b"v"]) == before.version + 1)
            assert step[b"k"] == b"auto"
            # Stream ids have whole milliseconds: compare the deadline at that resolution.
            stored_ms = int(step_id.split(b"-")[0])
            assert int(before.deadline * 1000) <= stored_ms < (before.deadline + 5) * 1000
        # And the game goes on from there.
        await play_until(clients, mirrors, lambda s: not moment(s), random.Random(8))
    finally:
        for client in clients:
            await client.close()
        second.terminate()
