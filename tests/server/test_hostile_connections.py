"""Hostile connections against a real server process: half-open connections from one address
leave room for everyone else, a flood of plain GETs is refused past its bound while other
addresses still get pages, refusals are logged once per address and window, running out of
descriptors is logged, and two requests in one write get the first answer and a clean close.

The attacker's connections come from 127.0.0.2 (any 127/8 address reaches the loopback), the
honest client's from 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from errno import ECONNRESET, EMFILE
from pathlib import Path

import pytest

from playhall.net.descriptors import DescriptorWatch
from playhall.net.ratelimit import AddressBuckets
from playhall.net.refusals import RefusalLog
from playhall_client import Client

from .conftest import free_port
from .helpers import finished_against_a_bot
from .process import ServerProcess

ATTACKER = "127.0.0.2"


async def _until(condition: Callable[[], bool], timeout: float = 15) -> None:
    async def wait() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


def _lines(server: ServerProcess, event: str) -> list[dict[str, object]]:
    """The server's log lines of ``event`` so far."""
    found = []
    for line in server.stderr().splitlines():
        if line.startswith("{") and f'"{event}"' in line:
            entry = json.loads(line)
            if entry.get("event") == event:
                found.append(entry)
    return found


Start = Callable[..., Awaitable[ServerProcess]]


@pytest.fixture
async def start(redis_url: str, tmp_path: Path) -> AsyncIterator[Start]:
    """Starts a server process with the given flags (log at info, stderr to a file); it returns
    once the process is ready (``/healthz`` answers 200), as the tests' checks of it expect."""
    started: list[ServerProcess] = []

    async def run(*flags: str, descriptors: int | None = None) -> ServerProcess:
        server = ServerProcess(
            free_port(), redis_url, f"h{len(started)}{tmp_path.name[-6:]}:", "hostile",
            [*flags, "--log-level", "info"], log_path=tmp_path / f"server{len(started)}.log",
            descriptors=descriptors,
        )
        started.append(server)
        await server.start()
        await server.until_ready()
        return server

    yield run
    for server in started:
        server.terminate()


def _half_open(port: int, count: int, source: str = ATTACKER) -> list[socket.socket]:
    """``count`` TCP connections that never send a byte (the kernel completes them whether
    the server accepts them or not)."""
    held = []
    for _ in range(count):
        sock = socket.socket()
        sock.bind((source, 0))
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        held.append(sock)
    return held


def _descriptors(server: ServerProcess) -> int:
    assert server.process is not None
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def _http(port: int, path: str = "/", source: str = "127.0.0.1") -> tuple[int, bytes]:
    """One plain GET: the status and the whole answer (the server closes after it)."""
    with socket.socket() as sock:
        sock.settimeout(10)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        raw = _read_to_end(sock)
    return int(raw.split(b" ", 2)[1]), raw


def _read_to_end(sock: socket.socket) -> bytes:
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    return raw


async def test_half_open_connections_from_one_address_leave_room_for_others(start: Start) -> None:
    # Room for some 50 connections; one address may hold 16 (and 8 waiting for their 429).
    server = await start("--connections-per-address", "16", descriptors=64)
    held = _half_open(server.port, 300)
    try:
        # The server took the connections it takes (beside its own dozen descriptors).
        await _until(lambda: _descriptors(server) >= 30)
        client = await asyncio.wait_for(Client.connect(server.url), 15)
        try:
            room = await asyncio.wait_for(finished_against_a_bot(client), 30)
            assert room.view["status"] == "finished"
        finally:
            await client.close()
    finally:
        for sock in held:
            sock.close()
    # Nearly 300 refusals from one address, one line (it says how many went unlogged since
    # the last, none before the first).
    refused = _lines(server, "connection_refused")
    assert [line["address"] for line in refused] == [ATTACKER]
    assert refused[0]["unlogged"] == 0 and refused[0]["window"] == 60.0


async def test_a_get_flood_is_refused_past_the_bound_while_others_get_pages(start: Start) -> None:
    server = await start("--http-rate", "2", "--http-burst", "10")
    answers = [await asyncio.to_thread(_http, server.port, "/", ATTACKER) for _ in range(40)]
    statuses = [status for status, _ in answers]
    # The burst, then about `rate` a second more: at most a few of the rest in these seconds.
    assert statuses[:10] == [200] * 10
    assert 25 <= statuses.count(429) <= 30, statuses
    refusal = next(raw for status, raw in answers if status == 429)
    head = refusal.split(b"\r\n\r\n")[0].decode().lower()
    assert "retry-after: 1" in head.split("\r\n")
    # Another address still gets the page, and health checks are never counted.
    assert (await asyncio.to_thread(_http, server.port, "/"))[0] == 200
    for _ in range(15):
        assert (await asyncio.to_thread(_http, server.port, "/healthz", ATTACKER))[0] == 200
    refused = _lines(server, "http_refused")
    assert [line["address"] for line in refused] == [ATTACKER]


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_running_out_of_descriptors_is_logged(start: Start, loop: str) -> None:
    server = await start("--connections-per-address", "0", "--event-loop", loop, descriptors=48)
    held = _half_open(server.port, 100)
    try:
        await _until(lambda: len(_lines(server, "descriptors_exhausted")) >= 1)
    finally:
        for sock in held:
            sock.close()
    exhausted = _lines(server, "descriptors_exhausted")[0]
    assert exhausted["limit"] == 48 and exhausted["level"] == "error"


