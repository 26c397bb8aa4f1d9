"""The client library's mirror: a diff that does not fit leaves no half-applied view behind."""

from __future__ import annotations

import asyncio

from playhall_client import Client


async def test_a_diff_that_fails_half_way_forces_a_snapshot() -> None:
    client = Client("ws://unused.invalid/", reconnect=False)
    mirror = client._mirror("r")
    mirror.version, mirror.view = 5, {"a": 1, "b": [1, 2]}
    # The first op applies, the second cannot: the view is now neither version 5 nor 6.
    client._receive(
        {
            "t": "update",
            "room": "r",
            "from": 5,
            "to": 6,
            "diff": [["set", ["a"], 2], ["del", ["missing"]]],
            "events": [],
        }
    )
    assert mirror.version == -1  # so the next sync asks for a snapshot, not for diffs from 5
    await asyncio.gather(*client._tasks, return_exceptions=True)  # the (offline) resync attempt
