"""How soon a drained process's rooms with clocks are running again elsewhere, nobody viewing
them (``fleet/handover.py``).

    python bench/handover.py --rooms 200 --servers 3 --repeat 3

Each run starts a Redis (the embedded one's binary) and ``--servers`` Playhall processes on it
(one key prefix, caps lifted as in bench/moves.py, leases of ``--lease-ms``: ten minutes by
default, so neither a lease running out nor a restore pass, every ``lease_ms/3``, can be what
moves a room). On process 0 it makes ``--rooms`` two-seat Mantis rooms with a turn clock
(ten minutes: none runs out during the run), both players ready, then closes every client: the
rooms need a server (their clocks run) and nobody asks for them. Then SIGTERM to process 0,
and Redis is read every 5 ms until each room's lease is held by another process.

Reported per run: ``taken_ms`` (SIGTERM to the last room held elsewhere), ``exit_ms`` (SIGTERM
to process 0's exit), and how the rooms split over the other processes; then the medians.
Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

from fleet import start_server  # noqa: E402  (bench/fleet.py: the script's folder)
from moves import free_port, wait_listening  # noqa: E402

CLOCK = {"clock": "turn", "clock_ms": 600_000, "on_timeout": "forfeit"}


async def make_rooms(url: str, count: int) -> list[str]:
    """``count`` started rooms with a running clock, held by the process at ``url``, and no
    client left on them."""
    from playhall_client import Client

    host = await Client.connect(url, name="host")
    players = [await Client.connect(url, name=f"p{i}") for i in range(2)]
    rooms = []
    try:
        for _ in range(count):
            made = await host.create("mantis", 2, options=CLOCK, sit=False)
            mirrors = [await player.join(made.room) for player in players]
            for player in players:
                await player.ready(made.room)
            await mirrors[0].wait(lambda m: m.view["status"] == "playing")
            rooms.append(made.room)
    finally:
        for client in (host, *players):
            await client.close()
    return rooms


async def holders(redis_url: str, prefix: str, rooms: list[str], others: set[str],
                  started: float) -> tuple[float, Counter[str]]:
    """Poll the rooms' leases until every one is held by one of ``others``: the seconds since
    ``started`` and who holds how many."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    keys = [f"{prefix}lease:{{{room}}}" for room in rooms]
    try:
        while True:
            held = [(raw.decode() if isinstance(raw, bytes) else raw or "").rpartition("|")[0]
                    for raw in await client.mget(keys)]
            if all(holder in others for holder in held):
                return time.monotonic() - started, Counter(held)
            await asyncio.sleep(0.005)
    finally:
        await client.aclose()


def run(rooms: int, servers: int, lease_ms: int) -> dict[str, Any]:
    from playhall.store.embedded import EmbeddedRedis

    data = Path(tempfile.mkdtemp(prefix="playhall-handover-"))
    redis = EmbeddedRedis(data / "redis", port=free_port(), fsync="everysec")
    redis.start()
    prefix = f"h{uuid.uuid4().hex[:6]}:"
    os.environ["PLAYHALL_LEASE_MS"] = str(lease_ms)  # the servers' environment is this one's
    ports = [free_port() for _ in range(servers)]
    processes = []
    try:
        for i, port in enumerate(ports):
            process = start_server(port, redis.url, prefix, f"{prefix}s{i}", "")
            processes.append(process)
        for port in ports:
            wait_listening(port, 200)
        made = asyncio.run(make_rooms(f"ws://127.0.0.1:{ports[0]}/", rooms))
        others = {f"{prefix}s{i}" for i in range(1, servers)}
        exits: list[float] = []

        def wait_for_exit() -> None:
            processes[0].wait(60)
            exits.append(time.monotonic())

        waiter = threading.Thread(target=wait_for_exit)
        started = time.monotonic()
        processes[0].send_signal(signal.SIGTERM)
        waiter.start()
        taken, split = asyncio.run(holders(redis.url, prefix, made, others, started))
        waiter.join()
        exited = exits[0] - started
        return {"rooms": rooms, "servers": servers, "taken_ms": round(taken * 1000, 1),
                "exit_ms": round(exited * 1000, 1),
                "split": sorted(split.values(), reverse=True)}
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(30)
        redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lease-ms", type=int, default=600_000)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    runs = []
    for _ in range(args.repeat):
        result = run(args.rooms, args.servers, args.lease_ms)
        runs.append(result)
        print(json.dumps(result), flush=True)
    print(json.dumps({
        "median_taken_ms": statistics.median(r["taken_ms"] for r in runs),
        "median_exit_ms": statistics.median(r["exit_ms"] for r in runs),
    }))


if __name__ == "__main__":
    main()
