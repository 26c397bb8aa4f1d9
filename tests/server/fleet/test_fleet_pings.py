"""Each process of a fleet times round trips to the others over Redis (``playhall.fleet.ping``):
two real servers on the tests' Redis (or Cluster). ../test_ping_channel.py has a raw client
stand for a process that hears and does not answer, or speaks out of turn."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from playhall import app

from ..conftest import server_config
from ..helpers import until
from ..metrics_scrape import scrape

EVERY = 0.02


def round_trips(running: app.Running) -> int:
    return sum(running.endpoint.counters.round_trip_buckets)


@pytest.fixture
async def pair(redis_url: str) -> AsyncIterator[tuple[app.Running, app.Running]]:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    config = server_config(redis_url, key_prefix=prefix, instance=f"{prefix}a",
                           fleet_ping_every=EVERY)
    first = await app.start(config)
    second = await app.start(replace(config, instance=f"{prefix}b"))
    try:
        yield first, second
    finally:
        await second.drain()
        await first.drain()


async def test_each_process_times_round_trips_to_the_others(
    pair: tuple[app.Running, app.Running],
) -> None:
    first, second = pair
    await until(lambda: round_trips(first) >= 10 and round_trips(second) >= 10)
    assert first.metrics_port is not None
    found = await scrape(first.metrics_port)
    assert found.types["playhall_fleet_round_trip_seconds"] == "histogram"
    count = found.get("playhall_fleet_round_trip_seconds_count")
    assert count >= 10
    # Every round trip is within Redis's deadline, so counted in a finite bucket.
    assert found.get("playhall_fleet_round_trip_seconds_bucket", le="5.0") == count
    assert 0 < found.get("playhall_fleet_round_trip_seconds_sum") < 5.0 * count
    assert found.get("playhall_fleet_pings_lost_total") == 0
