"""A room's inbox: a bounded first-in first-out queue with one consumer, the room's task.

Not ``asyncio.Queue``: with one consumer and a refuse-when-full policy most of its machinery
(putters waiting for room, several getters, loop binding checks) is never used, yet each move
paid for it on both ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

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
