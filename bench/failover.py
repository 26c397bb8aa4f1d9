"""Acknowledged moves lost, and moves applied twice, when a Redis Cluster primary fails over
under load.

    python bench/failover.py --kills 20 --manual 20 --rooms 24 --servers 3

Starts a Redis Cluster (bench/redis_cluster.py: three primaries, one replica each, AOF
everysec, ``--node-timeout`` 2000 ms) and ``--servers`` Playhall processes on it (one key
prefix, caps lifted as in bench/moves.py), then ``--rooms`` rooms of two players, each player a
``playhall_client.Client`` (the client library: it reconnects, and sends a move refused
``store_failed`` again with its move id), the two seats of a room on different processes.
Players move as soon as it is their turn (first legal move, ``--pace`` seconds after the
update), every move with a move id of its own, and play a rematch when a game ends.

Meanwhile, one failover at a time, each on the next primary in turn:

- ``--kills``: SIGKILL of a primary (nothing flushed, nothing said to the cluster), then wait
  until its replica is promoted; the killed node is started again (it rejoins as a replica of
  the new primary) and the cluster is waited on to be whole again, replicas synced;
- ``--manual``: ``CLUSTER FAILOVER`` sent to a primary's replica (the replica waits for the
  primary's last writes before it takes over).

Between failovers the players play ``--gap`` seconds. Afterwards every room's move log is read
from the cluster and compared with what the players were told, by move id:

- ``lost``: a move the player got ``ok`` for that is not in its room's log; each is counted
  against the first failover after its ``ok`` (so per kind of failover);
- ``twice``: a move id that is in a log more than once.

Also reported: moves/s, each failover's time to promotion (SIGKILL or CLUSTER FAILOVER to the
replica saying it is primary) and to whole again, its pause (``pause_s``: the longest any room
in play waited from the failover's start for its next ``ok``), the players' refusals by code,
the stalls (a room with no change for ``--stall`` seconds: the players sync it afresh), the
rooms that moved on after the last failover, and the machine's load (``uptime``) before and after.

``--wait-probe`` first times what ``WAIT 1`` after each commit would cost, on one primary and
its replica with nothing else running: rounds of ``--probe-batch`` commit-like scripts (a hash
field and a stream entry in one slot, one pipelined write), with no WAIT, with ``WAIT 1 1000``
after each round, and the same with the replica on ``appendfsync always``.

Not part of the test command: numbers belong in docs/operations.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

import msgpack  # noqa: E402
import redis  # noqa: E402
from fleet import start_server  # noqa: E402  (bench/fleet.py: the script's folder)
from moves import free_port, wait_listening  # noqa: E402
from redis.cluster import RedisCluster  # noqa: E402
from redis_cluster import Cluster, Node, wait_for  # noqa: E402

from playhall.store.keys import Keys  # noqa: E402
from playhall_client.client import MOVE_AGAIN, Client, ConnectionLost, ServerError  # noqa: E402

#: Refusals of a lobby step (join, ready, rematch) that say nothing about the step: tried again.
STEP_AGAIN = MOVE_AGAIN | {"internal"}
#: A ready's refusal once the game has started.
STARTED = frozenset({"wrong_status"})


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


class Tally:
    """What the players saw, for the comparison with the logs afterwards."""

    def __init__(self) -> None:
        #: (room, player, mid) -> (version, time of the ok)
        self.acked: dict[tuple[str, str, str], tuple[int, float]] = {}
        self.refused: collections.Counter[str] = collections.Counter()
        self.stalls = 0
        self.rooms: list[str] = []
        self.last_move: dict[str, float] = {}  # room -> time of its last ok
        self.gave_up: list[str] = []
        self.current: dict[int, str] = {}  # pair -> the room it plays in now


async def again(tally: Tally, step: Callable[..., Awaitable[Any]], *args: Any,
                done: frozenset[str] = frozenset(), **kwargs: Any) -> Any:
    """``step(*args, **kwargs)``, tried again for up to a minute while it is refused for a
    reason that says nothing about it; a refusal in ``done`` means an earlier try did it."""
    deadline = time.monotonic() + 60.0
    while True:
        try:
            return await step(*args, **kwargs)
        except ServerError as exc:
            if exc.code in done:
                return None
            if exc.code not in STEP_AGAIN or time.monotonic() > deadline:
                raise
            tally.refused[f"step:{exc.code}"] += 1
        except (ConnectionLost, TimeoutError):
            if time.monotonic() > deadline:
                raise
            tally.refused["step:lost"] += 1
        await asyncio.sleep(0.2)


async def play_seat(client: Client, room: str, tally: Tally, stop: asyncio.Event,
                    pace: float, stall: float) -> None:
    """Move whenever it is this seat's turn until the game ends or ``stop``."""
    mirror = client.rooms[room]
    count = 0
    while not stop.is_set():
        try:
            await mirror.wait(lambda m: m.my_turn or m.view.get("status") == "finished",
                              timeout=stall)
        except TimeoutError:
            # Nothing for a while: the mirror may be ahead of a room that went back (a move
            # lost in a failover) and ignore every update as old. A fresh snapshot settles it.
            tally.stalls += 1
            mirror.version = -1
            await again(tally, client.sync, room)
            continue
        if mirror.view.get("status") == "finished":
            return
        await asyncio.sleep(pace)
        if not mirror.my_turn:
            continue
        count += 1
        mid = f"m{count}"
        version = mirror.version
        move = mirror.view["moves"][0]
        while not stop.is_set():
            try:
                reply = await client.move(room, move, mid=mid, version=version)
            except ServerError as exc:
                tally.refused[exc.code] += 1
                if exc.code in MOVE_AGAIN:
                    continue  # the client library's retries ran out: the same move again
                break  # stale and the like: decide again from the next view
            except ConnectionLost:
                tally.refused["lost"] += 1
                continue
            now = time.time()
            tally.acked[room, client.player, mid] = (int(reply["version"]), now)
            tally.last_move[room] = now
            break


