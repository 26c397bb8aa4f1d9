"""Instructions per move of a forwarded move against the same move local: two fleet processes'
worth of server in one Python process, over a real Redis, counted by valgrind's callgrind.

    python bench/fleet_path.py [--moves 400] [--count] [--parts]

Two servers as ``playhall.app.start`` wires them (store, command pipe, bus, fleet node, room
manager, endpoint), A and E, share one event loop, one Redis and one key prefix. A host
connection on A creates each room (watching, not sitting), so A holds it; two players join its
seats and play Mantis (target 105) one move at a time: a move is sent as a websocket frame
into the server's own ``WebSocket`` (made by the endpoint, as for the listening socket; a
transport stands for the socket, and websockets' Sans-I/O client for the player), and the next
waits until the mover has its answer and both players their update. Rooms are made with fixed
secrets, so every run plays the same games. Being the server's own classes end to end, it runs
on either build: from a tree made by ``bench/compiled_tree.sh``, it counts the compiled one.
Modes:

- ``local``: both players connected to A: nothing crosses Redis but the commits.
- ``forwarded``: both players connected to E: every move is published to A, and its answer and
  both players' frames come back in A's batch for E.
- ``spread``: player 0 on A, player 1 on E (what a balancer makes of a pair, half the moves
  forwarded).

``--count`` prints, per mode, instructions per move under callgrind (whose counts the machine's
load does not move): the script runs itself under it with ``--moves`` and twice as many, and
divides the difference. Only the moves' part of each run is collected, from the first room
made to the last room left (the start-up, imports and two servers started, is some 3 billion
instructions whose small variation from run to run would otherwise move a move's count by
percents); what each run pays once there cancels out in the difference. Redis itself is
another process, not counted; the client's side of each connection, its frames made and read,
is left out (see ``Toggle``). Each poll of the event loop there first gives Redis 3 ms to
answer (a fixed model: Redis answers before the server looks), so the number of loop passes,
and with them the count, does not depend on the machine's load. ``--parts`` adds the
forwarded move's parts, each counted alone (callgrind collecting only inside it: a client
request toggles collection, from a few lines of C built with the system's
``valgrind/callgrind.h``); see ``PARTS``. Parts are counted on the pure build only (they wrap
the server's methods, which the compiled build's classes do not allow).

Without ``--count``: process CPU microseconds per move, per mode (noisy on a shared machine).
Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

import msgpack  # noqa: E402
from websockets.client import ClientProtocol  # noqa: E402
from websockets.frames import Frame, Opcode  # noqa: E402
from websockets.protocol import OPEN  # noqa: E402
from websockets.uri import parse_uri  # noqa: E402

from playhall import app, log  # noqa: E402
from playhall.config import Config  # noqa: E402
from playhall.games.rng import int_key  # noqa: E402
from playhall.rooms import table  # noqa: E402
from playhall.tasks import cancel_and_wait  # noqa: E402

MODES = ("local", "forwarded", "spread")

#: The parts of a forwarded move ``--parts`` counts, each alone: what is wrapped (collection
#: on while it runs; for a coroutine, while each of its steps runs). Owner and edge are told
#: apart by their bus (process A's reader gets only requests, E's only batches).
PARTS = {
    "edge_request": "E: the move from its session to the published request (the endpoint's "
                    "fast path or task, Edge.forward: pack, publish into the pipe; a _send "
                    "task's steps if there is one)",
    "owner_in": "A: the bus connection's read callback (hiredis's parse, the handler: unpack, "
                "RemoteViewer, into the room's inbox)",
    "owner_handler": "A: the handler alone (Owner.received)",
    "owner_out": "A: the answer and frames into the edge's batch, and the batch packed and "
                 "published (Owner.reply, RemoteViewer.push, EdgeMail.flush and _sent)",
    "edge_in": "E: the bus connection's read callback (hiredis's parse, the handler: unpack, "
               "answer and frames to the sessions)",
    "edge_handler": "E: the handler alone (Edge.received)",
    "toggle": "what the counting itself adds per wrapped call: a call of a function that "
              "does nothing, wrapped, once a move",
}

#: Seconds each poll of the loop waits first under callgrind (see ``run``).
SETTLE = 0.003

_TOGGLE_C = """
#include <valgrind/callgrind.h>
void toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
"""


class Toggle:
    """Callgrind's collection switched on while any wrapped code runs (nesting counted)."""

    def __init__(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="playhall-toggle-"))
        (tmp / "t.c").write_text(_TOGGLE_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(tmp / "t.so"),
                        str(tmp / "t.c")], check=True)
        self._toggle = ctypes.CDLL(str(tmp / "t.so")).toggle
        shutil.rmtree(tmp, ignore_errors=True)
        self.depth = 0

    def on(self) -> None:
        self.depth += 1
        if self.depth == 1:
            self._toggle()

    def off(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            self._toggle()

    def wrap(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.on()
            try:
                return func(*args, **kwargs)
            finally:
                self.off()
        return counted

    def paused(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """``func`` never counted, even inside a counted part (the client's side of the wire)."""
        @functools.wraps(func)
        def uncounted(*args: Any, **kwargs: Any) -> Any:
            counting = self.depth > 0
            if counting:
                self._toggle()
            try:
                return func(*args, **kwargs)
            finally:
                if counting:
                    self._toggle()
        return uncounted

    def wrap_steps(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """A coroutine function whose every step (resume to suspension) is counted."""
        toggle = self

        class Steps:
            def __init__(self, coro: Any) -> None:
                self.coro = coro

            def __await__(self) -> Any:
                return self

            def __iter__(self) -> Any:
                return self

            def __next__(self) -> Any:
                return self.send(None)

            def send(self, value: Any) -> Any:
                toggle.on()
                try:
                    return self.coro.send(value)
                finally:
                    toggle.off()

            def throw(self, *exc: Any) -> Any:
                toggle.on()
                try:
                    return self.coro.throw(*exc)
                finally:
                    toggle.off()

        @functools.wraps(func)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            return await Steps(func(*args, **kwargs))
        return counted


def nothing() -> None:
    """Called once a move (the ``toggle`` part wraps it)."""


def leave_out_the_client(toggle: Toggle) -> None:
    """What the client does (its frames made and read) is not the server's: never counted."""
    Client.read = toggle.paused(Client.read)  # type: ignore[method-assign]
    Client.frames = toggle.paused(Client.frames)  # type: ignore[method-assign]


def wrap_part(part: str, toggle: Toggle) -> None:
    """Collect only inside ``part`` (see PARTS). Before the servers start (their bus readers
    start with them)."""
    from playhall.fleet import edge, owner
    from playhall.net import endpoint
    from playhall.store import subscriber

    leave_out_the_client(toggle)
    if part == "edge_request":
        endpoint.Endpoint._fast_move = toggle.wrap(endpoint.Endpoint._fast_move)  # type: ignore[method-assign]
        endpoint.Endpoint._handle = toggle.wrap_steps(endpoint.Endpoint._handle)  # type: ignore[method-assign]
        edge.Edge.forward = toggle.wrap(edge.Edge.forward)  # type: ignore[method-assign]
        edge.Edge._send = toggle.wrap_steps(edge.Edge._send)  # type: ignore[method-assign]
    elif part == "toggle":
        global nothing
        nothing = toggle.wrap(nothing)
    elif part in ("owner_in", "edge_in"):
        plain = subscriber.Subscriber.data_received
        counted = toggle.wrap(plain)
        suffix = ":A" if part == "owner_in" else ":E"

        def received(self: subscriber.Subscriber, data: bytes) -> None:  # (a bus's connection)
            (counted if self.name.endswith(suffix) else plain)(self, data)
        subscriber.Subscriber.data_received = received  # type: ignore[method-assign]
    elif part == "owner_handler":
        owner.Owner.received = toggle.wrap(owner.Owner.received)  # type: ignore[method-assign]
    elif part == "edge_handler":
        edge.Edge.received = toggle.wrap(edge.Edge.received)  # type: ignore[method-assign]
    elif part == "owner_out":
        owner.Owner.reply = toggle.wrap(owner.Owner.reply)  # type: ignore[method-assign]
        owner.RemoteViewer.push = toggle.wrap(owner.RemoteViewer.push)  # type: ignore[method-assign]
        owner.EdgeMail.flush = toggle.wrap(owner.EdgeMail.flush)  # type: ignore[method-assign]
        owner.EdgeMail._sent = toggle.wrap(owner.EdgeMail._sent)  # type: ignore[method-assign]
    else:
        raise SystemExit(f"no part {part!r}: one of {', '.join(PARTS)}")


class Wire(asyncio.Transport):
    """The socket under a connection, as the server's ``WebSocket`` sees it: what the server
    writes goes straight to the client's end (:meth:`Client.read`), with no kernel between
    (a system call is not the server's Python, which is what is counted)."""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.ws: Any = None
        self._closing = False

    def write(self, data: Any) -> None:
        self.client.read(bytes(data))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:  # (only as the servers drain)
        if not self._closing:
            self._closing = True
            asyncio.get_running_loop().call_soon(self.ws.connection_lost, None)

    abort = close

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else default


class Client:
    """One connection, the server's real ``WebSocket`` (the listening socket's protocol, as
    the endpoint makes it) on a :class:`Wire`, spoken to by websockets' own Sans-I/O client:
    requests in as masked frames, answers and updates out as the server frames them. Being
    the server's own class, it runs on the compiled build too."""

    def __init__(self, node: app.Running) -> None:
        self.protocol = ClientProtocol(parse_uri("ws://127.0.0.1/"))
        self.ws = node.endpoint.websocket()
        # No keepalive ping within a run (nothing periodic: see config); none would be
        # answered here either.
        self.ws._ping_interval = 1e9
        wire = Wire(self)
        wire.ws = self.ws
        self.ws.connection_made(wire)
        self.protocol.send_request(self.protocol.connect())
        self._to_server(self.protocol.data_to_send())  # the handshake, answered in this call
        assert self.protocol.state is OPEN, self.protocol.handshake_exc
        self.ids = 0
        self.answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.updates = 0

    def _to_server(self, writes: list[bytes]) -> None:
        for data in writes:
            if data:
                self.ws.data_received(data)

    def frames(self, message: dict[str, Any]) -> list[bytes]:
        """The client's side of a request: packed, framed and masked, as the socket would
        carry it to the server."""
        self.protocol.send_binary(msgpack.packb(message))
        return self.protocol.data_to_send()

    def read(self, data: bytes) -> None:
        """What the server wrote to this connection."""
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            if isinstance(event, Frame) and event.opcode is Opcode.BINARY:
                self.received(msgpack.unpackb(event.data, strict_map_key=False))

    def received(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind in ("ok", "error"):
            future = self.answers.pop(message.get("re", 0), None)
            if future is not None:
                future.set_result(message)
        elif kind == "update":
            self.updates += 1

    def send(self, kind: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        self.ids += 1
        future = asyncio.get_running_loop().create_future()
        self.answers[self.ids] = future
        self._to_server(self.frames({"t": kind, "id": self.ids, **fields}))
        return future

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        answer = await self.send(kind, **fields)
        if answer["t"] == "error":
            raise RuntimeError(f"{kind}: {answer['code']}: {answer['reason']}")
        return answer


def config(redis_url: str, prefix: str, name: str) -> Config:
    made = Config(
        host="127.0.0.1", port=0, redis_url=redis_url, key_prefix=prefix,
        instance=f"{prefix}{name}", bot_delay=0.0, log_format="json", log_level="error",
        rate=1e9, burst=1_000_000, connections_per_address=0, new_players_per_minute=0,
        address_rooms_per_minute=0, rooms_per_minute=0,
        # Nothing periodic within a run: what runs every so many seconds would cost more per
        # move the slower callgrind makes the run. So no lease renewed, no watchdog of the
        # command pipe or of the forwards waiting (each fires at its oldest deadline, some
        # seconds of the run's wall time apart), and the lobby's changes pushed each in the
        # pass that made it, not merged over an interval of wall time.
        lease_ms=3_600_000, metrics_listen="", admin_listen="", redis_timeout=3600.0,
        forward_timeout=7200.0, lobby_interval=0.0,
    )
    return made


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(60):
        while not condition():
            await asyncio.sleep(0)


async def run(redis_url: str, mode: str, moves: int, part: str | None,
              settle: float = 0.0) -> float:
    from playhall.catalog import get_game

    # The same games every run: the rooms' secrets (which deal the cards) are fixed.
    secrets_made = iter(range(1, 1_000_000))
    table.new_secret = lambda: int_key(next(secrets_made))
    moves_alone: Toggle | None = None
    if part:
        wrap_part(part, Toggle())
    elif settle:  # under callgrind: the moves counted (from the first room made), not the
        # client's side. The start-up (imports, two servers started) is some 3 billion
        # instructions that vary by some 0.02 % from run to run: counted, that alone moved a
        # move's count by 1 to 3 %.
        moves_alone = Toggle()
        leave_out_the_client(moves_alone)
    prefix = f"fp{uuid.uuid4().hex[:6]}:"
    nodes = {name: await app.start(config(redis_url, prefix, name)) for name in "AE"}
    for node in nodes.values():  # nothing periodic (see config)
        await node.keeper.stop()
        await node.endpoint.matchmaker.stop()  # (quick play's sweep, twice a second)
        await node.endpoint.results.stop()
        await cancel_and_wait(node.sweeper, node.counter, node.refusals, node.descriptors)
    quiet = max(node.fleet.bus.quiet for node in nodes.values())
    for node in nodes.values():
        node.fleet.bus.quiet = 3600.0
    if settle:
        # Each bus's watch waits out the quiet it started with before it reads the new one:
        # let that happen now, before anything is counted, not at some move of the run.
        await asyncio.sleep(quiet)
        # Before each poll of the loop, Redis is given the time to answer what was sent:
        # under callgrind this process runs some fifty times slower than Redis, and whether
        # an answer is in when the loop polls (then it is handled in that pass) would
        # otherwise depend on the machine's load, and with it the number of passes.
        selector: Any = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
        poll = selector.select

        def select(timeout: float | None = None) -> Any:
            time.sleep(settle)
            return poll(timeout)
        selector.select = select
    game = get_game("mantis")
    assert game is not None
    host = Client(nodes["A"])
    places = {"local": "AA", "forwarded": "EE", "spread": "AE"}[mode]
    players = [Client(nodes[n]) for n in places]
    await host.request("hello", protocol=1, name="host")
    for n, player in enumerate(players):
        await player.request("hello", protocol=1, name=f"p{n}")
    made, cpu = 0, 0.0
    if moves_alone is not None:
        moves_alone.on()
    while made < moves:
        room_id = (await host.request("create", game="mantis", seats=2,
                                      options={"target": 105}, sit=False))["room"]
        for seat, player in enumerate(players):
            await player.request("join", room=room_id, seat=seat)
        for player in players:
            await player.request("ready", room=room_id)
        room = nodes["A"].rooms.rooms[room_id]
        await until(lambda r=room: r.record.status == "playing")  # type: ignore[misc]
        while room.record.status == "playing" and made < moves:
            assert room.record.state is not None
            seat = game.to_act(room.record.state)[0]
            move = room.audience.view(room.record, seat)["moves"][0]
            mover = players[seat]
            before = [p.updates for p in players]
            started = time.process_time()
            nothing()
            answer = mover.send("move", room=room_id, version=room.record.version,
                                mid=mover.ids + 1, move=move)
            await answer
            await until(lambda b=before: all(  # type: ignore[misc]
                p.updates > n for p, n in zip(players, b, strict=True)))
            cpu += time.process_time() - started
            assert answer.result()["t"] == "ok", answer.result()
            made += 1
        for player in players:
            await player.request("leave", room=room_id)
    if moves_alone is not None:
        moves_alone.off()
    for node in nodes.values():
        await node.drain()
    return cpu / made


def compiled() -> bool:
    """Whether the server's modules here are the compiled build's."""
    from playhall.fleet import edge

    return not edge.__file__.endswith(".py")


def instructions(redis_url: str, mode: str, moves: int, part: str | None) -> int:
    """What callgrind counts for a whole run of this script making ``moves`` moves."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        extra = ["--collect-atstart=no"]  # (the run switches it on: see run)
        command = [sys.executable, __file__, "--redis-url", redis_url, "--mode", mode,
                   "--moves", str(moves), "--settle", str(SETTLE)]
        command += ["--part", part] if part else []
        # One hash seed for every run: the order of sets of strings, and with it some of the
        # work, would otherwise differ from run to run.
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *extra,
                        *command], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
        summary = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        assert summary is not None
        return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--mode", choices=MODES, nargs="*", default=["local", "forwarded"])
    parser.add_argument("--count", action="store_true", help="instructions under callgrind")
    parser.add_argument("--parts", nargs="*", choices=list(PARTS),
                        help="with --count: the forwarded move's parts too (named: those)")
    parser.add_argument("--part", choices=list(PARTS), help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help="a Redis to use (default: one started here)")
    parser.add_argument("--settle", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    log.configure("json", "warning")  # as the benchmarks run the server
    if (args.parts is not None or args.part) and compiled():
        raise SystemExit("--parts wraps the server's methods, which the compiled build's "
                         "classes do not allow: count the parts on the pure build")
    redis = None
    url = args.redis_url
    if not url:
        from moves import free_port

        from playhall.store.embedded import EmbeddedRedis

        data = Path(tempfile.mkdtemp(prefix="playhall-fleet-path-"))
        redis = EmbeddedRedis(data / "redis", port=free_port())
        url = redis.start()
    try:
        if args.count:
            counts: dict[tuple[str, str | None], float] = {}
            jobs: list[tuple[str, str | None]] = [(mode, None) for mode in args.mode]
            if args.parts is not None:
                jobs += [("forwarded", part) for part in args.parts or PARTS]
            for mode, part in jobs:
                few = instructions(url, mode, args.moves, part)
                many = instructions(url, mode, 2 * args.moves, part)
                counts[(mode, part)] = (many - few) / args.moves
                label = mode if part is None else f"  {part}"
                print(f"{label:16} {counts[(mode, part)]:>10,.0f} instructions per move "
                      f"({args.moves} and {2 * args.moves} moves)", flush=True)
            if ("local", None) in counts and ("forwarded", None) in counts:
                extra = counts[("forwarded", None)] - counts[("local", None)]
                print(f"{'forwarding adds':16} {extra:>10,.0f} instructions per move")
            return
        if args.part or args.settle:  # a run under callgrind
            asyncio.run(run(url, args.mode[0], args.moves, args.part, args.settle))
            return
        for mode in args.mode:
            per_move = asyncio.run(run(url, mode, args.moves, None))
            print(f"{mode:10} {per_move * 1e6:.1f} us of CPU per move ({args.moves} moves)")
    finally:
        if redis is not None:
            redis.stop()
            shutil.rmtree(redis.data_dir.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
