"""A fleet's faults: an owner that does not answer, an owner killed (``kill -9``) mid-game, an
owner drained. Its viewers on the other processes keep their connections, the game goes on
and finishes, and every acknowledged move is in the room's log exactly once."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall_client import Client, RoomMirror, ServerError

from ..test_play_mantis import play_until_over
from .conftest import FORWARD_TIMEOUT, Fleet, fleet_processes


async def log_mids(redis_url: str, prefix: str, room: str) -> Counter[object]:
    """How often each move id is in the room's log."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        entries = await client.xrange(f"{prefix}room:{room}:log")
    finally:
        await client.aclose()
    return Counter(msgpack.unpackb(fields[b"i"]) for _, fields in entries if b"i" in fields)


async def room_held_by(fleet: Fleet, owner: int, players: list[int]) -> tuple[
    Client, list[Client], list[RoomMirror]
]:
    """A started two-seat Mantis room made (and so held) by process ``owner``, whose creator
    only watches, with a player on each process of ``players``."""
    host = await Client.connect(fleet.url(owner), name="host")
    made = await host.create("mantis", len(players), sit=False)
    clients = [await Client.connect(fleet.url(i), name=f"p{i}") for i in players]
    mirrors = [await c.join(made.room) for c in clients]
    for client in clients:
        await client.ready(made.room)
    for mirror in mirrors:
        await mirror.wait(lambda m: m.view["status"] == "playing")
    return host, clients, mirrors


async def test_an_owner_that_does_not_answer_gets_no_move_done_elsewhere(
    fleet: Fleet, redis_url: str
) -> None:
    host, clients, mirrors = await room_held_by(fleet, 0, [1, 2])
    room = mirrors[0].room
    owner = fleet.processes[0].process
    assert owner is not None
    try:
        mover = next(i for i, m in enumerate(mirrors) if m.view["moves"])
        mirror = mirrors[mover]
        owner.send_signal(signal.SIGSTOP)
        try:
            started = asyncio.get_running_loop().time()
            # A bare request (the client's own move retries would hide the refusal).
            with pytest.raises(ServerError) as refused:
                await clients[mover].request(
                    "move", room=room, version=mirror.version, mid="late-1",
                    move=mirror.view["moves"][0],
                )
            waited = asyncio.get_running_loop().time() - started
            assert refused.value.code == "store_failed"
            assert "did not answer in time" in refused.value.reason
            assert waited >= FORWARD_TIMEOUT * 0.9
            # Not carried out by the process that forwarded it, nor by anyone else.
            assert "late-1" not in await log_mids(redis_url, fleet.prefix, room)
        finally:
            owner.send_signal(signal.SIGCONT)
        # Sent again with its id once the owner is back: applied exactly once.
        await clients[mover].move(room, mirror.view["moves"][0], mid="late-1")
        assert (await log_mids(redis_url, fleet.prefix, room))["late-1"] == 1
    finally:
        for client in (host, *clients):
            await client.close()


async def test_an_owner_killed_mid_game_the_game_finishes_on_the_others(
    fleet: Fleet, redis_url: str
) -> None:
    host, clients, mirrors = await room_held_by(fleet, 0, [1, 2])
    room = mirrors[0].room
    try:
        # A few moves with the room on process 0, then it dies.
        mover = next(i for i, m in enumerate(mirrors) if m.view["moves"])
        await clients[mover].move(room, mirrors[mover].view["moves"][0], mid="before-kill")
        fleet.processes[0].kill()
        moves = await play_until_over(list(zip(clients, mirrors, strict=True)), timeout=60)
        assert moves > 0
        for client, mirror in zip(clients, mirrors, strict=True):
            assert mirror.view["status"] == "finished"
            assert client.reconnects == 0  # their own processes never went away
        # No acknowledged move lost, none applied twice.
        mids = await log_mids(redis_url, fleet.prefix, room)
        assert mids["before-kill"] == 1
        assert all(count == 1 for count in mids.values()), mids
    finally:
        await host.close()
        for client in clients:
            await client.close()
        await fleet.ensure_running()


@pytest.fixture
async def slow_lease_fleet(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Fleet]:
    """Two processes whose leases last a minute: a room that moves between them within the
    test moved because its owner handed it over, not because its lease ran out."""
    pair = fleet_processes(redis_url, Path(tmp_path_factory.mktemp("slow")), count=2)
    for process in pair.processes:
        process.args[process.args.index("--lease-ms") + 1] = "60000"
    try:
        for process in pair.processes:
            await process.start()
        yield pair
    finally:
        for process in pair.processes:
            if process.process is not None and process.process.poll() is None:
                process.terminate()


async def lease_holder(redis_url: str, prefix: str, room: str) -> str:
    """The instance whose lease the room has ("<owner>|<fence>"), "" if none."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        lease = await client.get(f"{prefix}lease:{room}")
    finally:
        await client.aclose()
    return "" if lease is None else lease.decode().rpartition("|")[0]


async def test_a_drained_owner_hands_its_rooms_over_at_once(
    slow_lease_fleet: Fleet, redis_url: str
) -> None:
    fleet = slow_lease_fleet
    host, clients, mirrors = await room_held_by(fleet, 0, [1, 1])
    room = mirrors[0].room
    try:
        assert fleet.processes[0].terminate() == 0  # SIGTERM: drains, exits cleanly
        # The viewers on process 1 are synced to the room where it is now (process 1 took it
        # at once: the lease would have kept it from anyone for a minute).
        moves = await play_until_over(list(zip(clients, mirrors, strict=True)), timeout=30)
        assert moves > 0
        assert all(c.reconnects == 0 for c in clients)
        assert await lease_holder(redis_url, fleet.prefix, room) == f"{fleet.prefix}s1"
    finally:
        for client in (host, *clients):
            await client.close()
