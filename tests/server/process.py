"""Run the real server as a separate process (``python -m playhall.cli serve``), so tests can
SIGKILL it like an operator's ``kill -9``. With no Redis address it starts its embedded Redis
(pass ``--data-dir`` in ``extra``)."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import resource
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake

from .metrics_scrape import http_get
from .shipped import start_on_free_ports

ROOT = Path(__file__).resolve().parents[2]


class PortTaken(RuntimeError):
    """The server's port was bound by something else before the server bound it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    def __init__(
        self,
        port: int,
        redis_url: str | None,
        prefix: str,
        instance: str,
        extra: list[str] | None = None,
        log_path: Path | None = None,
        descriptors: int | None = None,
        plugins: list[Path] | None = None,
    ) -> None:
        self.port = port
        self.instance = instance  # its name in leases and the fleet's registry
        #: The process's limit of open file descriptors (RLIMIT_NOFILE), if lowered.
        self.descriptors = descriptors
        self.log_path = log_path  # the server's stderr goes there (appended), else to a pipe
        self.args = [
            sys.executable,
            "-m",
            "playhall.cli",
            "serve",
            "--port",
            str(port),
            *(["--redis-url", redis_url] if redis_url else []),
            "--bot-delay",
            "0",
            "--log-format",
            "json",
            "--log-level",
            "warning",
            # A free port each: tests run several servers side by side.
            "--metrics-listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
            *(extra or []),
        ]
        self.env = {
            **os.environ,
            "PLAYHALL_KEY_PREFIX": prefix,
            "PLAYHALL_INSTANCE": instance,
            # ``plugins``: more folders, a game plugin's metadata and source (tests/plugins.py).
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / d) for d in ("protocol", "server", "clients")]
                + [str(p) for p in plugins or ()]
            ),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self._started = False  # a restart keeps its port: clients reconnect to it

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    async def start(self, timeout: float = 20, keep_port: bool = False) -> None:
        """Start the server and wait until it accepts a websocket. The port was free when the
        test chose it, but anything on the machine may bind it before the server does (the
        ephemeral ports of other tests' connections and listeners): a first start that finds
        it taken moves to another free port, a restart (or ``keep_port``) never does."""
        if self._started or keep_port:
            await self._start(timeout)
        else:
            await start_on_free_ports(
                functools.partial(self._start, timeout),
                lambda failure: isinstance(failure, PortTaken), self._move, "server",
            )
        self._started = True

    def _move(self) -> None:
        self.port = free_port()
        self.args[self.args.index("--port") + 1] = str(self.port)
        if self.log_path is not None:
            self.log_path.write_bytes(b"")  # the log holds only the server that ran

    async def _start(self, timeout: float) -> None:
        log = self.log_path.open("ab") if self.log_path is not None else None
        try:
            self.process = subprocess.Popen(
                self.args,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=log if log is not None else subprocess.PIPE,
                preexec_fn=self._limit_descriptors if self.descriptors is not None else None,
            )
        finally:
            if log is not None:
                log.close()  # the child holds its own copy
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:  # ready when it accepts a websocket
            try:
                async with connect(self.url, open_timeout=1):
                    return
            # Something else answering on the port (another server's admin listener, given it
            # as an ephemeral port) refuses the handshake: the server itself then fails to bind.
            except (OSError, InvalidHandshake):
                if self.process.poll() is not None or loop.time() > deadline:
                    err = self.stderr() if self.process.poll() is not None else ""
                    if "address already in use" in err and f"'127.0.0.1', {self.port})" in err:
                        taken = f"server did not start: port {self.port} is taken"
                        raise PortTaken(taken) from None
                    raise RuntimeError(f"server did not start:\n{err[-3000:]}") from None
                await asyncio.sleep(0.05)  # polling for readiness, not standing in for sync

    async def until_ready(self, timeout: float = 20) -> None:
        """Until ``/healthz`` answers 200: the process accepts websockets as soon as it
        listens, but it is ready (listed in the fleet's registry, its rooms restored) only
        after; a test that expects the ready answers waits for this."""
        async with asyncio.timeout(timeout):
            while (await http_get(self.port, "/healthz"))[0] != 200:
                await asyncio.sleep(0.05)  # polling for readiness, not standing in for sync

    def _limit_descriptors(self) -> None:  # in the child, before it runs the server
        assert self.descriptors is not None
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.descriptors, hard))

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def terminate(self, timeout: float = 30) -> int | None:
        if self.process is None:  # never started (the test failed before)
            return None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def stderr(self) -> str:
        """What the server wrote to stderr (wait for it to end first when it goes to a pipe)."""
        if self.log_path is not None:
            return self.log_path.read_text(errors="replace")
        assert self.process is not None and self.process.stderr is not None
        return self.process.stderr.read().decode()

    def log_lines(self) -> list[dict[str, Any]]:
        """The server's log lines (JSON, one event each), as :meth:`stderr` has them."""
        return [json.loads(line) for line in self.stderr().splitlines() if line.startswith("{")]

    async def logged(self, event: str, timeout: float = 10) -> None:
        """Until the server has logged ``event`` (its log going to ``log_path``)."""
        assert self.log_path is not None, "a server logging to a pipe is read once it ended"
        async with asyncio.timeout(timeout):
            while not any(line["event"] == event for line in self.log_lines()):
                await asyncio.sleep(0.05)