async def pair(n: int, urls: tuple[str, str], tally: Tally, stop: asyncio.Event, pace: float,
               stall: float) -> None:
    """Two players, each on its own process, playing game after game until ``stop``."""
    a = await Client.connect(urls[0], name="a")
    b = await Client.connect(urls[1], name="b")
    try:
        made = await again(tally, a.create, "mantis", 2, options={"target": 105})
        room = made.room
        while not stop.is_set():
            tally.rooms.append(room)
            tally.current[n] = room
            await again(tally, b.join, room, seat=1)
            await again(tally, a.sync, room)
            # A ready whose reply a failover lost may have started the game: then the next
            # try finds the room playing.
            await again(tally, a.ready, room, done=STARTED)
            await again(tally, b.ready, room, done=STARTED)
            await asyncio.gather(play_seat(a, room, tally, stop, pace, stall),
                                 play_seat(b, room, tally, stop, pace, stall))
            if stop.is_set():
                break
            old = room
            room = await again(tally, a.rematch, old)
            await again(tally, a.join, room)
            await again(tally, a.leave, old)
            await again(tally, b.leave, old)
    except (ServerError, ConnectionLost, TimeoutError) as exc:
        tally.gave_up.append(repr(exc))
    finally:
        await a.close()
        await b.close()


def fail_over(cluster: Cluster, turn: int, how: str) -> dict[str, Any]:
    """One failover of the ``turn``-th primary (in port order): ``kill`` or ``manual``."""
    primaries = sorted(cluster.primaries(), key=lambda n: n.port)
    primary = primaries[turn % len(primaries)]
    replica = cluster.replica_of(primary)
    started = time.time()
    if how == "kill":
        primary.kill()
    else:
        with replica.client(10) as c:
            c.execute_command("CLUSTER", "FAILOVER")

    def promoted() -> bool:
        if replica.role() != "master":
            return False
        with replica.client() as c:
            return "cluster_state:ok" in str(c.execute_command("CLUSTER", "INFO"))

    wait_for(promoted, 60, f"{replica.port} to be promoted")
    promoted_s = time.time() - started
    if how == "kill":
        primary.start()
    cluster.wait_healthy(120)
    return {"how": how, "primary": primary.port, "at": started,
            "promoted_s": round(promoted_s, 2), "whole_s": round(time.time() - started, 2)}


