"""The test harness's server process: a port taken between choosing it and the server binding
it (by another test's connection or listener) moves a first start to another port, never a
restart, which clients expect on the port they knew."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from .process import ServerProcess


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on for the whole test."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


async def test_a_first_start_on_a_taken_port_moves_to_a_free_one(
    redis_url: str, taken_port: int
) -> None:
    server = ServerProcess(taken_port, redis_url, "proc:", "proc")
    try:
        await server.start()
        assert server.port != taken_port
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
