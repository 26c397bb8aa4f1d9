"""bench/peers/floor_server.py, the floor the peers' table measures Playhall against
(docs/benchmarks.md, "Against its peers"): the duel's rule (a move from the seat to move flips
the turn and counts, any other is ignored), its update to both seats, and with a Redis, each
move stored before its update goes out. Real processes, websockets and Redis."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from websockets.asyncio.client import ClientConnection, connect

FLOOR = Path(__file__).resolve().parents[2] / "bench/peers/floor_server.py"

Seats = tuple[str, ClientConnection, ClientConnection]  # the room's id, seat 0, seat 1
Floor = Callable[..., AbstractAsyncContextManager[Seats]]


@pytest.fixture
def floor() -> Floor:
    """``async with floor(*redis_url) as (room, seat0, seat1)``: the floor started on a port the
    system picks (it prints it), and a room of two seats on it."""

    @asynccontextmanager
    async def started(*redis_url: str) -> AsyncIterator[Seats]:
        server = subprocess.Popen([sys.executable, str(FLOOR), "0", *redis_url],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())  # printed once it listens
            room = uuid.uuid4().hex
            async with connect(f"ws://127.0.0.1:{port}/{room}/0") as seat0, \
                    connect(f"ws://127.0.0.1:{port}/{room}/1") as seat1:
                yield room, seat0, seat1
        finally:
            server.terminate()
            server.wait(10)

    return started


async def nothing_waits(mover: ClientConnection, other: ClientConnection) -> None:
    """No update is on its way to ``other`` from what ``mover`` sent: ``mover``'s pong leaves
    once what it sent before was handled, and any update that made went to ``other`` at once,
    so ``other``'s pong comes after it, had there been one."""
    await (await mover.ping())
    await (await other.ping())
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):  # nothing waits: it would have come before the pong
            await other.recv()


async def test_a_move_in_turn_counts_and_one_out_of_turn_is_ignored(floor: Floor) -> None:
    async with floor() as (_, seat0, seat1):
        await seat0.send(b"m")
        assert (await seat0.recv(), await seat1.recv()) == (b"1 1", b"1 1")
        await seat0.send(b"m")  # not seat 0's turn
        await nothing_waits(seat0, seat1)
        await seat1.send(b"m")
        assert (await seat0.recv(), await seat1.recv()) == (b"0 2", b"0 2")


async def test_with_redis_each_move_is_stored_before_its_update(
    floor: Floor, redis_url: str,
) -> None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        async with floor(redis_url) as (room, seat0, seat1):
            # Redis holds every client's writes (the floor's RPUSH), not reads or this one.
            await client.execute_command("CLIENT", "PAUSE", "10000", "WRITE")
            try:
                await seat0.send(b"m")
                await nothing_waits(seat0, seat1)  # the move handled, its RPUSH held
                assert await client.lrange(f"floor:{room}", 0, -1) == []
            finally:
                await client.execute_command("CLIENT", "UNPAUSE")
            assert (await seat0.recv(), await seat1.recv()) == (b"1 1", b"1 1")
            assert await client.lrange(f"floor:{room}", 0, -1) == [b"1"]
            await seat1.send(b"m")
            assert await seat0.recv() == b"0 2"
            assert await client.lrange(f"floor:{room}", 0, -1) == [b"1", b"2"]
    finally:
        await client.aclose()
