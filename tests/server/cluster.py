"""A real Redis Cluster for the tests: three primaries, each with one replica, on loopback ports
of the test's, in a folder of its own; every node a ``redis-server --cluster-enabled yes`` of
this machine (Redis 7 or later: sharded pub/sub), joined by ``redis-cli --cluster create``.

Started once per test session (``redis_cluster`` in conftest.py) and shared: a test that fails
a primary over or kills one leaves a whole cluster behind (three primaries, each with its
replica attached), so the next test finds one. Nothing here persists: every node runs with
``--appendonly no --save ''``, so a killed node comes back empty and is made a replica again.

Without redis-server 7 and redis-cli the tests that need a Cluster are skipped saying why; with
``CI=true`` they fail instead (.ci/run installs them).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from .process import free_port
from .shipped import missing

#: Milliseconds a primary may be unreachable before its replica takes over. Short, so a test
#: that kills one waits a few seconds; long enough that a busy test machine never fails a
#: healthy primary over.
NODE_TIMEOUT_MS = 2000


def cluster_binaries() -> tuple[str, str]:
    """redis-server (version 7 or later) and redis-cli, or the test is skipped (failed on CI)."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        missing("no redis-server and redis-cli for the Redis Cluster tests: "
                "apt-get install redis-server")
    version = subprocess.run([server, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"v=(\d+)\.", version)
    if found is None or int(found.group(1)) < 7:
        missing(f"the Redis Cluster tests need redis-server 7 or later, not {version.strip()}")
    return server, cli


@dataclass
class Node:
    port: int
    #: The cluster bus's port (given: the default, port + 10000, may be taken or out of range).
    bus_port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Topology:
    """The cluster as one node sees it: each primary's port and its replicas' ports."""
    state_ok: bool
    primaries: dict[int, list[int]] = field(default_factory=dict)


class LocalCluster:
    def __init__(self, folder: Path, size: int = 3) -> None:
        self.server, self.cli = cluster_binaries()
        self.folder = folder
        ports = _distinct_free_ports(4 * size)
        self.nodes = [
            Node(ports[2 * i], ports[2 * i + 1], folder / f"node{i}") for i in range(2 * size)
        ]
        self.size = size

    # -- addresses ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The Cluster's URL as Playhall reads it: every node a seed."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    @property
    def seed_url(self) -> str:
        """One node's plain URL (redis-py's ``RedisCluster.from_url`` takes one seed)."""
        return self.nodes[0].url

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    # -- start and stop ---------------------------------------------------------------------

    async def start(self, timeout: float = 30) -> None:
        for node in self.nodes:
            self._spawn(node)
        async with asyncio.timeout(timeout):
            for node in self.nodes:
                # Dead first: a node that could not bind its port (taken by another program
                # since it was picked) says so in its log, whatever else answers there.
                while node.alive and not await _answers(node.port):
                    await asyncio.sleep(0.02)  # polling for readiness
                if not node.alive:
                    raise RuntimeError(f"redis-server on {node.port} did not start:\n"
                                       + self.log_tail(node))
            made = await asyncio.create_subprocess_exec(
                self.cli, "--cluster", "create",
                *(f"127.0.0.1:{n.port}" for n in self.nodes),
                "--cluster-replicas", "1", "--cluster-yes",
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )
            said, _ = await made.communicate()
            if made.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed:\n{said.decode()}")
            await self.wait_whole(timeout)

    def _spawn(self, node: Node) -> None:
        node.folder.mkdir(parents=True, exist_ok=True)
        node.process = subprocess.Popen(
            [
                self.server,
                "--port", str(node.port),
                "--cluster-port", str(node.bus_port),
                "--bind", "127.0.0.1",
                "--dir", str(node.folder),
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                # A replica takes over however long its link was down (a test kills and
                # revives nodes back to back).
                "--cluster-replica-validity-factor", "0",
                # The topology stays the tests': no replica moves to another primary.
                "--cluster-allow-replica-migration", "no",
                "--appendonly", "no",
                "--save", "",
                # A replica's first sync at once (the default waits 5 s for more replicas).
                "--repl-diskless-sync-delay", "0",
                "--logfile", "redis.log",
                "--daemonize", "no",
            ],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive:
                assert node.process is not None
                node.process.send_signal(signal.SIGKILL)  # nothing to keep
                node.process.wait()

    def log_tail(self, node: Node) -> str:
        log = node.folder / "redis.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    # -- what the cluster looks like ----------------------------------------------------------

    async def topology(self, port: int) -> Topology:
        """The cluster as the node on ``port`` sees it (primaries marked failed left out)."""
        client = aioredis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)
        try:
            info = await client.execute_command("CLUSTER", "INFO")
            nodes = await client.execute_command("CLUSTER", "NODES")
        finally:
            await client.aclose()
        if isinstance(info, bytes):
            info = info.decode()
        if isinstance(nodes, bytes):
            nodes = nodes.decode()
        return _parse_topology(info, nodes)

    async def primaries(self) -> list[int]:
        """The primaries' ports, as the first live node sees them."""
        view = await self.topology(self._live()[0].port)
        return sorted(view.primaries)

    async def slots_of(self, port: int) -> list[tuple[int, int]]:
        """The slot ranges the node on ``port`` serves, as it says itself."""
        client = aioredis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)
        try:
            nodes = await client.execute_command("CLUSTER", "NODES")
        finally:
            await client.aclose()
        if isinstance(nodes, bytes):
            nodes = nodes.decode()
        for line in nodes.splitlines():
            fields = line.split()
            if "myself" in fields[2].split(","):
                return [
                    (int(part.partition("-")[0]), int(part.rpartition("-")[2]))
                    for part in fields[8:] if not part.startswith("[")
                ]
        return []

    async def replica_of(self, primary: int) -> int:
        view = await self.topology(primary)
        (replica,) = view.primaries[primary]
        return replica

    async def is_whole(self) -> bool:
        """Every node runs and says the cluster is ok, all agree on who is primary, each
        primary has its one replica, and every replica's link to its primary is up."""
        if not all(node.alive for node in self.nodes):
            return False
        try:
            views = [await self.topology(node.port) for node in self.nodes]
            links = [await _replica_link_up(node.port) for node in self.nodes]
        except (redis.RedisError, OSError):
            return False
        first = views[0]
        return (
            all(view.state_ok and view.primaries == first.primaries for view in views)
            and len(first.primaries) == self.size
            and all(len(replicas) == 1 for replicas in first.primaries.values())
            and all(link is not False for link in links)
        )

    async def wait_whole(self, timeout: float = 30) -> None:
        async with asyncio.timeout(timeout):
            while not await self.is_whole():
                await asyncio.sleep(0.05)  # polling the nodes for a settled cluster

    async def _wait_primary(self, port: int, timeout: float) -> None:
        """Until every live node says the cluster is ok and holds ``port`` for a primary."""
        async with asyncio.timeout(timeout):
            while True:
                try:
                    views = [await self.topology(node.port) for node in self._live()]
                except (redis.RedisError, OSError):
                    views = []
                if views and all(v.state_ok and port in v.primaries for v in views):
                    return
                await asyncio.sleep(0.05)  # polling the nodes for the promotion

    def _live(self) -> list[Node]:
        return [node for node in self.nodes if node.alive]

    # -- faults -----------------------------------------------------------------------------

    async def fail_over(self, primary: int, timeout: float = 30) -> int:
        """``CLUSTER FAILOVER`` on ``primary``'s replica (a coordinated hand-over: the
        replica catches up first, nothing acknowledged is lost); returns the new primary's
        port once every node agrees and the old primary is attached as its replica."""
        replica = await self.replica_of(primary)
        client = aioredis.Redis(port=replica, socket_timeout=5)
        try:
            await client.execute_command("CLUSTER", "FAILOVER")
        finally:
            await client.aclose()
        await self._wait_primary(replica, timeout)
        await self.wait_whole(timeout)
        return replica

    async def kill(self, primary: int, timeout: float = 30, revive: bool = True) -> int:
        """SIGKILL the primary on ``primary``; returns its replica's port once every live
        node holds it for the primary and says the cluster is ok. With ``revive`` the killed
        node is then started again, empty, and waited for as the new primary's replica."""
        replica = await self.replica_of(primary)
        node = self.node(primary)
        assert node.process is not None
        node.process.send_signal(signal.SIGKILL)
        node.process.wait()
        await self._wait_primary(replica, timeout)
        if revive:
            await self.revive(timeout)
        return replica

    async def revive(self, timeout: float = 30) -> None:
        """Start every node that is not running again and wait for a whole cluster: a former
        primary comes back as its successor's replica."""
        for node in self.nodes:
            if not node.alive:
                self._spawn(node)
        await self.wait_whole(timeout)


