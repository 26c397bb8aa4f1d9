"""Fixtures of the fleet tests: three real server processes on one real Redis (the tests', or
with ``PLAYHALL_TEST_FLEET_ON_CLUSTER=1`` the session's Redis Cluster), under one key prefix,
so any of them serves any room; and clients that record every frame they get, as it arrived.

The three processes are started once per test module and shared by its tests (each test makes
its own rooms and players); a test that kills or restarts one starts it again before it ends,
so the next test finds three.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from playhall_client import Client, RoomMirror, ServerError

from ..cluster import LocalCluster
from ..helpers import newer_than
from ..process import ServerProcess, free_port

#: Short enough that a killed owner's rooms are taken over within a test's patience.
LEASE_MS = 1500
#: The time a forwarded request waits for its owner's answer.
FORWARD_TIMEOUT = 2.0


class Fleet:
    def __init__(self, processes: list[ServerProcess], prefix: str) -> None:
        self.processes = processes
        self.prefix = prefix

    def url(self, index: int) -> str:
        return self.processes[index % len(self.processes)].url

    async def ensure_running(self) -> None:
        """Start again any process a test stopped."""
        for process in self.processes:
            if process.process is None or process.process.poll() is not None:
                await process.start(keep_port=True)


def fleet_processes(
    redis_url: str, log_dir: Path, count: int = 3, lease_ms: int = LEASE_MS,
) -> Fleet:
    prefix = f"f{uuid.uuid4().hex[:8]}:"
    settings = ["--lease-ms", str(lease_ms), "--forward-timeout", str(FORWARD_TIMEOUT)]
    processes = [
        ServerProcess(
            free_port(), redis_url, prefix, f"{prefix}s{i}", settings,
            log_path=log_dir / f"server{i}.log",
        )
        for i in range(count)
    ]
    return Fleet(processes, prefix)


@asynccontextmanager
async def running(fleet: Fleet) -> AsyncIterator[Fleet]:
    """``fleet``'s processes started, and stopped (those still running) at the end."""
    try:
        for process in fleet.processes:
            await process.start()
        yield fleet
    finally:
        for process in fleet.processes:
            if process.process is not None and process.process.poll() is None:
                process.terminate()


if os.environ.get("PLAYHALL_TEST_FLEET_ON_CLUSTER") == "1":

    @pytest.fixture(scope="session")
    def redis_url(cluster_nodes: LocalCluster) -> str:
        """These tests' Redis: the session's Redis Cluster (``../cluster.py``) instead of the
        single Redis, when asked (CONTRIBUTING.md, "Checking a change")."""
        return cluster_nodes.url


@pytest.fixture(scope="module")
async def fleet(
    redis_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Fleet]:
    async with running(fleet_processes(redis_url, tmp_path_factory.mktemp("fleet"))) as trio:
        yield trio


class Recorder:
    """A client's frames as they arrived (decoded lazily by the tests)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.frames: list[bytes] = []
        client.on_frame = self._got

    def _got(self, frame: bytes | str) -> None:
        if isinstance(frame, bytes):
            self.frames.append(frame)


async def recording(url: str, **kwargs: object) -> Recorder:
    client = await Client.connect(url, **kwargs)
    return Recorder(client)


async def duel_of(recorders: list[Recorder]) -> tuple[RoomMirror, RoomMirror]:
    """A Mantis duel made by ``recorders``' first client (seat 0), joined by its second (seat 1)
    and watched by its third, both seats ready: the two seats' mirrors."""
    a, b, watcher = (r.client for r in recorders)
    mirror = await a.create("mantis", 2)
    other = await b.join(mirror.room)
    await watcher.join(mirror.room, watch=True)
    await a.ready(mirror.room)
    await b.ready(mirror.room)
    return mirror, other


#: A move overtaken by the room (a clock ran out, a stand-in moved first): move again later.
OVERTAKEN = frozenset({"stale", "not_your_turn", "illegal_move", "game_over"})


async def play_on(players: list[tuple[Client, RoomMirror]], timeout: float = 90) -> int:
    """Each player makes its first legal move whenever it has one, until the game is over;
    a move the room overtook (its clock ran out meanwhile and the bot moved) is made again
    from the new view. Returns the moves made."""
    made = 0

    async def run(client: Client, mirror: RoomMirror) -> None:
        nonlocal made
        while True:
            await mirror.wait(
                lambda m: m.view["status"] == "finished" or bool(m.view.get("moves")), timeout
            )
            if mirror.view["status"] == "finished":
                return
            version = mirror.version
            try:
                await client.move(mirror.room, mirror.view["moves"][0])
                made += 1
            except ServerError as exc:
                if exc.code not in OVERTAKEN:
                    raise
            await mirror.wait(newer_than(version), timeout)

    async with asyncio.timeout(timeout):
        await asyncio.gather(*(run(c, m) for c, m in players))
    return made
