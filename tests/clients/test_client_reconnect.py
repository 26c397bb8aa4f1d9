"""The Python client's reconnecting against a scripted server over real websockets, where the
timing of a close must be exact: a socket that drops while the client is already reconnecting
is replaced by that one reconnect loop, never by a second loop and a second connection.
(The real server's side of reconnecting: tests/server/test_redis_url.py and the chaos tests.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection

from playhall_client import Client

from .scripted import HELLO_OK, served


class Script:
    """Connection 1: hello answered, then closed by the server. Connection 2: hello read, then
    closed unanswered (the client is reconnecting and waits for that reply). Connection 3:
    ``third`` is set, and its hello is answered once ``release`` is."""

    def __init__(self) -> None:
        self.connections = 0
        self.close_first = asyncio.Event()
        self.third = asyncio.Event()
        self.release = asyncio.Event()

    async def handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        number = self.connections
        if number == 3:
            self.third.set()
        hello: dict[str, Any] = msgpack.unpackb(await ws.recv())
        if number == 1:
            await ws.send(msgpack.packb({**HELLO_OK, "re": hello["id"], "token": "p1.secret"}))
            await self.close_first.wait()
            await ws.close()
        elif number == 2:
            await ws.close()
        else:
            await self.release.wait()
            await ws.send(msgpack.packb({**HELLO_OK, "re": hello["id"]}))
            await ws.wait_closed()


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[Script, str]]:
    script = Script()
    async with served(script.handle) as url:
        yield script, url


async def test_a_socket_lost_while_reconnecting_is_replaced_by_one_loop(
    scripted: tuple[Script, str],
) -> None:
    script, url = scripted
    client = await Client.connect(url)
    try:
        script.close_first.set()
        await asyncio.wait_for(script.third.wait(), 10)
        # Connection 2 dropped under a pending hello: the loop that opened it goes on, and
        # that loop alone (the closed socket's reader starts none beside it).
        running = [task for task in client._tasks if not task.done()]
        assert len(running) == 1, running
        script.release.set()
        back = await asyncio.wait_for(client.pushes.get(), 10)
        while back.get("state") != "back":
            back = await asyncio.wait_for(client.pushes.get(), 10)
        assert client.online and client.reconnects == 1
        assert script.connections == 3
    finally:
        script.release.set()
        await client.close()


class Refusals:
    """Connection 1: hello answered, then closed. Connections 2 to ``1 + refusals``: closed at
    once. The next: hello answered."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.connections = 0
        self.close_first = asyncio.Event()

    async def handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        number = self.connections
        if 1 < number <= 1 + self.refusals:
            await ws.close()
            return
        hello: dict[str, Any] = msgpack.unpackb(await ws.recv())
        await ws.send(msgpack.packb({**HELLO_OK, "re": hello["id"], "token": "p1.secret"}))
        if number == 1:
            await self.close_first.wait()
            await ws.close()
        else:
            await ws.wait_closed()


class RecordedPauses:
    """``asyncio.sleep`` standing in for the client's pauses (``low`` to ``high`` seconds):
    each recorded and not waited; any other sleep is the real one."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high
        self.pauses: list[float] = []
        self.real = asyncio.sleep

    async def __call__(self, delay: float, result: Any = None) -> Any:
        if self.low <= delay <= self.high:
            self.pauses.append(delay)
            delay = 0
        return await self.real(delay, result)


async def pauses_until_back(
    script: Refusals | HelloRefusals, sleep: RecordedPauses, monkeypatch: pytest.MonkeyPatch
) -> list[float]:
    """Connect to ``script``'s server, have it close the first connection, and return the
    client's pauses (as ``sleep`` records them) until it is back online."""
    async with served(script.handle) as url:
        client = await Client.connect(url)
        try:
            monkeypatch.setattr(asyncio, "sleep", sleep)
            script.close_first.set()
            back = await asyncio.wait_for(client.pushes.get(), 10)
            while back.get("state") != "back":
                back = await asyncio.wait_for(client.pushes.get(), 10)
        finally:
            monkeypatch.undo()
            await client.close()
    return sleep.pauses


async def test_reconnect_pauses_are_spread_about_the_backoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every client of a process that dies loses its connection at the same instant: on one
    fixed schedule they would all come back at the same instants. Each pause is its backoff
    (50 ms doubling) times a factor within 1 +/- JITTER, drawn anew."""
    from playhall_client import client as module

    pauses = await pauses_until_back(
        Refusals(refusals=5), RecordedPauses(0.03, 2 * module.BACKOFF_MAX), monkeypatch
    )
    schedule = [min(module.BACKOFF_FIRST * 2**n, module.BACKOFF_MAX) for n in range(5)]
    assert len(pauses) == 5, pauses
    for pause, backoff in zip(pauses, schedule, strict=True):
        assert backoff * (1 - module.JITTER) <= pause <= backoff * (1 + module.JITTER)
    assert len({round(p / b, 9) for p, b in zip(pauses, schedule, strict=True)}) > 1, pauses


class HelloRefusals:
    """Connection 1: hello answered, then closed. Connection 2: its first ``refusals`` hellos
    refused ``store_failed`` with ``retry_after``, the next answered."""

    def __init__(self, refusals: int, retry_after: float) -> None:
        self.refusals = refusals
        self.retry_after = retry_after
        self.connections = 0
        self.close_first = asyncio.Event()

    async def handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        refusals = self.refusals if self.connections == 2 else 0
        while True:
            hello: dict[str, Any] = msgpack.unpackb(await ws.recv())
            if refusals:
                refusals -= 1
                await ws.send(msgpack.packb({
                    "t": "error", "re": hello["id"], "code": "store_failed",
                    "reason": "Redis is unreachable", "retry_after": self.retry_after,
                }))
                continue
            await ws.send(msgpack.packb({**HELLO_OK, "re": hello["id"], "token": "p1.secret"}))
            break
        if self.connections == 1:
            await self.close_first.wait()
            await ws.close()
        else:
            await ws.wait_closed()


async def test_a_refused_hello_waits_its_retry_after_spread_upwards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Clients refused together (Redis away) get the same ``retry_after``: each waits at least
    that, and up to JITTER more, drawn anew, so they do not all say hello again at once."""
    from playhall_client import client as module

    pauses = await pauses_until_back(
        HelloRefusals(refusals=4, retry_after=1.0), RecordedPauses(0.9, 1.5), monkeypatch
    )
    assert len(pauses) == 4, pauses
    assert all(1.0 <= pause <= 1.0 + module.JITTER for pause in pauses), pauses
    assert len(set(pauses)) > 1, pauses
