"""A real HAProxy in front of real server processes: the shipped deploy/haproxy/haproxy.cfg
adapted to test ports (its listeners on loopback ports of the test's, its servers the test's
processes instead of the compose service found by Docker's DNS). Everything else (round robin,
no stickiness, the /healthz checks, the retries, the websocket timeouts) is the file as shipped,
so a change to it is what is tested.

Without haproxy (``/usr/sbin/haproxy`` or on PATH) the tests that need it are skipped saying
why; with ``CI=true`` they fail instead (.ci/run installs it).
"""

from __future__ import annotations

import asyncio
import csv
import functools
import io
import signal
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from .process import ServerProcess, free_port
from .shipped import adapted, executable, missing, start_on_free_ports, stop

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "haproxy" / "haproxy.cfg"


def haproxy_executable() -> str:
    found = executable("haproxy")
    if found is None:
        missing("no haproxy for the load-balancer tests: apt-get install haproxy")
    return found


def adapt(port: int, stats_port: int, upstreams: list[int]) -> str:
    servers = "".join(f"    server p{i} 127.0.0.1:{p}\n" for i, p in enumerate(upstreams))
    return adapted(SHIPPED, [
        (r"^resolvers docker\n(?:[ \t]+.*\n)+", "", 1),
        (r" init-addr none resolvers docker$", "", 1),
        (r"^\s*server-template .*\n", servers, 1),
        (r"^(\s*)bind :8765$", rf"\g<1>bind 127.0.0.1:{port}", 1),
        (r"^(\s*)bind :8404$", rf"\g<1>bind 127.0.0.1:{stats_port}", 1),
        # A test machine's descriptor limit, not a production one's.
        (r"^(\s*)maxconn \d+$", r"\g<1>maxconn 2000", 1),
    ])


@dataclass
class Balancer:
    folder: Path
    port: int
    stats_port: int
    upstreams: list[int]
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The websocket address through the balancer."""
        return f"ws://127.0.0.1:{self.port}/"

    async def start(self, timeout: float = 15) -> None:
        """Start HAProxy and wait until it accepts connections and has seen every server
        answer its health check once; on two other ports if one was taken since it was picked
        (HAProxy exits saying it cannot bind)."""
        await start_on_free_ports(
            functools.partial(self._start_once, timeout),
            lambda failure: "cannot bind socket" in self.log(), self._move, "haproxy",
        )

    def _move(self) -> None:
        self.port, self.stats_port = free_port(), free_port()
        (self.folder / "haproxy.cfg").write_text(adapt(self.port, self.stats_port, self.upstreams))
        (self.folder / "haproxy.log").unlink()

    async def _start_once(self, timeout: float) -> None:
        config = self.folder / "haproxy.cfg"
        check = subprocess.run([haproxy_executable(), "-c", "-f", str(config)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        with (self.folder / "haproxy.log").open("ab") as log:
            self.process = subprocess.Popen(
                [haproxy_executable(), "-db", "-f", str(config)],
                stdout=log, stderr=subprocess.STDOUT,
            )
        await self.wait_until(lambda states: all(s == "UP" for s in states.values()), timeout)

    async def states(self) -> dict[int, str]:
        """Each server's state as HAProxy sees it (UP, DOWN, ...), by its port; a server not
        checked yet since HAProxy started counts as ``unchecked``."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.stats_port)
        try:
            writer.write(b"GET /;csv HTTP/1.0\r\n\r\n")
            # (HAProxy answers at once; what does not may be another process on the port.)
            raw = await asyncio.wait_for(reader.read(), 2)
        finally:
            writer.close()
        head, _, body = raw.decode(errors="replace").partition("\r\n\r\n")
        if not head.startswith("HTTP/1.1 200"):  # something else on its port: HAProxy is not up
            raise ConnectionError(f"not HAProxy's stats page: {head[:100]!r}")
        if "transfer-encoding: chunked" in head.lower():
            body = _unchunk(body)
        rows = csv.DictReader(io.StringIO(body.lstrip("# ")))
        found: dict[int, str] = {}
        for row in rows:
            if row["pxname"] == "playhall" and row["svname"].startswith("p"):
                port = self.upstreams[int(row["svname"][1:])]
                checked = row["check_status"] not in ("", "INI")
                found[port] = row["status"].split()[0] if checked else "unchecked"
        return found

    async def wait_until(
        self, condition: Callable[[dict[int, str]], bool], timeout: float = 20
    ) -> dict[int, str]:
        """Wait until the servers' states (by port) satisfy ``condition``; they are returned."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        states: dict[int, str] = {}
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"haproxy exited: {self.log()}")
            try:
                states = await self.states()
            except OSError:
                states = {}  # not listening yet
            if states and condition(states):
                return states
            if loop.time() > deadline:
                raise TimeoutError(f"haproxy's servers stayed {states}")
            await asyncio.sleep(0.1)  # polling HAProxy's view, not standing in for sync

    def log(self) -> str:
        path = self.folder / "haproxy.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        stop(self.process, signal.SIGUSR1)  # soft stop: finish, then exit


def _unchunk(body: str) -> str:
    """A chunked HTTP body's content."""
    content = []
    while body:
        size, _, rest = body.partition("\r\n")
        length = int(size.split(";")[0], 16)
        if length == 0:
            break
        content.append(rest[:length])
        body = rest[length + 2:]
    return "".join(content)


