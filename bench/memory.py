"""The server's memory: RSS per busy room and per idle connection.

    python bench/memory.py [--rooms 500] [--connections 10000] [--seconds 10]

Three numbers of the server's resident set (RSS, from /proc), each of a fresh server started
as bench/moves.py starts it, with its own Redis:

- ``idle_rss_mb``: the server started, nobody connected;
- ``per_connection_kb``: ``--connections`` websocket connections opened and greeted (``hello``),
  then left idle for two seconds: the RSS they added, per connection;
- ``per_room_kb``: ``--rooms`` rooms of two players playing as in bench/moves.py (its
  ``run``, ``--seconds`` measured after ``--warmup``): the RSS at the window's end less the idle
  server's, per room (the two connections of each room included).

The connections are opened by this process, in batches, from one epoll (bench/loadgen.py's
client), so it needs a file-descriptor limit above ``--connections`` (``ulimit -n``). RSS moves
with the machine far less than speed does, but a run's allocator and collector timing move it
by some percent: compare trees in alternated runs. Not part of the test command: numbers belong
in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

# (bench/loadgen.py and bench/moves.py: the script's folder)
from loadgen import Hub, LeanClient  # noqa: E402
from moves import free_port, rss_mb, run, server_command, server_env, wait_listening  # noqa: E402

from playhall.store.embedded import EmbeddedRedis  # noqa: E402

#: Connections opened at once.
BATCH = 250


async def greet(port: int, count: int) -> list[LeanClient]:
    """``count`` connections to the server on ``port``, each past its ``hello``."""
    loop = asyncio.get_running_loop()
    hub = Hub(loop)
    stats: dict[str, Any] = {"lat": [], "done_at": []}
    never = float("inf")
    clients: list[LeanClient] = []
    while len(clients) < count:
        batch = await asyncio.gather(*(
            LeanClient.connect(hub, "127.0.0.1", port, stats, never, never)
            for _ in range(min(BATCH, count - len(clients)))))
        await asyncio.gather(*(c.request("hello", protocol=1, name="idle") for c in batch))
        clients.extend(batch)
    return clients


def idle(connections: int) -> dict[str, float]:
    """A fresh server's RSS alone, and with ``connections`` idle connections."""
    data = Path(tempfile.mkdtemp(prefix="playhall-memory-"))
    redis = EmbeddedRedis(data / "redis", port=free_port())
    redis.start()
    port = free_port()
    server = subprocess.Popen(server_command(port, redis.url), env=server_env(),
                              stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, 200)
        time.sleep(2.0)
        alone = rss_mb(server.pid)

        async def hold() -> float:
            clients = await greet(port, connections)
            await asyncio.sleep(2.0)
            rss = rss_mb(server.pid)
            for client in clients:
                client.close()
            return rss

        held = asyncio.run(hold())
    finally:
        server.terminate()
        server.wait(30)
        redis.stop()
        shutil.rmtree(data, ignore_errors=True)
    return {"idle_rss_mb": round(alone, 1), "connections": connections,
            "connections_rss_mb": round(held, 1),
            "per_connection_kb": round((held - alone) * 1024 / connections, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="load-generating processes (the rooms' run)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 1000
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    result = idle(args.connections)
    busy = run(args.rooms, args.seconds, args.warmup, args.procs, "0", "everysec")
    result.update({
        "rooms": args.rooms, "rooms_rss_mb": busy["server_rss_mb"],
        "per_room_kb": round((busy["server_rss_mb"] - result["idle_rss_mb"]) * 1024
                             / args.rooms, 1),
        "moves_per_s": busy["moves_per_s"],
    })
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