def read_logs(client: Any, prefix: str, rooms: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Every room's moves as its log in Redis has them: [(player, mid)]."""
    keys = Keys(prefix)
    logs: dict[str, list[tuple[str, str]]] = {}
    for room in dict.fromkeys(rooms):
        moves = []
        for _, entry in client.xrange(keys.log_key(room)):
            if entry.get(b"k") == b"move" and b"i" in entry:
                moves.append((entry[b"p"].decode(), str(msgpack.unpackb(entry[b"i"]))))
        logs[room] = moves
    return logs


def server_events(logs: list[Path]) -> dict[str, int]:
    """The servers' warnings and errors by event name (``room_out_of_date``: a room whose
    process found another version in Redis than its own, and loaded it afresh)."""
    events: collections.Counter[str] = collections.Counter()
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            try:
                events[json.loads(line).get("event", "?")] += 1
            except (ValueError, AttributeError):
                events["(not json)"] += 1
    return dict(events.most_common())


def compare(tally: Tally, logs: dict[str, list[tuple[str, str]]],
            failovers: list[dict[str, Any]]) -> dict[str, Any]:
    """Lost acknowledged moves (per failover, by the first failover after the ok) and moves
    applied twice."""
    logged = {room: collections.Counter(moves) for room, moves in logs.items()}
    lost = []
    for (room, player, mid), (version, at) in tally.acked.items():
        if logged.get(room, collections.Counter())[player, mid] == 0:
            lost.append({"room": room, "player": player, "mid": mid, "version": version,
                         "at": at})
    for failover in failovers:
        failover["lost"] = 0
    for move in lost:
        after = [f for f in failovers if f["at"] >= move["at"]]
        if after:
            after[0]["lost"] += 1
    twice = sum(n - 1 for counts in logged.values() for n in counts.values() if n > 1)
    # How long play stopped: per failover, the longest wait of a room in play then (an ok
    # before the failover's start and one after) for its first ok after the start.
    times: dict[str, list[float]] = collections.defaultdict(list)
    for (room, _, _), (_, at) in tally.acked.items():
        times[room].append(at)
    for failover in failovers:
        waits = []
        for oks in times.values():
            later = [t for t in oks if t >= failover["at"]]
            if later and min(oks) < failover["at"]:
                waits.append(min(later) - failover["at"])
        failover["pause_s"] = round(max(waits), 2) if waits else None
    return {"acked": len(tally.acked), "lost": len(lost), "twice": twice,
            "lost_moves": lost[:20]}


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="playhall-failover-"))
    cluster = Cluster(data / "cluster", node_timeout_ms=args.node_timeout)
    servers: list[subprocess.Popen[bytes]] = []
    report: dict[str, Any] = {"uptime_before": uptime()}
    try:
        cluster.start()
        if args.wait_probe:
            report["wait_probe"] = wait_probe(cluster, args.probe_rounds, args.probe_batch)
        prefix = f"f{uuid.uuid4().hex[:6]}:"
        ports = [free_port() for _ in range(args.servers)]
        servers = [start_server(port, cluster.url, prefix, f"{prefix}{i}", "",
                                log=data / f"server{i}.log")
                   for i, port in enumerate(ports)]
        for port in ports:
            wait_listening(port, 600)
        seed = cluster.nodes[0].port
        with RedisCluster(host="127.0.0.1", port=seed) as reader:
            report.update(asyncio.run(load_and_fail(
                args, ports, lambda turn, how: fail_over(cluster, turn, how),
                lambda rooms: read_logs(reader, prefix, rooms))))
    finally:
        for server in servers:
            server.terminate()
            server.wait(30)
        report["server_events"] = server_events(sorted(data.glob("server*.log")))
        cluster.stop()
        if args.keep:
            print(f"kept {data}", file=sys.stderr)
        else:
            shutil.rmtree(data, ignore_errors=True)
    report["uptime_after"] = uptime()
    return report


async def load_and_fail(args: argparse.Namespace, ports: list[int],
                        fail: Callable[[int, str], dict[str, Any]],
                        read: Callable[[list[str]], dict[str, list[tuple[str, str]]]],
                        ) -> dict[str, Any]:
    """The players on ``ports``, the failovers (``fail(turn, how)``) among them, and the
    comparison with the logs (``read(rooms)``)."""
    tally = Tally()
    stop = asyncio.Event()
    urls = [f"ws://127.0.0.1:{port}/" for port in ports]
    pairs = [asyncio.create_task(pair(i, (urls[i % len(urls)], urls[(i + 1) % len(urls)]), tally,
                                      stop, args.pace, args.stall))
             for i in range(args.rooms)]
    started = time.time()
    await asyncio.sleep(args.gap)
    failovers = []
    plan = []  # kills and manual failovers alternate, so both meet the same load
    for turn in range(max(args.kills, args.manual)):
        plan += ["kill"] * (turn < args.kills) + ["manual"] * (turn < args.manual)
    for turn, how in enumerate(plan):
        failover = await asyncio.to_thread(fail, turn, how)
        failovers.append(failover)
        print(json.dumps({k: v for k, v in failover.items() if k != "at"}), file=sys.stderr,
              flush=True)
        await asyncio.sleep(args.gap)
    last = failovers[-1]["at"] + failovers[-1]["whole_s"] if failovers else started
    moved_on = sum(1 for room in tally.current.values() if tally.last_move.get(room, 0) > last)
    elapsed = time.time() - started
    moves = len(tally.acked)
    stop.set()
    await asyncio.wait(pairs, timeout=30)
    logs = await asyncio.to_thread(read, tally.rooms)
    result = compare(tally, logs, failovers)
    by_kind: dict[str, dict[str, Any]] = {}
    for how in ("kill", "manual"):
        done = [f for f in failovers if f["how"] == how]
        if done:
            by_kind[how] = {
                "failovers": len(done),
                "lost": sum(f["lost"] for f in done),
                "failovers_with_loss": sum(1 for f in done if f["lost"]),
                "promoted_s_median": round(statistics.median(f["promoted_s"] for f in done), 2),
                "promoted_s_max": max(f["promoted_s"] for f in done),
                "whole_s_median": round(statistics.median(f["whole_s"] for f in done), 2),
                "pause_s_median": round(statistics.median(f["pause_s"] or 0 for f in done), 2),
                "pause_s_max": max(f["pause_s"] or 0 for f in done),
            }
    return {
        "rooms": args.rooms, "servers": args.servers, "node_timeout_ms": args.node_timeout,
        "moves_per_s": round(moves / elapsed) if elapsed else 0,
        "seconds": round(elapsed), **result, "by_kind": by_kind,
        "refused": dict(tally.refused), "stalls": tally.stalls,
        "rooms_moved_on_after_last_failover": f"{moved_on}/{len(tally.current)}",
        "pairs_gave_up": tally.gave_up,
        "failovers": [{k: v for k, v in f.items() if k != "at"} for f in failovers],
    }


