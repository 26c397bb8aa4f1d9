"""Background tasks: kept referenced until they end (the event loop holds only a weak reference
to a task), and a failure logged rather than left for the loop's "never retrieved" warning."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Tasks:
    """The background tasks of one part of the server. A task that raises is logged on ``log``
    as ``<what>_failed`` (spaces as underscores, as ``store.outage.sweep_forever`` names its
    failures); one cancelled is not."""

    def __init__(self, what: str, log: Any) -> None:
        self._failed = what.replace(" ", "_") + "_failed"
        self._log = log
        self._running: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._running.add(task)
        task.add_done_callback(self._done)
        return task

    def __len__(self) -> int:
        return len(self._running)

    def cancel(self) -> None:
        for task in self._running:
            task.cancel()

    async def wait(self) -> None:
        """Until every task running now has ended (their failures are logged, not raised)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log.error(self._failed, error=repr(task.exception()), exc_info=task.exception())


async def cancel_and_wait(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel ``tasks`` (None stands for one never started) and wait until each has ended;
    how each ended is not raised."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)


async def pause(seconds: float) -> None:
    """``asyncio.sleep(seconds)`` for the server's loops, which run until their task is
    cancelled: a cancel that was asked of this task and lost on the way is raised here first.

    Python 3.11's ``asyncio.wait_for``, which redis-py puts around every command's write (its
    socket timeout), loses one: when the write is done in the same pass of the event loop as
    the cancel lands, it returns the write's result and drops the cancel (3.12's ``wait_for``,
    rewritten on ``asyncio.timeout``, does not). The task's ``cancelling()`` count still says it
    was asked. A loop that slept on would go on for ever, and so would the stop that waits for
    it (a drain, or ``asyncio.run`` cancelling every task at the process's end)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    await asyncio.sleep(seconds)
