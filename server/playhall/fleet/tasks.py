"""Background tasks of the fleet's parts: kept referenced until they end, and a failure
logged rather than left for the loop's "never retrieved" warning."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from playhall import log

logger = log.get("playhall.fleet")


class Tasks:
    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._running.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("fleet_task_failed", error=repr(task.exception()),
                         exc_info=task.exception())