#: A commit's shape for the WAIT probe: one hash field and one stream entry, keys in one slot.
PROBE_SCRIPT = """
redis.call('HSET', KEYS[1], 'v', ARGV[1])
redis.call('XADD', KEYS[2], '*', 'v', ARGV[1], 'm', ARGV[2])
return 1
"""


def wait_probe(cluster: Cluster, rounds: int, batch: int) -> dict[str, Any]:
    """Rounds of ``batch`` commit-like scripts on one primary, one pipelined write each: with
    no WAIT, with ``WAIT 1 1000`` after each round, and that with the replica on
    ``appendfsync always`` (see the module docstring)."""
    primary = sorted(cluster.primaries(), key=lambda n: n.port)[0]
    replica = cluster.replica_of(primary)
    with primary.client() as c:
        # Keys in one of this primary's slots.
        tag = next(t for t in (f"probe{i}" for i in range(10000))
                   if _serves(c, int(c.execute_command("CLUSTER", "KEYSLOT", t))))
    out: dict[str, Any] = {"batch": batch, "rounds": rounds}
    payload = os.urandom(120)
    for mode in ("none", "wait", "wait_replica_fsync_always"):
        with replica.client() as r:
            r.config_set("appendfsync", "always" if mode.endswith("always") else "everysec")
        times, acks = _probe_rounds(primary, tag, payload, rounds, batch, mode != "none")
        times.sort()
        out[mode] = {"p50_ms": round(statistics.median(times) * 1e3, 3),
                     "p99_ms": round(times[int(len(times) * 0.99) - 1] * 1e3, 3),
                     "commits_per_s_one_connection": round(batch * len(times) / sum(times)),
                     "replicas_acked_min": min(acks) if acks else None}
    with replica.client() as r:
        r.config_set("appendfsync", "everysec")
    return out


def _serves(client: redis.Redis, slot: int) -> bool:
    me = str(client.execute_command("CLUSTER", "MYID"))
    for start, end, owner, *_ in client.execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return str(owner[2]) == me
    return False


def _probe_rounds(primary: Node, tag: str, payload: bytes, rounds: int, batch: int,
                  wait: bool) -> tuple[list[float], list[int]]:
    times, acks = [], []
    keys = [f"{{{tag}}}:h", f"{{{tag}}}:log"]
    with primary.client(10) as c:
        script = c.register_script(PROBE_SCRIPT)
        c.delete(*keys)
        for n in range(rounds):
            pipe = c.pipeline(transaction=False)
            for i in range(batch):
                script(keys=keys, args=[n * batch + i, payload], client=pipe)
            if wait:
                pipe.execute_command("WAIT", 1, 1000)
            started = time.perf_counter()
            replies = pipe.execute()
            times.append(time.perf_counter() - started)
            if wait:
                acks.append(int(replies[-1]))
        c.delete(*keys)
    return times, acks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--manual", type=int, default=20)
    parser.add_argument("--rooms", type=int, default=24)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.0,
                        help="seconds a player waits before each move")
    parser.add_argument("--gap", type=float, default=3.0, help="seconds of play between failovers")
    parser.add_argument("--stall", type=float, default=5.0,
                        help="seconds without a change before a player syncs its room afresh")
    parser.add_argument("--node-timeout", type=int, default=2000,
                        help="cluster-node-timeout, milliseconds")
    parser.add_argument("--wait-probe", action="store_true")
    parser.add_argument("--probe-rounds", type=int, default=2000)
    parser.add_argument("--probe-batch", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    print(json.dumps({"machine": platform.machine(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "kernel": platform.release()}))
    print(json.dumps(run(args)), flush=True)


if __name__ == "__main__":
    main()
