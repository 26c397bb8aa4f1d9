"""A refusal, or a Redis error the server recovers from, leaves nothing behind: an exception the
server raised and handled is never the context of a later, unrelated one. Compiled with mypyc, a
coroutine that suspends while it handles an exception (an ``await`` in an ``except`` or
``finally`` block) leaves that exception as the thread's current one: every later exception
anywhere in the process chains to it, the chain grows by one with each such request (memory
that is never freed), and with several such coroutines suspended at once the interpreter can
crash. These tests run in-process (the server on the test's event loop), so a leaked exception
shows in the test's own tasks; they pass trivially in the pure build and guard the compiled one
(the CI runs the suite against both). tests/server/test_compiled_source.py keeps the compiled
modules free of the pattern."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from playhall import app
from playhall_client import Client, ServerError

from .helpers import started_table


async def _context_in_a_fresh_task() -> BaseException | None:
    """The context a new exception gets in a task of its own: None unless one leaked."""

    async def fresh() -> BaseException | None:
        try:
            raise LookupError("fresh")
        except LookupError as exc:
            return exc.__context__

    return await asyncio.create_task(fresh())


async def test_a_refused_join_with_a_code_leaves_no_exception_behind(url: str) -> None:
    client = await Client.connect(url, name="p")
    try:
        for _ in range(3):
            with pytest.raises(ServerError) as refused:
                await client.request("join", code="ZZZZZZ")
            assert refused.value.code == "bad_code"
        assert await _context_in_a_fresh_task() is None
    finally:
        await client.close()


async def test_commits_that_find_their_script_gone_at_once_leave_no_exception_behind(
    server: app.Running, url: str, redis_url: str
) -> None:
    """Redis forgot its scripts (a restart, SCRIPT FLUSH) while many rooms have a move to
    commit: each commit is refused NOSCRIPT and sent again with the script's text, all of
    them at once."""
    tables = [await started_table(url) for _ in range(6)]
    direct = aioredis.Redis.from_url(redis_url)
    try:
        await direct.script_flush()
        moves = []
        for table in tables:
            mover = table.mover()
            moves.append(
                table.clients[mover].move(table.room, table.mirrors[mover].view["moves"][0])
            )
        done = await asyncio.gather(*moves)
        assert all(result["version"] > 0 for result in done)
        assert await _context_in_a_fresh_task() is None
    finally:
        await direct.aclose()
        for table in tables:
            await table.close()
