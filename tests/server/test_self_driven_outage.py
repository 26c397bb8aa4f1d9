"""What a room does by itself (a clock running out, an away player's stand-in, its bots) goes on
after a Redis outage or a lost reply, with nobody connected to ask for it: the step that met the
fault is tried again once Redis answers, and a change whose reply was lost is settled from a
timer, not by the next client's request. The failures are counted in the outage story, never
logged as a traceback per try. Over a real Redis behind a fault-injecting proxy, with the
server as a process of its own, whose log the test reads."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from playhall.rooms.record import RoomRecord

from .conftest import free_port
from .faults import ResetProxy
from .helpers import Table, started_table, wait_for_redis
from .process import ServerProcess
from .redis_replies import raw

#: How long Redis stays away once the step met it (the fault's shape, not a synchronisation).
OUTAGE = 1.0

#: The two ways the room's step meets the outage: Redis went before the commit reached it
#: (nothing stored), or it ran the commit and went before replying (stored, reply lost).
FAULTS: dict[str, dict[str, Any]] = {"down": {"forward": False}, "lost": {"forward": True}}

#: What drives the room once both players are gone: a turn clock (on_timeout ``forfeit``: the
#: game ends by the timeout; ``bot``: a stand-in, then bots play to the end), or the away
#: takeover (stand-ins for away players, who then play to the end).
STEPS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "clock-forfeit": ({"clock": "turn", "clock_ms": 700, "on_timeout": "forfeit"}, []),
    "clock-stand-in": ({"clock": "turn", "clock_ms": 700, "on_timeout": "bot"}, []),
    "away": ({}, ["--away-takeover", "0.5"]),
}


async def finished(redis_url: str, prefix: str, room: str) -> RoomRecord:
    """The room as Redis holds it once it is finished (nobody is connected: no push says). The
    record stored whole is enough: a change of status always stores it."""
    redis = aioredis.Redis.from_url(redis_url)
    record: RoomRecord | None = None

    async def over() -> bool:
        nonlocal record
        record = RoomRecord.unpack(raw(await redis.hget(f"{prefix}room:{{{room}}}", "d")))
        return record.status == "finished"

    try:
        await wait_for_redis(over, 20)
    finally:
        await redis.aclose()
    assert record is not None
    return record



def assert_told_as_an_outage(lines: list[dict[str, Any]]) -> None:
    """The failures were told as one outage story, with no traceback."""
    events = [line["event"] for line in lines]
    assert events.count("redis_unavailable") >= 1, events
    assert events.count("redis_available") >= 1, events
    assert not [line for line in lines if "exception" in line], "a traceback was logged"
    assert "room_command_failed" not in events


@pytest.mark.parametrize(
    ("step", "fault"),
    [("clock-forfeit", "down"), ("clock-stand-in", "lost"), ("away", "down"), ("away", "lost")],
)
async def test_a_step_of_a_room_nobody_is_in_goes_on_after_an_outage(
    redis_url: str, proxy: ResetProxy, tmp_path: Path, step: str, fault: str
) -> None:
    options, flags = STEPS[step]
    prefix = f"s{uuid.uuid4().hex[:8]}:"
    server = ServerProcess(
        free_port(), proxy.url, prefix, "self-driven", flags, log_path=tmp_path / "server.log"
    )
    await server.start()
    table: Table | None = None
    try:
        table = await started_table(server.url, "mantis", 2, options or None)
        version = table.mirrors[0].version
        # The room's next change is the step the server makes by itself: it meets the fault.
        proxy.arm(
            b"EVALSHA", f"{prefix}room:{{{table.room}}}:log".encode(), then_down=True,
            **FAULTS[fault],
        )
        for client in table.clients:  # both players gone
            client.reconnect = False
        await table.close()
        async with asyncio.timeout(10):
            await proxy.cut.wait()
        await asyncio.sleep(OUTAGE)
        proxy.come_up()
        record = await finished(redis_url, prefix, table.room)
        assert record.version > version
        if step == "clock-forfeit":  # the step itself ends the game
            assert record.outcome is not None and record.outcome["reason"] == "timeout"
        await server.logged("redis_available")  # (a second after the last failure)
    finally:
        await asyncio.to_thread(server.terminate)  # (the proxy runs on this loop)
    assert_told_as_an_outage(server.log_lines())