class Lines:
    """A logger that keeps what it is given."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, object]]] = []

    def info(self, event: str, **fields: object) -> None:
        self.lines.append((event, fields))

    error = info


def test_refusals_are_logged_once_per_address_and_window() -> None:
    now = [0.0]
    lines = Lines()
    refusals = RefusalLog(lines, "http_refused", window=60.0, capacity=3, clock=lambda: now[0])
    for _ in range(500):
        refusals.refused("a")
    refusals.refused("b")
    now[0] = 59.9
    refusals.refused("a")
    now[0] = 60.0
    refusals.refused("a")
    refusals.refused("b")
    assert [(fields["address"], fields["unlogged"]) for _, fields in lines.lines] == [
        ("a", 0), ("b", 0), ("a", 500), ("b", 0),
    ]  # fmt: skip
    for address in ("c", "d", "e", "f"):  # at most `capacity` addresses remembered
        refusals.refused(address)
    refusals.refused("a")
    assert lines.lines[-1][1]["address"] == "a" and len(lines.lines) == 9


def test_running_out_of_descriptors_is_logged_once_per_window() -> None:
    now = [0.0]
    lines = Lines()
    watch = DescriptorWatch(window=60.0, clock=lambda: now[0], logger=lines)
    for n in range(100):
        now[0] = n * 0.5
        watch.exhausted("accept", error="EMFILE")
    now[0] = 60.0
    watch.exhausted("count", open=1023)
    assert [(f["how"], f["unlogged"]) for _, f in lines.lines] == [("accept", 0), ("count", 99)]
    # The loop's report of a failed accept goes there; anything else to the usual handler.
    loop = asyncio.new_event_loop()
    try:
        seen: list[object] = []
        loop.set_exception_handler(lambda _, context: seen.append(context["message"]))
        restore = watch.install(loop)
        now[0] = 200.0
        loop.call_exception_handler({"message": "accept", "exception": OSError(EMFILE, "")})
        loop.call_exception_handler({"message": "other", "exception": OSError(ECONNRESET, "")})
        assert [f["how"] for _, f in lines.lines] == ["accept", "count", "accept"]
        assert seen == ["other"]
        restore()
        loop.call_exception_handler({"message": "accept", "exception": OSError(EMFILE, "")})
        assert seen == ["other", "accept"]
    finally:
        loop.close()


def test_an_address_past_its_rate_waits() -> None:
    now = [0.0]
    buckets = AddressBuckets(rate=2.0, burst=3, capacity=2, clock=lambda: now[0])
    assert [buckets.take("b") for _ in range(4)] == [0.0, 0.0, 0.0, 0.5]
    assert [buckets.take("a") for _ in range(5)] == [0.0, 0.0, 0.0, 0.5, 0.5]
    now[0] = 0.5  # a token back: one more, then waiting again
    assert buckets.take("a") == 0.0 and buckets.take("a") == 0.5
    buckets.take("c")  # at most `capacity` addresses: "b", the least recent, is forgotten
    assert len(buckets) == 2
    assert [buckets.take("b") for _ in range(3)] == [0.0, 0.0, 0.0]  # a full bucket again
    assert AddressBuckets(rate=0, burst=0).take("a") == 0.0


async def test_two_requests_in_one_write_get_the_first_answer_and_a_close(start: Start) -> None:
    server = await start()
    for first in (b"GET /healthz", b"GET /", b"HEAD /"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            request = first + b" HTTP/1.1\r\nHost: x\r\n\r\n"
            sock.sendall(request + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = _read_to_end(sock)  # to the end: the server closed the connection
        assert raw.startswith(b"HTTP/1.1 200 OK\r\n"), raw[:200]
        assert raw.count(b"HTTP/1.1 ") == 1
    assert server.terminate() == 0
    log = server.stderr()
    assert "Traceback" not in log and "AssertionError" not in log
    assert not [line for line in log.splitlines() if '"level": "error"' in line]
