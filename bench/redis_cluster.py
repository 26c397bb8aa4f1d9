"""A real Redis Cluster for the benchmark scripts: primaries with one replica each, on free
ports of 127.0.0.1, in a directory of its own (bench/redis_core.py, bench/failover.py).

Each node is a ``redis-server --cluster-enabled yes`` process (append-only, ``--appendfsync``
as asked, no RDB snapshots, ``cluster-require-full-coverage no`` so that a primary being failed
over stops only its own slots); ``redis-cli --cluster create ... --cluster-replicas 1`` makes
the cluster. A node can be killed (SIGKILL, as a machine lost) and started again on its port
and directory: its ``nodes.conf`` makes it rejoin, as a replica of whoever took its slots.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
from moves import free_port  # (bench/moves.py: the script's folder)


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free now."""
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


@dataclass
class Node:
    port: int
    #: The cluster bus's port (given: port + 10000, the default, may be taken or out of range).
    bus: int
    data: Path
    process: subprocess.Popen[bytes] | None = None
    #: Settings given to every start (``--appendfsync`` ...).
    args: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid if self.process is not None else 0

    def client(self, timeout: float = 2.0) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout,
                           socket_connect_timeout=timeout, decode_responses=True)

    def start(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--cluster-port", str(self.bus),
             "--bind", "127.0.0.1",
             "--dir", str(self.data), "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf", "--appendonly", "yes", "--save", "",
             "--daemonize", "no", "--logfile", str(self.data / "redis.log"), *self.args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        wait_for(lambda: self.ping(), 15, f"node {self.port} to answer")

    def ping(self) -> bool:
        try:
            with self.client(0.5) as c:
                return bool(c.ping())
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            return False

    def kill(self) -> None:
        """SIGKILL: nothing flushed, nothing said to the other nodes."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def info(self, section: str) -> dict[str, str]:
        with self.client() as c:
            return {k: str(v) for k, v in c.info(section).items()}

    def role(self) -> str:
        """``master`` or ``slave`` (Redis' words), or ``down``."""
        try:
            return self.info("replication")["role"]
        except (redis.ConnectionError, redis.TimeoutError):
            return "down"


def wait_for(check: object, seconds: float, what: str) -> None:
    """Poll ``check()`` every 50 ms until true, at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise TimeoutError(f"waited {seconds} s for {what}")


class Cluster:
    """``primaries`` primaries, one replica each, in ``root``."""

    def __init__(self, root: Path, *, primaries: int = 3, node_timeout_ms: int = 2000,
                 fsync: str = "everysec") -> None:
        self.root = root
        args = ["--appendfsync", fsync, "--cluster-node-timeout", str(node_timeout_ms),
                "--cluster-require-full-coverage", "no", "--maxmemory-policy", "noeviction",
                # Failovers back to back: a replica takes over however long its link was down,
                # stays with its primary, and a restarted node's first sync starts at once.
                "--cluster-replica-validity-factor", "0",
                "--cluster-allow-replica-migration", "no", "--repl-diskless-sync-delay", "0"]
        ports = free_ports(primaries * 4)
        self.nodes = [Node(port, bus, root / str(port), args=list(args))
                      for port, bus in zip(ports[::2], ports[1::2], strict=True)]

    @property
    def url(self) -> str:
        """Playhall's URL for the cluster: every node a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        subprocess.run(["redis-cli", "--cluster", "create",
                        *(f"127.0.0.1:{n.port}" for n in self.nodes),
                        "--cluster-replicas", "1", "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        self.wait_healthy(30)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    def primaries(self) -> list[Node]:
        return [n for n in self.live() if n.role() == "master"]

    def replicas(self) -> list[Node]:
        return [n for n in self.live() if n.role() == "slave"]

    def replica_of(self, primary: Node) -> Node:
        """The live replica whose replication link points at ``primary``."""
        for node in self.replicas():
            if int(node.info("replication")["master_port"]) == primary.port:
                return node
        raise LookupError(f"no replica of {primary.port}")

    def healthy(self) -> bool:
        """Every node up, the cluster ``ok`` on each, and as many primaries as replicas, each
        replica's link to its primary up and caught up (its initial sync done)."""
        live = self.live()
        if len(live) != len(self.nodes):
            return False
        try:
            for node in live:
                with node.client() as c:
                    if "cluster_state:ok" not in str(c.execute_command("CLUSTER", "INFO")):
                        return False
            replicas = self.replicas()
            if len(replicas) * 2 != len(live):
                return False
            for replica in replicas:
                info = replica.info("replication")
                if info.get("master_link_status") != "up" or \
                        info.get("master_sync_in_progress") not in ("0", "False"):
                    return False
        except (redis.ConnectionError, redis.TimeoutError):
            return False
        return True

    def wait_healthy(self, seconds: float) -> None:
        wait_for(self.healthy, seconds, "the cluster to be whole")

    def used_memory(self, nodes: list[Node]) -> int:
        return sum(int(n.info("memory")["used_memory"]) for n in nodes)
