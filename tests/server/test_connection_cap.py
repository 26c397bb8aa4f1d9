"""Connections per client address: past ``connections_per_address`` a handshake is refused
with HTTP 429; behind a proxy the address comes from the configured forwarded header only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus

from playhall import app
from playhall.net.admission import REFUSING, Admission

from .conftest import server_config


async def _open(port: int, forwarded: str | None = None) -> ClientConnection:
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else None
    return await connect(f"ws://127.0.0.1:{port}/", compression=None, additional_headers=headers)


async def _refused(port: int, forwarded: str | None = None) -> int:
    with pytest.raises(InvalidStatus) as refused:
        await _open(port, forwarded)
    return refused.value.response.status_code


async def _until(condition: Callable[[], bool], timeout: float = 10) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


@pytest.fixture
async def capped(redis_url: str) -> AsyncIterator[app.Running]:
    running = await app.start(server_config(redis_url, connections_per_address=3))
    yield running
    await running.drain()


async def test_an_address_holds_at_most_the_cap(capped: app.Running) -> None:
    port = capped.port
    held = [await _open(port) for _ in range(3)]
    # Ten more tries from the same address: each refused at the handshake, none held.
    assert [await _refused(port) for _ in range(10)] == [429] * 10
    assert capped.endpoint.admission.open == {"127.0.0.1": 3}
    # A forwarded header is not trusted unless configured: still the peer's address.
    assert await _refused(port, forwarded="10.9.8.7") == 429
    await held.pop().close()
    await _until(lambda: capped.endpoint.admission.open.get("127.0.0.1") == 2)
    held.append(await _open(port))
    for ws in held:
        await ws.close()
    await _until(lambda: capped.endpoint.admission.open == {})


async def test_behind_a_proxy_the_forwarded_address_counts(redis_url: str) -> None:
    config = server_config(
        redis_url, connections_per_address=2, forwarded_header="X-Forwarded-For"
    )
    running = await app.start(config)
    port = running.port
    try:
        # The proxy appends the address it saw; what the client wrote before it is ignored.
        held = [await _open(port, f"{spoof}, 203.0.113.5") for spoof in ("1.1.1.1", "2.2.2.2")]
        assert await _refused(port, "3.3.3.3, 203.0.113.5") == 429
        held.append(await _open(port, "203.0.113.6"))
        held.append(await _open(port))  # no header: the peer's address
        assert running.endpoint.admission.open == {
            "203.0.113.5": 2, "203.0.113.6": 1, "127.0.0.1": 1,
        }  # fmt: skip
        for ws in held:
            await ws.close()
    finally:
        await running.drain()


def test_address_of_a_peer_and_of_forwarded_headers() -> None:
    plain = Admission(1)
    trusting = Admission(1, "X-Real-IP")
    headers = Headers({"X-Real-IP": "198.51.100.7"})
    assert plain.address("192.0.2.1:5555", headers) == "192.0.2.1"
    assert plain.address("::1:5555", headers) == "::1"
    assert trusting.address("192.0.2.1:5555", headers) == "198.51.100.7"
    assert trusting.address("192.0.2.1:5555", Headers()) == "192.0.2.1"
    unlimited = Admission(0)
    unlimited.opened("a")
    assert not unlimited.full("a")
    plain.opened("a")
    assert plain.full("a") and not plain.full("b")
    plain.closed("a")
    assert plain.open == {}
    # Past the cap, a few connections per address may wait for their 429; the rest are dropped.
    assert [plain.refusing("a") for _ in range(REFUSING + 2)] == [True] * REFUSING + [False] * 2
    assert plain.refusing("b")
    plain.refused("a")
    assert plain.refusing("a") and not plain.refusing("a")