def configure(folder: Path, upstreams: list[int]) -> Balancer:
    """The shipped configuration, adapted, in ``folder``, for servers on ``upstreams``."""
    haproxy_executable()  # skip (or fail under CI) before making anything
    folder.mkdir(parents=True, exist_ok=True)
    port, stats_port = free_port(), free_port()
    (folder / "haproxy.cfg").write_text(adapt(port, stats_port, upstreams))
    return Balancer(folder, port, stats_port, upstreams)


@dataclass
class Fleet:
    """Server processes on one Redis and key prefix, behind one balancer."""

    processes: list[ServerProcess]
    balancer: Balancer
    prefix: str

    @property
    def url(self) -> str:
        return self.balancer.url


#: Starts a fleet: the number of processes, and per process its Redis address (the shared one
#: if None) and any more ``playhall serve`` arguments.
StartFleet = Callable[..., Awaitable[Fleet]]


async def start_fleet(
    folder: Path,
    redis_url: str,
    prefix: str,
    count: int,
    extra: list[str] | None = None,
    redis_urls: list[str | None] | None = None,
) -> Fleet:
    """``count`` server processes (instances ``<prefix>p<i>``; ``redis_urls[i]``, when given
    and not None, is process i's Redis address instead of ``redis_url``, e.g. a fault proxy's)
    and HAProxy in front of them, all started."""
    folder.mkdir(parents=True, exist_ok=True)
    processes = [
        ServerProcess(
            free_port(),
            (redis_urls[i] if redis_urls and redis_urls[i] else None) or redis_url,
            prefix,
            f"{prefix}p{i}",
            extra,
            log_path=folder / f"server{i}.log",
        )
        for i in range(count)
    ]
    balancer = Balancer(folder, 0, 0, [])  # (its folder holds the servers' logs too)
    fleet = Fleet(processes, balancer, prefix)
    try:
        await asyncio.gather(*(p.start() for p in processes))
        # A process's port is final once it started (it moves if the first was taken).
        fleet.balancer = configure(folder, [p.port for p in processes])
        await fleet.balancer.start()
    except BaseException:
        stop_fleet(fleet)
        raise
    return fleet


def stop_fleet(fleet: Fleet) -> None:
    fleet.balancer.stop()
    for process in fleet.processes:
        if process.process is not None and process.process.poll() is None:
            process.terminate()