def _parse_topology(info: str, nodes: str) -> Topology:
    view = Topology(state_ok="cluster_state:ok" in info)
    by_id: dict[str, int] = {}
    replicas: list[tuple[int, str]] = []
    for line in nodes.splitlines():
        fields = line.split()
        if len(fields) < 8:
            continue
        node_id, address, flags, master = fields[0], fields[1], fields[2].split(","), fields[3]
        port = int(address.split("@")[0].rpartition(":")[2])
        if "fail" in flags or "noaddr" in flags:
            continue
        by_id[node_id] = port
        if "master" in flags:
            view.primaries.setdefault(port, [])
        elif "slave" in flags:
            replicas.append((port, master))
    for port, master in replicas:
        if master in by_id and by_id[master] in view.primaries:
            view.primaries[by_id[master]].append(port)
    for replica_list in view.primaries.values():
        replica_list.sort()
    return view


def primary_port(client: RedisCluster, key: str) -> int:
    """The port of the node ``client`` sends ``key``'s commands to (its slot's primary)."""
    node = client.get_node_from_key(key)
    assert node is not None and isinstance(node.port, int), node
    return node.port


async def on_node(port: int, *command: object) -> object:
    """``command`` asked of the node on ``port`` alone (a plain client: no redirection)."""
    client = aioredis.Redis(port=port)
    try:
        return await client.execute_command(*command)
    finally:
        await client.aclose()


async def _replica_link_up(port: int) -> bool | None:
    """For a replica, whether its link to its primary is up (synced); None for a primary."""
    client = aioredis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2)
    try:
        info = await client.info("replication")
    finally:
        await client.aclose()
    if info.get("role") != "slave":
        return None
    return bool(info.get("master_link_status") == "up")


async def _answers(port: int) -> bool:
    client = aioredis.Redis(port=port, socket_connect_timeout=0.5, socket_timeout=1)
    try:
        return bool(await client.ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False
    finally:
        await client.aclose()


def _distinct_free_ports(count: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports
