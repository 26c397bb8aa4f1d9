"""The pipelined commit connection, against a real Redis: replies reach the right callers in
order, errors are raised to their caller only, a lost connection fails what was in flight and the
next call reconnects, and the URL's database is used."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from playhall.store.pipe import RedisPipe, encode_command


async def test_concurrent_calls_get_their_own_replies_in_order(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    try:
        replies = await asyncio.gather(*(pipe.call(b"INCR", key) for _ in range(200)))
        assert replies == list(range(1, 201))
        assert await pipe.call(b"GET", key) == b"200"
    finally:
        pipe.close()


async def test_an_error_reply_is_raised_to_its_caller_only(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    try:
        results = await asyncio.gather(
            pipe.call(b"SET", key, b"x"),
            pipe.call(b"INCR", key),  # not an integer
            pipe.call(b"GET", key),
            return_exceptions=True,
        )
        assert results[0] == b"OK" and results[2] == b"x"
        assert isinstance(results[1], ResponseError) and "not an integer" in str(results[1])
    finally:
        pipe.close()


async def test_calls_made_while_connecting_keep_their_order_with_calls_made_once_connected(
    redis_url: str,
) -> None:
    """A call made before the connection is open goes before one made after it opened, even
    while the connection's setup (its preamble) is still waiting for Redis's answer: an owner's
    batches to one edge, the first sent on a node's fresh connection, must arrive in order."""
    pipe = RedisPipe(redis_url)
    pipe.preamble = [encode_command([b"PING"])]  # a setup round trip, as the store's scripts
    key = f"pipe:{uuid.uuid4().hex}".encode()
    try:
        first = asyncio.ensure_future(pipe.call(b"RPUSH", key, b"first"))  # as the mail does
        async with asyncio.timeout(5):
            while pipe.connection is None:  # open, its setup sent, not yet answered
                await asyncio.sleep(0)
        second = pipe.call(b"RPUSH", key, b"second")
        assert await asyncio.gather(first, second) == [1, 2]
        assert await pipe.call(b"LRANGE", key, b"0", b"-1") == [b"first", b"second"]
    finally:
        pipe.close()


async def test_a_killed_connection_fails_in_flight_calls_and_the_next_call_reconnects(
    redis_url: str,
) -> None:
    pipe = RedisPipe(redis_url)
    admin = aioredis.from_url(redis_url)
    try:
        first_id = await pipe.call(b"CLIENT", b"ID")
        # A blocking call is written before the kill is (the kill takes a round trip on
        # another connection): whichever Redis sees first, the call cannot be answered.
        blocked = asyncio.ensure_future(pipe.call(b"BLPOP", uuid.uuid4().hex.encode(), b"10"))
        await admin.client_kill_filter(_id=first_id)
        with pytest.raises(RedisConnectionError):
            await blocked
        second_id = await pipe.call(b"CLIENT", b"ID")
        assert second_id != first_id
        assert await pipe.call(b"PING") == b"PONG"
    finally:
        pipe.close()
        await admin.aclose()


