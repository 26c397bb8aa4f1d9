"""The bus on one Redis (``store/bus.py``; its subscribed connection read by
``store/subscriber.py``), against a real Redis: messages reach their channel's handler in the
order they were published, however Redis's bytes are cut into reads; the connection is named
in CLIENT LIST; a subscription made after the start is confirmed before ``subscribe`` returns;
an unsubscribed channel's messages stop; a handler that raises does not stop the others; and a
killed connection is made again with every channel, and told to the ``on_reconnect`` hooks
once."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from playhall.store.bus import Bus, client_name
from playhall.store.outage import Outage
from playhall.store.pipe import RedisPipe

from ..cancels import cancelled_while_stopping
from .helpers import Heard, wait_for_redis


@pytest.fixture
async def admin(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def publisher(redis_url: str) -> AsyncIterator[RedisPipe]:
    """Another process's pipe: what it publishes reaches the bus only through Redis."""
    pipe = RedisPipe(redis_url)
    yield pipe
    pipe.close()


@pytest.fixture
async def bus(redis_url: str) -> AsyncIterator[tuple[Bus, Heard]]:
    pipe = RedisPipe(redis_url)
    made = Bus(redis_url, pipe, Outage(), name=client_name(f"test {uuid.uuid4().hex[:8]}"),
               timeout=2.0, quiet=1.0)
    heard = Heard()
    made.on_reconnect.append(heard.reconnected)
    yield made, heard
    await made.stop()
    pipe.close()


def channels(count: int) -> list[bytes]:
    tag = uuid.uuid4().hex[:8]
    return [f"bus:{tag}:{i}".encode() for i in range(count)]


async def bus_connections(admin: aioredis.Redis, bus: Bus) -> list[dict[str, str]]:
    return [c for c in await admin.client_list() if c.get("name") == bus.name]


async def test_messages_reach_their_handlers_in_order_on_one_named_connection(
    bus: tuple[Bus, Heard], publisher: RedisPipe, admin: aioredis.Redis,
) -> None:
    subscriber, heard = bus
    first, second, later = channels(3)
    for channel in (first, second):
        await subscriber.subscribe(channel, heard.handler(channel))
    await subscriber.start()
    assert subscriber.ready.is_set()
    [connection] = await bus_connections(admin, subscriber)
    assert connection["sub"] == "2"  # both channels, on the one connection

    # Many messages in one write of the publisher's (many to a read), and some too big for one
    # read, all in the order published.
    sent = {first: [], second: []}  # type: dict[bytes, list[bytes]]
    for n in range(300):
        channel = (first, second)[n % 2]
        payload = b"%d:" % n + (b"x" * 200_000 if n % 50 == 7 else b"")
        sent[channel].append(payload)
    counts = [publisher.call(b"PUBLISH", c, p) for c, ps in sent.items() for p in ps]
    assert [await count for count in counts] == [1] * 300
    await heard.wait(lambda: all(len(heard.messages[c]) == 150 for c in sent))
    assert heard.messages[first] == sent[first] and heard.messages[second] == sent[second]

    # Subscribed after the start: confirmed by Redis before subscribe returns.
    await subscriber.subscribe(later, heard.handler(later))
    assert await publisher.call(b"PUBLISH", later, b"late") == 1
    await heard.wait(lambda: heard.messages[later] == [b"late"])
    assert len(await bus_connections(admin, subscriber)) == 1
    assert heard.reconnects == 0


async def test_an_unsubscribed_channel_stops(
    bus: tuple[Bus, Heard], publisher: RedisPipe,
) -> None:
    subscriber, heard = bus
    kept, dropped = channels(2)
    for channel in (kept, dropped):
        await subscriber.subscribe(channel, heard.handler(channel))
    await subscriber.start()
    assert await publisher.call(b"PUBLISH", dropped, b"before") == 1
    await heard.wait(lambda: heard.messages[dropped] == [b"before"])

    await subscriber.unsubscribe(dropped)
    assert not subscriber.listening(dropped)
    await wait_for_redis(
        lambda: _counts_are(publisher, [dropped, kept], [0, 1]), timeout=10,
    )
    assert await publisher.call(b"PUBLISH", dropped, b"nobody") == 0
    assert await publisher.call(b"PUBLISH", kept, b"still") == 1
    await heard.wait(lambda: heard.messages[kept] == [b"still"])
    assert heard.messages[dropped] == [b"before"]
    assert heard.reconnects == 0


async def _counts_are(pipe: RedisPipe, names: list[bytes], counts: list[int]) -> bool:
    reply = await pipe.call(b"PUBSUB", b"NUMSUB", *names)
    return list(reply[1::2]) == counts


async def test_a_handler_that_raises_does_not_stop_the_others(
    bus: tuple[Bus, Heard], publisher: RedisPipe,
) -> None:
    subscriber, heard = bus
    bad, good = channels(2)

    def refuse(data: bytes) -> None:
        raise ValueError(data)

    await subscriber.subscribe(bad, refuse)
    await subscriber.subscribe(good, heard.handler(good))
    await subscriber.start()
    # One write: the failing message and the next one arrive in one read.
    answers = [publisher.call(b"PUBLISH", bad, b"boom"), publisher.call(b"PUBLISH", good, b"ok")]
    assert [await answer for answer in answers] == [1, 1]
    await heard.wait(lambda: heard.messages[good] == [b"ok"])
    assert heard.reconnects == 0


async def test_a_killed_connection_is_made_again_with_every_channel_and_told(
    bus: tuple[Bus, Heard], publisher: RedisPipe, admin: aioredis.Redis,
) -> None:
    subscriber, heard = bus
    names = channels(3)
    for channel in names:
        await subscriber.subscribe(channel, heard.handler(channel))
    await subscriber.start()
    [before] = await bus_connections(admin, subscriber)

    await admin.client_kill_filter(_id=before["id"])
    await heard.wait(lambda: heard.reconnects == 1)
    [after] = await bus_connections(admin, subscriber)
    assert after["id"] != before["id"] and after["sub"] == "3"
    for channel in names:
        assert await publisher.call(b"PUBLISH", channel, b"again") == 1
    await heard.wait(lambda: all(heard.messages[c] == [b"again"] for c in names))
    assert heard.reconnects == 1 and subscriber.subscriptions == 2


async def test_a_stop_cancelled_while_it_waits_for_the_links_ends_cancelled(
    bus: tuple[Bus, Heard], admin: aioredis.Redis,
) -> None:
    subscriber, heard = bus
    [channel] = channels(1)
    await subscriber.subscribe(channel, heard.handler(channel))
    await subscriber.start()
    assert len(await bus_connections(admin, subscriber)) == 1
    stopper = await cancelled_while_stopping(subscriber.stop)
    assert stopper.cancelled()
