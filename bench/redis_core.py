"""What one Redis core carries: moves per second of Redis CPU, and rooms per GB of Redis memory,
on one Redis primary and on a Redis Cluster.

    python bench/redis_core.py --rooms 200 --seconds 20 --servers 2 --modes single cluster

For each mode: Redis started fresh (``single``: one redis-server, append-only, everysec, as
bench/moves.py starts it; ``cluster``: bench/redis_cluster.py's three primaries with one replica
each, the same persistence), ``--servers`` Playhall processes on it (one key prefix, caps lifted
as in bench/moves.py), and ``--rooms`` rooms of two players driven by bench/loadgen.py's lean
clients (one load process per server, both players of a room on the same server: no request
is forwarded between processes), each pair moving as soon as it may and playing a rematch when
a game ends (the finished room stays in Redis, as it does for ``finished_ttl``).

Over the measured window (``--seconds`` after ``--warmup``), from /proc of each redis-server:

- ``redis_us_per_move``: Redis CPU (user + system, every primary) per acknowledged move, and
  ``moves_per_redis_core`` = 1e6 / that: the moves/s one Redis core would carry at this mix;
  on the cluster also the replicas' CPU per move (``replica_us_per_move``);
- ``server_us_per_move`` and ``moves_per_server_core``: the same for the Playhall processes;
- ``redis_idle_cpu``: every node's CPU (cores) over 5 s before the play, servers up (a
  cluster's bus and replication pings, the servers' renewals), and
  ``all_nodes_net_us_per_move``: every node's CPU per move less that idle share.

Then, with the play stopped, INFO memory's ``used_memory_dataset`` (the keys, without Redis's
own buffers: a replica's backlog, clients' buffers, which do not grow with rooms) against the
fresh Redis's, per room record found (``SCAN`` of the room records on every primary):
``bytes_per_room`` (everything the play left: rooms, their logs, players, histories, the
lobby's indexes) and ``rooms_per_gb``, with the rooms' mean log length
(``log_entries_per_room``: moves, joins, readies), since a room's size grows with its log;
``used_memory_mb`` is the whole growth, buffers included. On the cluster, memory is the primaries'
(each replica holds a copy of its primary's).

Machine load (``uptime``) is printed with every mode's numbers: on a shared machine Redis's
CPU per move moves with it less than moves/s do, but it moves. Not part of the test command:
numbers belong in docs/operations.md, with the machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

from failover import uptime  # noqa: E402  (bench/failover.py: the script's folder)
from fleet import start_server  # noqa: E402
from moves import cpu_seconds, free_port, load_process, wait_listening  # noqa: E402
from redis_cluster import Cluster, Node  # noqa: E402

from playhall.store.embedded import EmbeddedRedis  # noqa: E402

#: Seconds Redis's CPU is measured with the servers up and nobody playing.
IDLE_SECONDS = 5.0


class Single:
    """One Redis primary, shaped like the cluster's nodes for the measurements."""

    def __init__(self, root: Path) -> None:
        self.redis = EmbeddedRedis(root / "redis", port=free_port(), fsync="everysec")

    def start(self) -> None:
        self.redis.start()
        self.node = Node(self.redis.port or 0, 0, self.redis.data_dir, process=self.redis.process)

    @property
    def url(self) -> str:
        return self.redis.url

    def primaries(self) -> list[Node]:
        return [self.node]

    def replicas(self) -> list[Node]:
        return []

    def stop(self) -> None:
        self.redis.stop()


def room_records(node: Node, prefix: str) -> list[str]:
    """The keys of the room records (hashes) a node holds."""
    with node.client(30) as c:
        return [key for key in c.scan_iter(match=f"{prefix}room:*", count=1000, _type="hash")]


def log_lengths(node: Node, records: list[str]) -> list[int]:
    """The move log's length of each room record given."""
    with node.client(30) as c:
        pipe = c.pipeline(transaction=False)
        for key in records:
            # The log is the record's name with ":log" after it (the room's tag included).
            pipe.xlen(f"{key}:log")
        return [int(n) for n in pipe.execute()]


def used_memory(nodes: list[Node], field: str = "used_memory") -> int:
    return sum(int(n.info("memory")[field]) for n in nodes)


