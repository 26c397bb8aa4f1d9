"""Background tasks (``playhall.tasks.Tasks``): kept until they end, a failure logged under its
part's name, waited for and cancelled together."""

from __future__ import annotations

import asyncio
from typing import Any

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
