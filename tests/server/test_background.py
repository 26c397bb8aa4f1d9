"""Work nobody waits for: background tasks (``playhall.tasks.Tasks``), kept until they end, a
failure logged under its part's name, waited for and cancelled together; and writes not waited
for (``store.outage.failure_of``), Redis failing counted as an outage, a bug logged."""

from __future__ import annotations

import asyncio
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from playhall.store.outage import Outage, failure_of
from playhall.tasks import Tasks


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
