"""The fleet's ping channel (``playhall.fleet.ping``) against a raw Redis client standing for
another process: one that hears asks and never answers, one registered that nobody hears for,
and one that speaks out of turn. A single Redis (the raw client speaks plain pub/sub);
fleet/test_fleet_pings.py times real servers' round trips on either."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import msgpack
import redis.asyncio as aioredis

from playhall import app
from playhall.fleet.ping import ANSWER, ASK
from playhall.store.fleet import Member

from .conftest import server_config
from .helpers import until

EVERY = 0.02


async def test_an_ask_heard_but_not_answered_is_lost_and_one_nobody_hears_is_not(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    timeout = 0.5
    running = await app.start(server_config(
        redis_url, key_prefix=prefix, instance=f"{prefix}a", fleet_ping_every=EVERY,
        redis_timeout=timeout, lease_ms=600,  # the registry read again every 0.2 s
    ))
    raw = aioredis.Redis.from_url(redis_url)
    listener = raw.pubsub()
    heard: list[list[object]] = []
    try:
        # "mute" is registered and listens on its ping channel, but never answers; "gone" is
        # registered and nobody listens on its channel.
        await listener.subscribe(running.endpoint.store.keys.ping_channel("mute"))
        for name in ("mute", "gone"):
            await running.heartbeat.fleet.beat(Member(name, time.time(), "0", False), 60_000)

        async def listen() -> None:
            async for message in listener.listen():
                if message["type"] == "message":
                    heard.append(msgpack.unpackb(message["data"]))

        reader = asyncio.create_task(listen())
        counters = running.endpoint.counters
        await until(lambda: counters.pings_lost >= 60)
        reader.cancel()
        # Asks to "mute" are lost once past the timeout; asks to "gone", published to nobody,
        # are forgotten at once: were they counted too, the lost would be about twice the
        # asks "mute" heard.
        assert counters.pings_lost <= len(heard)
        assert all(m[:2] == [ASK, f"{prefix}a"] for m in heard)
        # Nothing waits longer than the timeout: at most a timeout's worth of asks to "mute"
        # (and a round's to "gone", not yet published), with a few rounds' slack.
        assert len(running.pings.pending) <= timeout / EVERY + 10
        assert sum(counters.round_trip_buckets) == 0
    finally:
        await listener.aclose()
        await raw.aclose()
        await running.drain()


async def answer(listener: Any) -> Any:
    """The next message the raw client's subscription gets, decoded."""
    message = None
    async with asyncio.timeout(10):
        while message is None:
            message = await listener.get_message(ignore_subscribe_messages=True, timeout=1)
    return msgpack.unpackb(message["data"])


async def test_a_stranger_on_the_ping_channel_is_dropped_and_asks_are_still_answered(
    redis_url: str,
) -> None:
    running = await app.start(server_config(redis_url, fleet_ping_every=0))
    keys = running.endpoint.store.keys
    raw = aioredis.Redis.from_url(redis_url)
    listener = raw.pubsub()
    try:
        await listener.subscribe(keys.ping_channel("probe"))
        await listener.get_message(timeout=1)  # the subscription's confirmation
        channel = keys.ping_channel(running.config.instance)
        strangers = [b"\xc1", msgpack.packb({"a": 1}), msgpack.packb([ASK, "probe"]),
                     msgpack.packb([7, "probe", 1]), msgpack.packb([ASK, "probe", True]),
                     msgpack.packb([ASK, "probe", 1.5]), msgpack.packb([ASK, 3, 1])]
        for stranger in strangers:
            assert await raw.publish(channel, stranger) == 1
        assert await raw.publish(channel, msgpack.packb([ASK, "probe", 7])) == 1
        assert await answer(listener) == [ANSWER, running.config.instance, 7]
        assert running.pings.strangers == len(strangers)
        # An answer to an ask it never made changes nothing.
        assert await raw.publish(channel, msgpack.packb([ANSWER, "probe", 99])) == 1
        assert await raw.publish(channel, msgpack.packb([ASK, "probe", 8])) == 1
        assert await answer(listener) == [ANSWER, running.config.instance, 8]
        assert sum(running.endpoint.counters.round_trip_buckets) == 0
    finally:
        await listener.aclose()
        await raw.aclose()
        await running.drain()
