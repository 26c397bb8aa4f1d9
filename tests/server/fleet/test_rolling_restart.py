"""A rolling restart of every process of a fleet, one after the other, under load, through a
real load balancer (HAProxy, the shipped configuration, no stickiness): no move the client
library retries fails, and every acknowledged move is in its room's log exactly once."""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

from playhall_client import Client, RoomMirror, ServerError

from ..balancer import StartFleet
from ..helpers import newer_than
from .test_failover import log_mids

T = TypeVar("T")

#: Pairs of players playing game after game while the processes restart.
PAIRS = 4


async def _retrying(step: Callable[[], Awaitable[T]]) -> T:
    """A request that is not a move (create, join, ready) made again until it goes through:
    a process draining under it refuses it, and only moves are counted here."""
    for _ in range(100):
        try:
            return await step()
        except ServerError as exc:
            if exc.code not in ("draining", "store_failed", "overloaded"):
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("never went through")


async def _ready(client: Client, room: str) -> None:
    """``ready``, made again until it goes through. A forwarded request whose answer may have
    been lost is answered ``store_failed`` though it may have been carried out (only a move is
    made once, by its id): a ``ready`` retried after that and refused ``wrong_status`` (the
    game has started) means the first one was, and started the game."""
    retried = False

    async def step() -> None:
        nonlocal retried
        try:
            await client.ready(room)
        except ServerError as exc:
            if retried and exc.code == "wrong_status":
                return
            retried = True
            raise

    await _retrying(step)


class Pair:
    def __init__(self, url: str) -> None:
        self.url = url
        self.acked: list[tuple[str, str]] = []
        self.failed: list[ServerError] = []
        self.games = 0

    async def play(self, stop: asyncio.Event) -> None:
        a = await Client.connect(self.url, name="a")
        b = await Client.connect(self.url, name="b")
        try:
            while not stop.is_set():
                made = await _retrying(partial(a.create, "mantis", 2))
                joined = await _retrying(partial(b.join, made.room))
                for client in (a, b):
                    await _ready(client, made.room)
                await asyncio.gather(self._moves(a, made), self._moves(b, joined))
                self.games += 1
        finally:
            await a.close()
            await b.close()

    async def _moves(self, client: Client, mirror: RoomMirror) -> None:
        while True:
            await mirror.wait(
                lambda m: m.view["status"] == "finished" or bool(m.view.get("moves")), 60
            )
            if mirror.view["status"] == "finished":
                return
            version, mid = mirror.version, secrets.token_hex(6)
            try:
                await client.move(mirror.room, mirror.view["moves"][0], mid=mid)
            except ServerError as exc:
                self.failed.append(exc)
                raise
            self.acked.append((mirror.room, mid))
            await mirror.wait(newer_than(version), 60)


async def test_a_rolling_restart_under_load_fails_no_move_and_loses_none(
    balanced: StartFleet, redis_url: str
) -> None:
    # Caps lifted: the pairs play as fast as they can, game after game, from one address.
    lifted = ["--rate", "100000", "--burst", "100000", "--rooms-per-minute", "0",
              "--address-rooms-per-minute", "0", "--new-players-per-minute", "0"]
    fleet = await balanced(3, extra=["--lease-ms", "2000", "--forward-timeout", "3", *lifted])
    stop = asyncio.Event()
    pairs = [Pair(fleet.url) for _ in range(PAIRS)]
    playing = asyncio.gather(*(p.play(stop) for p in pairs))

    async def acked(count: int) -> None:
        """Until ``count`` moves were acknowledged in all (the players failing stops it)."""
        async with asyncio.timeout(60):
            while sum(len(p.acked) for p in pairs) < count:
                if playing.done():
                    playing.result()  # raises what stopped them
                    raise AssertionError("the players stopped")
                await asyncio.sleep(0.05)

    try:
        await acked(40)  # under load before the first restart
        for process in fleet.processes:
            before = sum(len(p.acked) for p in pairs)
            # SIGTERM: drain (the rooms handed over at once), exit; then back on its port.
            assert await asyncio.to_thread(process.terminate) == 0
            await process.start(keep_port=True)
            await fleet.balancer.wait_until(lambda s: all(v == "UP" for v in s.values()))
            await acked(before + 20)  # the load went on
        stop.set()
        await asyncio.wait_for(playing, 120)
    finally:
        stop.set()
        if not playing.done():
            playing.cancel()
    assert [e for p in pairs for e in p.failed] == []
    all_acked = [move for p in pairs for move in p.acked]
    assert len(all_acked) >= 100
    for room in {room for room, _ in all_acked}:
        logged = await log_mids(redis_url, fleet.prefix, room)
        for mid in (m for r, m in all_acked if r == room):
            assert logged[mid] == 1, (room, mid, logged[mid])
        assert all(count == 1 for count in Counter(logged).values())
