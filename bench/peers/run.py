"""Playhall and its peers on one workload, interleaved: the table of docs/benchmarks.md,
"Against its peers", in markdown on stdout.

    python bench/peers/run.py --rooms 1 50 500 --seconds 20 --warmup 5 --rounds 3

The workload is bench/moves.py's duel: R rooms of two players, each player on its own
connection, moving as soon as it is its turn, the server alone on one core (``taskset -c 0``,
bench/moves.py's default) and the load generator on the other. Six systems:

- ``colyseus``: Colyseus (@colyseus/core with its websocket transport) serving
  colyseus_server.js, a room whose state is whose turn it is and a count of moves, played by
  Colyseus's official client (@colyseus/sdk);
- ``bgio``: boardgame.io's server (socket.io, its lobby API, InMemory storage) serving
  bgio_game.js, played by boardgame.io's own client;
- ``floor`` and ``floor-redis``: floor_server.py, the same duel on Playhall's own parts and
  nothing else (its websocket layer on uvloop; for ``floor-redis``, every move appended to a
  list in Redis through its command pipe before the update goes out): the least a server on
  those parts does per move. It runs on the Python that runs this script, on the parts
  installed there (the README's install: interpreted), or with ``--floor-build compiled`` on
  the compiled build of ``--commit`` (as ``compiled`` below), played by load.js over ``ws``;
- ``pure`` and ``compiled``: Playhall at ``--commit``, its two builds made by bench/compare.py
  (``build``) and each measured by its own bench/moves.py (Mantis, rematches, every move stored
  in Redis before it is acknowledged).

In both peers a move is accepted when it comes from the seat whose turn it is and passes the
turn; their state is kept in the server's memory and stored nowhere. The peers' packages are
pinned (package.json and package-lock.json beside this file) and installed by ``npm ci`` on the
first run; load.js is their load generator. Each run starts its own server: for every round,
for every R, the systems in turn (A B C D, A B C D, ...), so the machine's slow spells are
spread over all of them.

Reported per system and R: moves/s (the median of the rounds, every round in brackets), p50
and p99 from sending a move to receiving the update it caused, the server's CPU per move (user
+ system from /proc over the measured window, per move), how busy its core was (that CPU over
the window's wall time: under 1, something else held the server back, the machine's other work
or the load side), its RSS at the window's end, and the load generator's CPU in cores (for
Playhall it shares the other core with Redis, so together they must stay under one for the
numbers to be the server's). Latency and RSS are the median run's. Progress goes to stderr,
every run's numbers to ``--json``. Not part of the test command.

``BENCH_CALLGRIND=FILE`` counts the server's instructions per move over the measured window, as
bench/moves.py does (which Playhall's runs are; for the peers, the server runs under callgrind
in place of ``taskset``): meant for the Python floor and few rooms (the server runs some 50
times slower), and printed after the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from compare import build, cell, git, log, moves  # noqa: E402  (bench/compare.py)
from moves import (  # noqa: E402  (bench/moves.py)
    callgrind_command,
    callgrind_start,
    callgrind_stop,
    cpu_split,
    free_port,
    other_cores,
    rss_mb,
)

#: The server's core: bench/moves.py's default, which ``compare.moves`` runs Playhall with.
SERVER_CORE = "0"
SYSTEMS = ("colyseus", "bgio", "floor", "floor-redis", "pure", "compiled")


@dataclass(frozen=True)
class Peer:
    server: list[str]  #: the server's command, its port(s) to follow
    client: str  #: load.js's name for how to play it
    lobby: bool = False  #: a second port (boardgame.io's lobby API)
    redis: bool = False  #: a Redis of its own for the run, its URL after the port(s)


PEERS = {
    "colyseus": Peer(["node", "colyseus_server.js"], "colyseus"),
    "bgio": Peer(["node", "bgio_server.js"], "bgio", lobby=True),
    "floor": Peer([sys.executable, "floor_server.py"], "floor"),
    "floor-redis": Peer([sys.executable, "floor_server.py"], "floor", redis=True),
}


def install() -> None:
    """The pinned packages, once (``npm ci`` writes node_modules/.package-lock.json)."""
    if not (HERE / "node_modules/.package-lock.json").exists():
        log("npm ci")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True,
                       stdout=subprocess.DEVNULL)


def wait_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited ({server.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def peer_run(peer: str, rooms: int, seconds: float, warmup: float,
             tree: Path | None = None) -> dict[str, Any]:
    """One run of a peer: its server on the server's core, load.js (and the floor's Redis, as
    bench/moves.py's) on the others; a Python server on ``tree``'s packages, if given."""
    from playhall.store.embedded import EmbeddedRedis

    spec = PEERS[peer]
    ports = [free_port(), free_port()] if spec.lobby else [free_port()]
    # This process and so load.js on the other cores; the server alone on its own (taskset
    # execs the server, so its pid is the server's).
    os.sched_setaffinity(0, other_cores(SERVER_CORE))
    redis = None
    if spec.redis:
        redis = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="playhall-peers-")) / "redis",
                              port=free_port())
        redis.start()
    counted = os.environ.get("BENCH_CALLGRIND")
    # As bench/moves.py: instrumented over the measured window only.
    runner = callgrind_command(counted) if counted else ["taskset", "-c", SERVER_CORE]
    server = subprocess.Popen(
        [*runner, *spec.server, *map(str, ports), *([redis.url] if redis else [])],
        cwd=HERE, stdout=subprocess.DEVNULL, env=None if tree is None else {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(str(tree / d) for d in ("protocol", "server"))})
    load = None
    instructions = 0
    try:
        wait_listening(ports[-1], server)
        wait_listening(ports[0], server)
        load = subprocess.Popen(
            ["node", "load.js", spec.client, str(ports[0]), str(rooms), str(warmup), str(seconds),
             *map(str, ports[1:])], cwd=HERE, stdout=subprocess.PIPE, text=True)
        assert load.stdout is not None
        if load.stdout.readline().strip() != "ready":  # every room set up: play starts now
            raise RuntimeError(f"{peer}: the load generator did not start")
        time.sleep(warmup)
        if counted:
            callgrind_start(server.pid)
        (user0, sys0), t0 = cpu_split(server.pid), time.perf_counter()
        time.sleep(seconds)
        (user1, sys1), t1 = cpu_split(server.pid), time.perf_counter()
        if counted:
            instructions = callgrind_stop(server.pid, counted)["Ir"]
        rss = rss_mb(server.pid)
        result = json.loads(load.stdout.readline())
        load.wait(60)
    finally:
        for process in (load, server):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(30)
        if redis is not None:
            redis.stop()
            shutil.rmtree(redis.data_dir.parent, ignore_errors=True)
    lat = sorted(result["lat"])
    moved = result["moves"]
    cpu = user1 + sys1 - user0 - sys0
    counts = {}
    if counted and moved:
        counts["server_instructions_per_move"] = round(instructions / moved)
    return {
        **counts,
        "rooms": rooms,
        "moves_per_s": round(moved / seconds),
        "p50_ms": round(statistics.median(lat), 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 2) if lat else None,
        "server_cpu": round(cpu / (t1 - t0), 2),
        "server_rss_mb": round(rss, 1),
        "load_cpu": round(result["cpu"] / seconds, 2),
    }


def run(system: str, trees: dict[str, Path], rooms: int, seconds: float,
        warmup: float) -> dict[str, Any]:
    if system in PEERS:
        result = peer_run(system, rooms, seconds, warmup,
                          trees.get("floor") if system.startswith("floor") else None)
    else:
        result = moves(trees[system], rooms, seconds, warmup)
    moved = result["moves_per_s"]
    result["cpu_us_per_move"] = round(result["server_cpu"] / moved * 1e6, 1) if moved else None
    result["system"] = system
    result["loadavg_1m"] = os.getloadavg()[0]
    return result


def table(runs: list[dict[str, Any]], systems: list[str], rooms: list[int]) -> str:
    out = ["| system | R | moves/s (median; runs) | p50 | p99 | server CPU per move | server's "
           "core busy | RSS | load CPU |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rooms:
        for system in systems:
            mine = sorted((x for x in runs if x["system"] == system and x["rooms"] == r),
                          key=lambda x: x["moves_per_s"])
            if not mine:
                continue
            mid = mine[len(mine) // 2]
            cpu = f"{mid['cpu_us_per_move']:.0f} µs" if mid["cpu_us_per_move"] else "—"
            out.append(
                f"| {system} | {r} | {cell([float(x['moves_per_s']) for x in mine])} | "
                f"{mid['p50_ms']} ms | {mid['p99_ms']} ms | {cpu} | {mid['server_cpu']} | "
                f"{mid['server_rss_mb']:.0f} MB | {mid['load_cpu']} |")
    return "\n".join(out)


def versions() -> dict[str, Any]:
    lock = json.loads((HERE / "package-lock.json").read_text())["packages"]
    pinned = json.loads((HERE / "package.json").read_text())["dependencies"]
    return {
        "machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release(),
        "python": platform.python_version(),
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True,
                               check=True).stdout.strip(),
        **{name: lock[f"node_modules/{name}"]["version"] for name in pinned},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, nargs="+", default=[1, 50, 500])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each system at each R")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--commit", default="HEAD", help="Playhall's commit (both builds)")
    parser.add_argument("--work", type=Path, help="where Playhall's trees are built (kept)")
    parser.add_argument("--floor-build", choices=["installed", "compiled"], default="installed",
                        help="the floor's parts: this Python's install, or --commit's compiled")
    parser.add_argument("--json", type=Path, help="every run's numbers, written here")
    args = parser.parse_args()
    from playhall import log as server_log

    server_log.configure("console", "warning")  # the floor's Redis logs its start: not on stdout
    install()
    sha = git("rev-parse", "--verify", f"{args.commit}^{{commit}}").strip()
    work = args.work or Path(tempfile.mkdtemp(prefix="playhall-peers-"))
    trees: dict[str, Path] = {}
    floor_compiled = args.floor_build == "compiled"
    if {"pure", "compiled"} & set(args.systems) or floor_compiled:
        trees = build(sha, work)
    if floor_compiled:
        trees["floor"] = trees["compiled"]
    info = {**versions(), "playhall": sha[:9], "floor_build": args.floor_build,
            "loadavg_before": os.getloadavg()}
    log(json.dumps(info))
    runs: list[dict[str, Any]] = []
    try:
        for i in range(args.rounds):
            for rooms in args.rooms:
                for system in args.systems:
                    log(f"round {i + 1}, R = {rooms}: {system}")
                    runs.append(run(system, trees, rooms, args.seconds, args.warmup))
                    log(json.dumps(runs[-1]))
    finally:
        if args.json:
            args.json.write_text(json.dumps({"info": info, "runs": runs}, indent=1))
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    loads = [r["loadavg_1m"] for r in runs]
    print(f"{json.dumps(info)}\n\nload average (1 min) at the runs' ends: "
          f"{min(loads):.1f}–{max(loads):.1f}\n")
    print(table(runs, args.systems, args.rooms))
    counted = [r for r in runs if r.get("server_instructions_per_move")]
    if counted:
        print("\n| system | R | server instructions per move (runs) |\n|---|---|---|")
        for r in args.rooms:
            for system in args.systems:
                mine = [x["server_instructions_per_move"] for x in counted
                        if x["system"] == system and x["rooms"] == r]
                if mine:
                    print(f"| {system} | {r} | {cell([float(n) for n in mine])} |")


if __name__ == "__main__":
    main()
