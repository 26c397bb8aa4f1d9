"""A room's inbox: a bounded first-in first-out queue with one consumer, the room's task, and
the commands that wait in it.

Not ``asyncio.Queue``: with one consumer and a refuse-when-full policy most of its machinery
(putters waiting for room, several getters, loop binding checks) is never used, yet each move
paid for it on both ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Generic, TypeVar

from playhall import log
from playhall.rooms.audience import Viewer
from playhall.rooms.handle import Replies, ReplyTo
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


class Command:
    """One change asked of a room, and where its answer goes: to a request's address
    (``reply_to``, through the room's reply router), to a waiting task (``waiter``), or
    nowhere (the room's own commands). (A plain class, not a dataclass: one is made per move;
    see docs/operations.md, "The compiled build".)"""

    __slots__ = ("kind", "session", "args", "request", "reply_to", "waiter")

    def __init__(
        self,
        kind: str,
        session: Viewer | None,
        args: dict[str, Any],
        request: int | None = None,
        reply_to: ReplyTo | None = None,
        waiter: asyncio.Future[dict[str, Any]] | None = None,
    ) -> None:
        self.kind = kind
        self.session = session
        self.args = args
        self.request = request  # the asking request's id, for the log
        #: Answered in the actor's own pass of the loop (so a reply leaves with the updates it
        #: caused), once: both are cleared when the command is answered.
        self.reply_to = reply_to
        self.waiter = waiter

    def finish(
        self, replies: Replies, room: str, result: dict[str, Any] | None,
        error: RoomError | None = None,
    ) -> None:
        """Answer the command (once): through ``replies`` to its address, or to its waiter."""
        to, waiter = self.reply_to, self.waiter
        self.reply_to = self.waiter = None
        try:
            if to is not None:
                replies.deliver(to, self.kind, room, result, error)
            elif waiter is not None and not waiter.done():
                if error is not None:
                    waiter.set_exception(error)
                else:
                    waiter.set_result(result or {})
        except Exception:  # the router's bug must not take the room's task down with it
            logger.exception("reply_failed", command=self.kind, req=self.request)

    def viewer(self) -> Viewer:
        """The session that asked (every command from outside has one)."""
        assert self.session is not None
        return self.session