def run(mode: str, rooms: int, servers: int, seconds: float, warmup: float) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix=f"playhall-redis-core-{mode}-"))
    store: Single | Cluster = Single(data) if mode == "single" else Cluster(data / "cluster")
    procs: list[subprocess.Popen[bytes]] = []
    report: dict[str, Any] = {"mode": mode, "rooms": rooms, "servers": servers,
                              "seconds": seconds, "uptime_before": uptime()}
    try:
        store.start()
        primaries, replicas = store.primaries(), store.replicas()
        fresh = used_memory(primaries)
        fresh_data = used_memory(primaries, "used_memory_dataset")
        prefix = f"c{uuid.uuid4().hex[:6]}:"
        ports = [free_port() for _ in range(servers)]
        procs = [start_server(port, store.url, prefix, f"{prefix}{i}", "",
                              log=data / f"server{i}.log") for i, port in enumerate(ports)]
        for port in ports:
            wait_listening(port, 600)
        # Redis's CPU with the servers up and nobody playing: what it costs without moves
        # (a cluster's bus, replication's pings, the servers' lease and registry renewals).
        redis_pids = [n.pid for n in primaries + replicas]
        idle0, t_idle = sum(cpu_seconds(p) for p in redis_pids), time.perf_counter()
        time.sleep(IDLE_SECONDS)
        idle = (sum(cpu_seconds(p) for p in redis_pids) - idle0) / (time.perf_counter() - t_idle)
        queue: Any = mp.Queue()
        start_at = time.time() + 1.0
        cores = set(os.sched_getaffinity(0))
        share = [rooms // servers + (1 if i < rooms % servers else 0) for i in range(servers)]
        workers = [mp.Process(target=load_process,
                              args=("lean", port, n, seconds, warmup, start_at, queue, cores))
                   for port, n in zip(ports, share, strict=True) if n]
        for worker in workers:
            worker.start()
        time.sleep(max(0.0, start_at - time.time()) + warmup)
        pids = {"primary": [n.pid for n in primaries], "replica": [n.pid for n in replicas],
                "server": [p.pid for p in procs]}
        before = {k: sum(cpu_seconds(p) for p in v) for k, v in pids.items()}
        t0 = time.perf_counter()
        time.sleep(seconds)
        wall = time.perf_counter() - t0
        after = {k: sum(cpu_seconds(p) for p in v) for k, v in pids.items()}
        report["uptime_during"] = uptime()
        results = [queue.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join(30)
        moves = sum(r["moves"] for r in results)
        cpu = {k: after[k] - before[k] for k in pids}
        lat = sorted(x for r in results for x in r["lat"])
        report.update({
            "moves_per_s": round(moves / seconds),
            "p50_ms": round(statistics.median(lat) * 1e3, 2) if lat else None,
            "p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1e3, 2) if lat else None,
            "redis_cpu": round(cpu["primary"] / wall, 2),
            "redis_us_per_move": round(cpu["primary"] / moves * 1e6, 1) if moves else None,
            "moves_per_redis_core": round(moves / cpu["primary"]) if cpu["primary"] else None,
            "server_cpu": round(cpu["server"] / wall, 2),
            "server_us_per_move": round(cpu["server"] / moves * 1e6, 1) if moves else None,
            "moves_per_server_core": round(moves / cpu["server"]) if cpu["server"] else None,
        })
        if replicas:
            report["replica_us_per_move"] = round(cpu["replica"] / moves * 1e6, 1)
        # The same without what Redis spends idle (every node, primaries and replicas).
        busy = cpu["primary"] + cpu["replica"] - idle * wall
        report["redis_idle_cpu"] = round(idle, 3)
        report["all_nodes_net_us_per_move"] = round(busy / moves * 1e6, 1) if moves else None
        records = [key for node in primaries for key in room_records(node, prefix)]
        lengths = [n for node in primaries
                   for n in log_lengths(node, room_records(node, prefix))]
        held = used_memory(primaries) - fresh
        data_held = used_memory(primaries, "used_memory_dataset") - fresh_data
        report.update({
            "rooms_in_redis": len(records),
            "log_entries_per_room": round(statistics.mean(lengths), 1) if lengths else None,
            "used_memory_mb": round(held / 2**20, 1),
            "dataset_mb": round(data_held / 2**20, 1),
            "bytes_per_room": round(data_held / len(records)) if records else None,
            "rooms_per_gb": round(2**30 * len(records) / data_held) if data_held > 0 else None,
        })
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(30)
        store.stop()
        shutil.rmtree(data, ignore_errors=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["single", "cluster"],
                        choices=["single", "cluster"])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="interleaved runs per mode; each printed")
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    for _ in range(args.repeat):
        for mode in args.modes:
            print(json.dumps(run(mode, args.rooms, args.servers, args.seconds, args.warmup)),
                  flush=True)


if __name__ == "__main__":
    main()
