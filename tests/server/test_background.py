"""Work nobody waits for: background tasks (``playhall.tasks.Tasks``), kept until they end, a
failure logged under its part's name, waited for and cancelled together; writes not waited
for (``store.outage.failure_of``), Redis failing counted as an outage, a bug logged; and the
server's loops (``playhall.tasks.pause``), which end when cancelled even where the cancel was
lost on its way (Python 3.11's ``asyncio.wait_for`` in redis-py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis.asyncio
from redis.exceptions import ConnectionError as RedisConnectionError

import playhall
from playhall import app
from playhall.store.outage import Outage, failure_of, sweep_forever
from playhall.tasks import Tasks, pause

from .conftest import server_config


class Log:
    """A logger that keeps the events it is given."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, dict[str, Any]]] = []

    def error(self, event: str, **fields: Any) -> None:
        self.errors.append((event, fields))


async def test_a_failing_task_is_logged_under_its_parts_name_and_let_go() -> None:
    log = Log()
    tasks = Tasks("room stop", log)

    async def fail() -> None:
        raise ValueError("a bug")

    task = tasks.spawn(fail())
    await tasks.wait()
    assert task.done() and len(tasks) == 0
    assert [(event, fields["error"]) for event, fields in log.errors] == [
        ("room_stop_failed", "ValueError('a bug')")
    ]


async def test_wait_ends_when_every_task_has_and_cancel_cancels_them_unlogged() -> None:
    log = Log()
    tasks = Tasks("results", log)
    release = asyncio.Event()
    waiting = tasks.spawn(release.wait())
    sleeping = tasks.spawn(asyncio.sleep(3600))
    assert len(tasks) == 2
    release.set()
    sleeping.cancel()
    await asyncio.wait_for(tasks.wait(), 5)
    assert waiting.done() and sleeping.cancelled() and len(tasks) == 0
    stuck = tasks.spawn(asyncio.sleep(3600))
    tasks.cancel()
    await asyncio.wait_for(tasks.wait(), 5)
    assert stuck.cancelled() and not log.errors


async def test_a_write_not_waited_for_counts_redis_failing_and_logs_a_bug() -> None:
    log, outage = Log(), Outage()
    loop = asyncio.get_running_loop()
    done: list[asyncio.Future[Any]] = [loop.create_future() for _ in range(4)]
    down, bug = RedisConnectionError("gone"), ValueError("a bug")
    done[0].set_result(1)
    done[1].cancel()
    done[2].set_exception(down)
    done[3].set_exception(bug)
    assert [failure_of(d, "edge publish", log, outage, edge="e1") for d in done] == [
        None, None, down, bug
    ]
    assert outage.failures == 1 and outage.ongoing
    assert log.errors == [("edge_publish_failed", {"error": "ValueError('a bug')", "edge": "e1"})]
    assert failure_of(done[2], "lobby publish", log) is down  # no outage given: only returned
    assert outage.failures == 1 and len(log.errors) == 1


async def _lose_the_cancel() -> None:
    """Wait, and return as if nothing happened when cancelled: what Python 3.11's
    ``asyncio.wait_for`` does when the future it waits on is done in the pass the cancel
    lands in (redis-py waits so on every command's write)."""
    try:
        await asyncio.get_running_loop().create_future()
    except asyncio.CancelledError:
        return


async def ended(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` ends within 5 s (the bound of a failure, not a wait)."""
    done, _ = await asyncio.wait([task], timeout=5)
    return task in done


async def test_a_cancel_lost_on_its_way_is_raised_at_the_loops_next_pause() -> None:
    turns = 0
    waiting = asyncio.Event()

    async def loop_forever() -> None:
        nonlocal turns
        while True:
            turns += 1
            waiting.set()
            await _lose_the_cancel()
            await pause(0)

    task = asyncio.create_task(loop_forever())
    await waiting.wait()
    task.cancel()
    assert await ended(task) and task.cancelled()
    assert turns == 1


async def test_a_sweep_that_lost_its_cancel_ends_its_sweeps() -> None:
    log, outage = Log(), Outage()
    sweeps = 0
    swept = asyncio.Event()

    async def sweep() -> None:
        nonlocal sweeps
        sweeps += 1
        swept.set()
        await _lose_the_cancel()

    task = asyncio.create_task(sweep_forever(sweep, 0, outage, "test sweep", log))
    await swept.wait()
    task.cancel()
    assert await ended(task) and task.cancelled()
    assert sweeps == 1 and not log.errors and not outage.ongoing


async def test_loops_of_redis_py_commands_end_whenever_they_are_cancelled(redis_url: str) -> None:
    """The real case: a loop over redis-py's commands (a socket timeout set, as the server's
    client has), cancelled at forty points of its commands. Without ``pause`` some of them
    lose the cancel and loop on."""
    client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=5)
    went_on = []
    try:
        for shift in range(40):

            async def commands() -> None:
                while True:
                    await client.zrangebyscore("test:lost-cancel", "-inf", 5, start=0, num=10)
                    await pause(0)

            task = asyncio.create_task(commands())
            for _ in range(shift % 7):  # (passes of the loop: a different point of the command)
                await asyncio.sleep(0)
            task.cancel()
            if not await ended(task):
                went_on.append(shift)
                task.cancel()
    finally:
        await client.aclose()
    assert went_on == []


async def test_a_drain_ends_every_task_the_server_started(redis_url: str) -> None:
    before = asyncio.all_tasks()
    running = await app.start(server_config(redis_url))
    started = asyncio.all_tasks() - before
    assert started  # (its loops: sweeps, renewals, the bus)
    await running.drain()
    assert [task for task in asyncio.all_tasks() - before if not task.done()] == []


def test_the_servers_code_sleeps_through_pause() -> None:
    """Every loop of the server ends when cancelled only if it sleeps with ``pause``."""
    root = Path(playhall.__file__).parent
    sleeping = sorted(
        str(path.relative_to(root)) for path in root.rglob("*.py")
        if path.name != "tasks.py" and "asyncio.sleep(" in path.read_text()
    )
    assert sleeping == []
