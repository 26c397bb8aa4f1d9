"""A stop that is itself cancelled while it waits for the loop it stopped to end must end
cancelled: a stop that awaited the loop's task under ``contextlib.suppress(CancelledError)``
swallowed its caller's cancel with the loop's, and the caller (a drain under a deadline, or
``asyncio.run`` ending every task) went on as if never asked to stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable


async def cancelled_while_stopping(stop: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
    """Run ``stop()`` in a task of its own, cancel that task as soon as it waits, and return it
    once it has ended."""

    async def stopping() -> None:
        await stop()

    stopper = asyncio.create_task(stopping())
    # One pass of the loop: the stopper's first step runs up to its first wait (the loop's
    # end, as the loop's task cannot end within the pass that cancelled it).
    await asyncio.sleep(0)
    assert not stopper.done(), "the stop ended without waiting for anything"
    stopper.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await stopper
    return stopper
