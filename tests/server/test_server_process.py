"""The test harness's server process: a port taken between choosing it and the server binding
it (by another test's connection or listener) moves a first start to another port, never a
restart, which clients expect on the port they knew."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from .process import ServerProcess


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on for the whole test."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


async def _not_found(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    writer.close()


@pytest.fixture(params=["silent", "answering"])
async def held_port(request: pytest.FixtureRequest) -> AsyncIterator[int]:
    """A port taken by a listener that never answers, or by one that answers HTTP with 404, as
    another server's admin listener does when the kernel gave it that port as an ephemeral one."""
    if request.param == "silent":
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            yield int(taken.getsockname()[1])
        return
    listener = await asyncio.start_server(_not_found, "127.0.0.1", 0)
    async with listener:
        yield int(listener.sockets[0].getsockname()[1])


async def test_a_first_start_on_a_taken_port_moves_to_a_free_one(
    redis_url: str, held_port: int
) -> None:
    server = ServerProcess(held_port, redis_url, "proc:", "proc")
    try:
        await server.start()
        assert server.port != held_port
        assert server.process is not None and server.process.poll() is None
    finally:
        server.terminate()


async def test_a_start_that_keeps_its_port_fails_when_it_is_taken(
    redis_url: str, taken_port: int
) -> None:
    server = ServerProcess(taken_port, redis_url, "proc:", "proc")
    try:
        with pytest.raises(RuntimeError, match="server did not start"):
            await server.start(keep_port=True)
        assert server.port == taken_port
    finally:
        server.terminate()
