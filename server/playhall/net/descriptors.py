"""Noticing that the process ran out of file descriptors: then ``accept`` fails and nobody new
can connect, so an operator must hear of it, but once per window, not once per failed accept.

Two ways in, as the event loop allows. asyncio's own loop reports a failed ``accept``
(``EMFILE``, ``ENFILE``) to the loop's exception handler, which :meth:`DescriptorWatch.install`
sets. uvloop reports nothing in the usual case (libuv accepts and closes the waiting
connections with a descriptor it keeps in reserve), so :meth:`DescriptorWatch.check`, run every
second, counts the descriptors open (``/proc/self/fd``, where there is one) against the
process's limit (``RLIMIT_NOFILE``): with at most one free, accepts are failing.
"""

from __future__ import annotations

import asyncio
import errno
import os
import resource
import time
from collections.abc import Callable
from typing import Any, Final

from playhall import log
from playhall.tasks import pause

logger = log.get("playhall.net")

#: Seconds in which running out of descriptors is logged once.
WINDOW: Final = 60.0
#: What accept fails with when the process (or the system) has no descriptor left.
OUT_OF_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE})


def open_descriptors() -> int | None:
    """How many descriptors the process has open; None where that cannot be read."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # less the one listdir itself opened
    except OSError as failure:
        if failure.errno in OUT_OF_DESCRIPTORS:  # not even one left to look with
            return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return None


class DescriptorWatch:
    def __init__(
        self,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
        logger: Any = logger,
    ) -> None:
        self.logger = logger
        self.window = window
        self._clock = clock
        self._logged_at: float | None = None
        self._unlogged = 0  # times seen since the last line and not logged

    def exhausted(self, how: str, **fields: Any) -> None:
        """The process is out of descriptors (``how``: "accept" failed, or "count"ed)."""
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < self.window:
            self._unlogged += 1
            return
        self.logger.error(
            "descriptors_exhausted", how=how, unlogged=self._unlogged, window=self.window,
            limit=resource.getrlimit(resource.RLIMIT_NOFILE)[0], **fields,
        )
        self._logged_at, self._unlogged = now, 0

    def check(self) -> None:
        """Count the descriptors open against the limit."""
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        opened = open_descriptors()
        if opened is not None and limit != resource.RLIM_INFINITY and opened >= limit - 1:
            self.exhausted("count", open=opened)

    async def watch(self, every: float = 1.0) -> None:
        while True:
            await pause(every)
            self.check()

    def install(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """Take the loop's reports of ``accept`` failing for want of descriptors (each one
        otherwise an error line with a traceback); everything else goes where it went. Returns
        what puts the loop's previous handler back."""
        previous = loop.get_exception_handler()

        def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            failure = context.get("exception")
            if isinstance(failure, OSError) and failure.errno in OUT_OF_DESCRIPTORS:
                self.exhausted("accept", error=errno.errorcode.get(failure.errno, ""))
            elif previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handler)
        return lambda: loop.set_exception_handler(previous)
