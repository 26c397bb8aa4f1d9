"""Backpressure across processes behaves as on one: a spectator on another process than the
room's whose socket stops taking frames does not hold the room up, has that room's frames
dropped at its own process (outbox full, room stale), and once it drains gets a snapshot from
the room's owner, never the updates it missed one by one."""

from __future__ import annotations

import uuid
from dataclasses import replace

from playhall import app

from ..conftest import server_config
from ..test_slow_client import stalled_spectator_catches_up


async def test_a_stalled_spectator_on_another_process_catches_up_with_a_snapshot(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    config = server_config(redis_url, outbox=2, key_prefix=prefix, instance=f"{prefix}owner")
    owner = await app.start(config)
    edge = await app.start(replace(config, instance=f"{prefix}edge", metrics_listen=""))
    try:
        # The room is made by the player on the owner; the spectator watches from the edge.
        await stalled_spectator_catches_up(
            f"ws://127.0.0.1:{owner.port}/", f"ws://127.0.0.1:{edge.port}/", edge
        )
        assert not edge.rooms.rooms  # the edge never held the room: its frames came forwarded
    finally:
        await edge.drain()
        await owner.drain()
