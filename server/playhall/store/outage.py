"""Telling a store failure from a bug, and logging a Redis outage as one story instead of a
traceback per refused command.

While Redis is away (restarting, unreachable, still loading its file) every command that needs
it fails. Each failure is answered ``store_failed`` (retryable), not ``internal``; the log says
``redis_unavailable`` once when the first one comes, ``redis_still_unavailable`` with a count
every ``report_every`` seconds while they go on, and ``redis_available`` (with the count and
the duration) at the first answer after.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Final

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from playhall import log
from playhall.tasks import pause

logger = log.get("playhall.store")


def is_store_error(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis failing rather than a bug: an exception of the Redis client, or
    one raised inside it by the socket under it (uvloop raises ``RuntimeError`` on a write to
    a connection the peer reset)."""
    if isinstance(exc, RedisError) or type(exc).__module__.startswith("redis"):
        return True  # (RedisError: the commit connection's own CommandTimeout too)
    if isinstance(exc, (OSError, RuntimeError, TimeoutError)):
        tb = exc.__traceback__
        while tb is not None:
            if _in_redis(tb):
                return True
            tb = tb.tb_next
    if isinstance(exc, AttributeError) and exc.__traceback__ is not None:
        # redis-py's connection writing to a socket another task dropped meanwhile (its writer
        # None: a Cluster node's connections closed as its primary failed over): raised in
        # redis-py's own code, not in a caller's.
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        return _in_redis(tb)
    return False


def _in_redis(tb: TracebackType) -> bool:
    return str(tb.tb_frame.f_globals.get("__name__", "")).startswith("redis.")


def outcome_unknown(exc: BaseException) -> bool:
    """Whether a failed write may have been carried out all the same: its connection dropped or
    timed out once the command may have been sent, so the reply was lost. (An error reply
    means the command did not run.)"""
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, TimeoutError)):
        return True
    return is_store_error(exc) and not type(exc).__module__.startswith("redis")


def failure_of(
    done: asyncio.Future[Any], what: str, log: Any, outage: Outage | None = None,
    **context: object,
) -> BaseException | None:
    """What a finished write that nobody waits for (a publish) failed with, or None (it was
    carried out, or cancelled). Redis failing counts in ``outage`` when given (``during``
    ``what``); anything else, a bug, is logged on ``log`` as ``<what>_failed`` (spaces as
    underscores) with ``context``. Either way the caller makes up for the loss as it can."""
    if done.cancelled():
        return None
    exc = done.exception()
    if exc is None:
        return None
    report(exc, what, log, outage, **context)
    return exc


def report(
    exc: BaseException, what: str, log: Any, outage: Outage | None = None, **context: object
) -> None:
    """:func:`failure_of`'s account of a failure ``exc`` already in hand."""
    if not is_store_error(exc):
        log.error(what.replace(" ", "_") + "_failed", error=repr(exc), **context)
    elif outage is not None:
        outage.failed(exc, during=what, **context)


#: Seconds between the counts logged while an outage lasts.
REPORT_EVERY: Final = 5.0

#: Seconds with no failure after which an answer ends an outage. An answer sooner does not: on
#: a Redis Cluster one primary away fails its own slots' commands while the others' are
#: answered, and each answer would end the outage and the next failure start another (thousands
#: of each in a minute of failovers).
SETTLE: Final = 1.0


class Outage:
    """Whether Redis is away now, as the server last saw it, and how many commands it refused
    meanwhile; and, for the metrics, how many it refused and how many outages began since the
    process started."""

    def __init__(
        self, report_every: float = REPORT_EVERY, settle: float = SETTLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.report_every = report_every
        self.settle = settle
        self.clock = clock
        self.since: float | None = None  # monotonic time of the first failure, while away
        self.last_failure = 0.0
        #: Ends the outage ``settle`` seconds after its last failure, if an answer came since.
        self._settling: asyncio.TimerHandle | None = None
        self.failures = 0
        self._reported = 0.0
        self.failures_total = 0
        self.outages_total = 0

    @property
    def ongoing(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException, **context: object) -> None:
        """A command failed because Redis did not answer it."""
        now = self.last_failure = self.clock()
        self.failures += 1
        self.failures_total += 1
        if self.since is None:
            self.outages_total += 1
            self.since = self._reported = now
            logger.error("redis_unavailable", error=f"{type(exc).__name__}: {exc}", **context)
        elif now - self._reported >= self.report_every:
            self._reported = now
            logger.warning(
                "redis_still_unavailable",
                failures=self.failures,
                seconds=round(now - self.since, 1),
                error=f"{type(exc).__name__}: {exc}",
            )

    def answered(self) -> None:
        """Redis answered a command: an outage, if there was one, is over once ``settle``
        seconds have passed since the last failure (now, or when they have, unless another
        failure comes first: part of Redis is still away)."""
        if self.since is None:
            return
        wait = self.last_failure + self.settle - self.clock()
        if wait > 0:
            if self._settling is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:  # (no loop: told at the next answer)
                    return
                self._settling = loop.call_later(wait, self._settled)
            return
        self._over()

    def _settled(self) -> None:
        self._settling = None
        if self.since is not None and self.clock() - self.last_failure >= self.settle:
            self._over()

    def _over(self) -> None:
        if self.since is not None:
            logger.warning(
                "redis_available",
                failures=self.failures,
                seconds=round(self.clock() - self.since, 1),
            )
            self.since = None
            self.failures = 0


async def sweep_forever(
    sweep: Callable[[], Awaitable[Any]], every: float, outage: Outage, what: str, log: Any
) -> None:
    """Run ``sweep`` every ``every`` seconds for the life of the process: Redis failing a pass
    (away, stalled, a connection reset) counts in the outage log (``during`` ``what``), a bug
    is logged (``<what>_failed``, spaces as underscores), and either way the next pass comes as
    usual (whatever is still due waits for it)."""
    while True:
        try:
            await sweep()
        except Exception as exc:
            if is_store_error(exc):
                outage.failed(exc, during=what)
            else:
                log.exception(what.replace(" ", "_") + "_failed")
        await pause(every)
