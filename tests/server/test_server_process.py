"""The test harness's processes: a port taken between choosing it and the process binding it
(by another test's connection or listener) moves a server's first start to another port, never
a restart, which clients expect on the port they knew; and HAProxy's and nginx's starts to
others, whichever of their two ports was taken."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from playhall_client import Client

from . import balancer, nginx, shipped
from .process import ServerProcess, free_port


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


@pytest.mark.parametrize("which", ["port", "stats_port"])
async def test_haproxy_on_a_taken_port_moves_to_free_ones(
    redis_url: str, held_port: int, which: str, tmp_path: Path
) -> None:
    balancer.haproxy_executable()  # skip (or fail under CI) before starting anything
    server = ServerProcess(free_port(), redis_url, "proc:", "proc")
    try:
        await server.start()
        proxy = balancer.configure(tmp_path / "haproxy", [server.port])
        setattr(proxy, which, held_port)
        (proxy.folder / "haproxy.cfg").write_text(
            balancer.adapt(proxy.port, proxy.stats_port, proxy.upstreams)
        )
        try:
            await proxy.start()
            assert held_port not in (proxy.port, proxy.stats_port)
            assert await proxy.states() == {server.port: "UP"}
            client = await Client.connect(proxy.url, name="through")  # the game's port answers
            await client.close()
        finally:
            proxy.stop()
    finally:
        server.terminate()


@pytest.mark.parametrize("which", ["http_port", "https_port"])
async def test_nginx_on_a_taken_port_moves_to_free_ones(
    held_port: int, which: str, tmp_path: Path
) -> None:
    proxy = nginx.configure(tmp_path / "nginx", free_port())
    setattr(proxy, which, held_port)
    (proxy.folder / "playhall.conf").write_text(nginx.adapt(
        proxy.upstream, proxy.http_port, proxy.https_port, proxy.cert, proxy.folder / "key.pem"
    ))
    try:
        await proxy.start()
        assert held_port not in (proxy.http_port, proxy.https_port)
        assert proxy.process is not None and proxy.process.poll() is None
        assert "bind() to" not in proxy.errors()
    finally:
        # (Quit at once: nginx's graceful quit this soon after its start takes 10 s.)
        shipped.stop(proxy.process, signal.SIGTERM)
