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

from playhall_client import Client, RoomMirror, ServerError

from ..helpers import redis_client, wait_for_redis
from ..redis_replies import raw, stream_entries
from ..test_play_mantis import play_until_over
from .conftest import FORWARD_TIMEOUT, Fleet, fleet_processes, play_on, running


async def log_mids(redis_url: str, prefix: str, room: str) -> Counter[object]:
    """How often each move id is in the room's log."""
    client = redis_client(redis_url)
    try:
        entries = stream_entries(await client.xrange(f"{prefix}room:{{{room}}}:log"))
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
    """Two processes whose leases last ten minutes: a room that moves between them within the
    test moved because its owner handed it over, not because its lease ran out, nor because a
    restore pass (every ``lease_ms/3``, 200 s) found it."""
    pair = fleet_processes(redis_url, Path(tmp_path_factory.mktemp("slow")), count=2,
                           lease_ms=600_000)
    async with running(pair):
        yield pair


async def lease_holder(redis_url: str, prefix: str, room: str) -> str:
    """The instance whose lease the room has ("<owner>|<fence>"), "" if none."""
    client = redis_client(redis_url)
    try:
        lease = await client.get(f"{prefix}lease:{{{room}}}")
    finally:
        await client.aclose()
    return "" if lease is None else raw(lease).decode().rpartition("|")[0]


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


async def test_a_drained_owner_hands_a_room_nobody_views_whose_clock_runs_over_at_once(
    slow_lease_fleet: Fleet, redis_url: str
) -> None:
    """Nobody elsewhere asks for a room with no viewers, yet its clock must run out on time:
    the draining owner hands it to the other process, which takes it at once and ends the
    game when the clock runs out."""
    fleet = slow_lease_fleet
    clock = {"clock": "turn", "clock_ms": 8000, "on_timeout": "forfeit"}
    host = await Client.connect(fleet.url(0), name="host")
    made = await host.create("mantis", 2, options=clock, sit=False)
    room = made.room
    players = [await Client.connect(fleet.url(0), name=f"p{i}") for i in range(2)]
    mirrors = [await player.join(room) for player in players]
    for player in players:
        await player.ready(room)
    for mirror in mirrors:
        await mirror.wait(lambda m: m.view["status"] == "playing")
    for client in (host, *players):
        await client.close()
    assert fleet.processes[0].terminate() == 0

    async def taken() -> bool:
        return await lease_holder(redis_url, fleet.prefix, room) == f"{fleet.prefix}s1"

    await wait_for_redis(taken, timeout=20)
    watcher = await Client.connect(fleet.url(1), name="watcher")
    try:
        mirror = await watcher.join(room, watch=True)
        await mirror.wait(lambda m: m.view["status"] == "finished", 30)
        assert mirror.view["outcome"]["reason"] == "timeout"
    finally:
        await watcher.close()


async def test_clocks_and_stand_ins_go_on_when_the_owner_dies(
    fleet: Fleet, redis_url: str
) -> None:
    """Four seats on three processes, a turn clock whose timeout puts the server's bot in: one
    player never moves (the bot stands in for them), the room's process is killed mid-game;
    the clock and the stand-in go on wherever the room is taken over, and the game ends."""
    clock = {"clock": "turn", "clock_ms": 2000, "on_timeout": "bot"}
    host = await Client.connect(fleet.url(0), name="host")
    made = await host.create("mantis", 4, options=clock, sit=False)
    room = made.room
    clients = [await Client.connect(fleet.url(i), name=f"p{i}") for i in (1, 2, 1, 2)]
    mirrors = [await c.join(room) for c in clients]
    try:
        for client in clients:
            await client.ready(room)
        idle = mirrors[3]  # never moves: its clock runs out, the bot plays for it
        await idle.wait(lambda m: any(s["stand_in"] == "timeout" for s in m.view["seats"]), 30)
        fleet.processes[0].kill()
        await play_on(list(zip(clients[:3], mirrors[:3], strict=True)))
        for mirror in mirrors:
            await mirror.wait(lambda m: m.view["status"] == "finished", 30)
        assert all(c.reconnects == 0 for c in clients)
        mids = await log_mids(redis_url, fleet.prefix, room)
        assert all(count == 1 for count in mids.values()), mids
    finally:
        for client in (host, *clients):
            await client.close()
        await fleet.ensure_running()


async def test_the_players_of_a_process_that_died_are_away_in_rooms_held_elsewhere(
    fleet: Fleet,
) -> None:
    """The owner notices an edge whose channel nobody listens on: its connections are
    detached (their seats no longer present), as a closed connection's would be."""
    host, clients, mirrors = await room_held_by(fleet, 0, [1, 2])
    try:
        watch = mirrors[0]
        await watch.wait(lambda m: m.presence == [True, True])
        fleet.processes[2].kill()
        await watch.wait(lambda m: m.presence == [True, False], 15)
    finally:
        for client in (host, *clients[:1]):
            await client.close()
        await fleet.ensure_running()
