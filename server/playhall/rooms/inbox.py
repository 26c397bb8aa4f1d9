"""A room's inbox: a bounded first-in first-out queue with one consumer, the room's task, and
the commands that wait in it.

Not ``asyncio.Queue``: with one consumer and a refuse-when-full policy most of its machinery
(putters waiting for room, several getters, loop binding checks) is never used, yet each move
paid for it on both ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from playhall import log
from playhall.rooms.audience import Viewer
from playhall.rooms.table import RoomError

logger = log.get("playhall.room")

T = TypeVar("T")


class Inbox(Generic[T]):
    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._items: deque[T] = deque()
        self._waiter: asyncio.Future[None] | None = None
        # The consumer's loop, kept from its first wait: on Python 3.11 every
        # ``asyncio.get_running_loop()`` is a getpid() system call (its fork check), and the
        # room's task waits here once per move.
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T, *, force: bool = False) -> bool:
        """Queue ``item``; False (and nothing queued) when full, unless ``force``."""
        if len(self._items) >= self.bound and not force:
            return False
        self._items.append(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

    async def get(self) -> T:
        """The oldest item, waiting for one if need be."""
        while not self._items:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            await self._waiter
        return self._items.popleft()

    def take_all(self) -> list[T]:
        """Everything queued, oldest first; the inbox is left empty."""
        items = list(self._items)
        self._items.clear()
        return items


#: Told how a command ended: its result, or the error that refused it.
Done = Callable[[dict[str, Any] | None, RoomError | None], None]


class Command:
    """One change asked of a room. (A plain class, not a dataclass: one is made per move; see
    docs/operations.md, "The compiled build".)"""

    __slots__ = ("kind", "session", "args", "request", "done")

    def __init__(
        self,
        kind: str,
        session: Viewer | None,
        args: dict[str, Any],
        request: int | None = None,
        done: Done | None = None,
    ) -> None:
        self.kind = kind
        self.session = session
        self.args = args
        self.request = request
        #: Told the outcome, in the actor's own pass of the loop (so a reply leaves with the
        #: updates it caused); None for internal commands, which nobody waits for.
        self.done = done

    def finish(self, result: dict[str, Any] | None, error: RoomError | None = None) -> None:
        if self.done is not None:
            done, self.done = self.done, None
            try:
                done(result, error)
            except Exception:  # the waiter's bug must not take the room's task down with it
                logger.exception("reply_failed", command=self.kind, req=self.request)

    def viewer(self) -> Viewer:
        """The session that asked (every command from outside has one)."""
        assert self.session is not None
        return self.session


def settle(future: asyncio.Future[dict[str, Any]], result: Any, error: RoomError | None) -> None:
    """A command's outcome into ``future`` (a :data:`Done` once the future is bound)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result or {})