async def test_the_database_of_the_url_is_selected(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/3"
    pipe = RedisPipe(url)
    db3 = aioredis.from_url(url)
    key = f"pipe:{uuid.uuid4().hex}"
    try:
        await pipe.call(b"SET", key.encode(), b"in three")
        assert await db3.get(key) == b"in three"
        await db3.delete(key)
    finally:
        pipe.close()
        await db3.aclose()


async def test_an_unreachable_redis_is_a_connection_error() -> None:
    pipe = RedisPipe("redis://127.0.0.1:1/0")
    with pytest.raises(RedisConnectionError, match="cannot reach Redis"):
        await pipe.call(b"PING")


async def test_a_reply_handed_to_a_callback_comes_in_order_with_the_others(redis_url: str) -> None:
    """``call_then`` (the fleet's publishes): the reply goes to the callback from the read
    callback; a callback that raises is logged, and the replies after it still reach theirs.
    Made before the connection is open, it is answered once the connection is."""
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    got: list[tuple[object, BaseException | None]] = []

    def keep(reply: object, error: BaseException | None) -> None:
        got.append((reply, error))

    def fail(reply: object, error: BaseException | None) -> None:
        raise RuntimeError("a bug in a callback")

    try:
        pipe.call_then(keep, b"INCR", key)  # not connected yet: held, answered once it is
        first = await pipe.call(b"INCR", key)
        pipe.call_then(fail, b"INCR", key)
        pipe.call_then(keep, b"INCR", key, at_once=True)  # queued behind: one is scheduled
        pipe.call_then(keep, b"LPUSH", key, b"x")  # the wrong type: Redis's error
        last = await pipe.call(b"GET", key)
        assert first == 2 and last == b"4"
        assert got[:2] == [(1, None), (4, None)]
        assert got[2][0] is None and isinstance(got[2][1], ResponseError)
    finally:
        pipe.close()


async def test_a_command_sent_at_once_is_written_in_the_same_pass(redis_url: str) -> None:
    """``at_once`` with nothing else queued: written by the call itself (no loop pass waits for
    the write), and still answered in order with what follows. The pass's later commands, at
    once or not, wait for one write: at most one write more a pass, never one a command."""
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    got: list[object] = []
    try:
        await pipe.call(b"PING")  # connected
        assert not pipe._flush_scheduled
        pipe.call_then(lambda reply, error: got.append(reply), b"RPUSH", key, b"a", at_once=True)
        assert not pipe._queued  # written
        pipe.call_then(lambda reply, error: got.append(reply), b"RPUSH", key, b"b", at_once=True)
        assert len(pipe._queued) == 1 and pipe._flush_scheduled  # waits for the pass's write
        assert await pipe.call(b"RPUSH", key, b"c") == 3
        assert got == [1, 2]
    finally:
        pipe.close()


async def test_a_command_sent_now_is_written_by_the_call_with_what_was_queued_before_it(
    redis_url: str,
) -> None:
    """``now`` (a forwarded request's answer): written by the call itself even when the pass
    has a write due, together with the commands queued before it, in order; the write the
    pass scheduled then writes only what comes after."""
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    got: list[object] = []
    try:
        await pipe.call(b"PING")  # connected
        behind = pipe.call(b"RPUSH", key, b"a")
        assert len(pipe._queued) == 1 and pipe._flush_scheduled
        pipe.call_then(lambda reply, error: got.append(reply), b"RPUSH", key, b"b", now=True)
        assert not pipe._queued  # both written, in order
        assert await behind == 1
        assert await pipe.call(b"LRANGE", key, b"0", b"-1") == [b"a", b"b"]
        assert got == [2]
    finally:
        pipe.close()


async def test_a_pass_makes_at_most_one_write_more_than_its_own(redis_url: str) -> None:
    """Under load one pass answers many rooms: the first ``now`` (or ``at_once``) of a pass is
    written by its call; those after it in the same pass wait for the pass's write, in order,
    so that their answers share one write rather than making one each."""
    pipe = RedisPipe(redis_url)
    key = f"pipe:{uuid.uuid4().hex}".encode()
    got: list[object] = []

    def then(reply: object, error: BaseException | None) -> None:
        got.append(error or reply)

    try:
        await pipe.call(b"PING")  # connected
        pipe.call_then(then, b"RPUSH", key, b"a", now=True)
        assert not pipe._queued  # the pass's first: written by the call
        pipe.call_then(then, b"RPUSH", key, b"b", now=True)
        pipe.call_then(then, b"RPUSH", key, b"c", at_once=True)
        assert len(pipe._queued) == 2  # they wait for the pass's write
        assert await pipe.call(b"LRANGE", key, b"0", b"-1") == [b"a", b"b", b"c"]
        assert got == [1, 2, 3]
        pipe.call_then(then, b"RPUSH", key, b"d", at_once=True)
        assert not pipe._queued  # a new pass: its first is written by its call again
        pipe.call_then(then, b"RPUSH", key, b"e", now=True)
        assert len(pipe._queued) == 1
        assert await pipe.call(b"LLEN", key) == 5
    finally:
        pipe.close()


async def test_a_lost_connection_hands_its_callbacks_the_failure(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    admin = aioredis.from_url(redis_url)
    got: list[BaseException | None] = []
    try:
        connection_id = await pipe.call(b"CLIENT", b"ID")
        pipe.call_then(lambda reply, error: got.append(error),
                       b"BLPOP", uuid.uuid4().hex.encode(), b"10")
        await admin.client_kill_filter(_id=connection_id)
        async with asyncio.timeout(5):
            while not got:
                await asyncio.sleep(0.01)
        assert isinstance(got[0], RedisConnectionError)
    finally:
        pipe.close()
        await admin.aclose()
