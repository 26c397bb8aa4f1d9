"""The room inbox: first in, first out; refuses when full unless forced; get waits."""

from __future__ import annotations

import asyncio

from playhall.rooms.inbox import Inbox


async def test_items_come_out_in_order_and_a_full_inbox_refuses() -> None:
    inbox: Inbox[int] = Inbox(2)
    assert inbox.put(1) and inbox.put(2)
    assert not inbox.put(3) and len(inbox) == 2
    assert inbox.put(4, force=True) and len(inbox) == 3
    assert [await inbox.get() for _ in range(3)] == [1, 2, 4]


async def test_get_waits_for_the_next_item() -> None:
    inbox: Inbox[str] = Inbox(4)
    getter = asyncio.ensure_future(inbox.get())
    await asyncio.sleep(0)  # let it start waiting
    assert not getter.done()
    inbox.put("x")
    assert await getter == "x"


def test_take_all_empties_it() -> None:
    inbox: Inbox[int] = Inbox(4)
    for i in range(3):
        inbox.put(i)
    assert inbox.take_all() == [0, 1, 2] and len(inbox) == 0
