"""Play the example session of PROTOCOL.md section 13 against a running server and print what
went over the wire, one message a line as JSON, in the order this script saw it.

    python protocol/tools/example_session.py ws://127.0.0.1:8765/

Alice creates a two-seat Mantis room (target 3, a turn clock), Bob joins, they chat and get
ready; the first to move scores, the other tries a move out of turn, the mover repeats the move
with the same id and then sends a stale one; Alice's connection drops, Bob moves, Alice comes
back with her token and catches up; they play to the end and Bob asks for a rematch. Who
moves first is the game's draw: the script starts over with new players until it is Alice, and
prints only that session. The section's text is this output with long values cut (``…``);
the hex of three messages is printed after it. It needs only the protocol package.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from playhall_protocol import apply_diff  # noqa: E402
from playhall_protocol.codec import decode, encode  # noqa: E402

#: Seconds without a frame after which the session is taken to be quiet (pushes delivered).
QUIET = 0.3
OPTIONS = {"target": 3, "clock": "turn", "clock_ms": 60_000}


class Wire:
    """One client's connection: its requests and every frame it receives go to the log."""

    def __init__(self, name: str, ws: ClientConnection, log: list[tuple[str, str, bytes]]):
        self.name = name
        self.ws = ws
        self.log = log
        self.ids = itertools.count(1)
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            assert isinstance(frame, bytes)
            self.log.append((self.name, "←", frame))
            message = decode(frame)
            future = self.replies.pop(message.get("re", -1), None)
            if future is not None:
                future.set_result(message)

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = next(self.ids)
        frame = encode({"t": kind, "id": rid, **fields})
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[rid] = future
        self.log.append((self.name, "→", frame))
        await self.ws.send(frame)
        reply = await asyncio.wait_for(future, 10)
        await quiet(self.log)
        return reply

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def quiet(log: list[tuple[str, str, bytes]]) -> None:
    """Wait until no frame has arrived for ``QUIET`` seconds (the pushes a step caused)."""
    while True:
        seen = len(log)
        await asyncio.sleep(QUIET)
        if len(log) == seen:
            return


async def session(url: str) -> list[tuple[str, str, bytes]] | None:
    """The session's log, or None if Bob drew the first move (the caller starts over)."""
    log: list[tuple[str, str, bytes]] = []
    alice = Wire("alice", await connect(url), log)
    bob = Wire("bob", await connect(url), log)
    try:
        hello = await alice.ask("hello", protocol=[1], name="alice")
        await bob.ask("hello", protocol=[1], name="bob")
        await alice.ask("games")
        room = (await alice.ask("create", game="mantis", seats=2, options=OPTIONS))["room"]
        await bob.ask("join", room=room)
        await alice.ask("chat", room=room, text="good luck!")
        # Each contributes 16 random bytes to the deal, as the reference clients do.
        await alice.ask("ready", room=room, entropy=os.urandom(16))
        await bob.ask("ready", room=room, entropy=os.urandom(16))
        if first_to_act(log, room) != 0:
            return None
        version = latest(log, room)
        await alice.ask("move", room=room, version=version, mid="m1", move={"type": "score"})
        await alice.ask("move", room=room, version=version + 1, mid="x1",
                        move={"type": "score"})
        await alice.ask("move", room=room, version=version, mid="m1", move={"type": "score"})
        await alice.ask("move", room=room, version=version, mid="m-stale",
                        move={"type": "score"})
        await alice.close()
        await quiet(log)
        version = latest(log, room)
        if first_to_act(log, room) == 1:
            await bob.ask("move", room=room, version=version, mid="b1", move={"type": "score"})
        alice = Wire("alice", await connect(url), log)
        await alice.ask("hello", protocol=[1], token=hello["token"])
        await alice.ask("sync", room=room, version=version)
        wires = (alice, bob)
        for n in itertools.count(2):
            version = latest(log, room)
            seat = first_to_act(log, room)
            if seat is None:
                break
            await wires[seat].ask("move", room=room, version=version, mid=f"m{n}",
                                  move={"type": "score"})
        await bob.ask("rematch", room=room)
        return log
    finally:
        await alice.close()
        await bob.close()


def latest(log: list[tuple[str, str, bytes]], room: str) -> int:
    """The room's version in the last snapshot or update Bob received."""
    for name, way, frame in reversed(log):
        message = decode(frame)
        if name == "bob" and way == "←" and message.get("room") == room:
            if message["t"] == "update":
                return int(message["to"])
            if message["t"] == "snapshot":
                return int(message["version"])
    raise AssertionError("no view of the room yet")


def first_to_act(log: list[tuple[str, str, bytes]], room: str) -> int | None:
    """The seat to act in Bob's view as the log has it (None: the game is over)."""
    view: dict[str, Any] = {}
    for name, way, frame in log:
        message = decode(frame)
        if name != "bob" or way != "←" or message.get("room") != room:
            continue
        if message["t"] == "snapshot":
            view = message["view"]
        elif message["t"] == "update":
            view = apply_diff(view, message["diff"])
    to_act = view.get("to_act") or []
    return int(to_act[0]) if view.get("status") == "playing" and to_act else None


def shown(frame: bytes) -> str:
    """A frame as JSON; bin values (a ``ready``'s entropy) as the section writes them."""

    def binary(value: object) -> str:
        assert isinstance(value, bytes)
        return f"<bin, {len(value)} random bytes>"

    text = json.dumps(decode(frame), separators=(",", ":"), ensure_ascii=False, default=binary)
    return text.replace('"<bin, ', "<bin, ").replace(' random bytes>"', " random bytes>")


async def main(url: str) -> None:
    for _ in range(20):
        log = await session(url)
        if log is not None:
            break
    else:
        raise SystemExit("Bob drew the first move 20 times in a row")
    width = max(len(name) for name, _, _ in log)
    for name, way, frame in log:
        print(f"{name:<{width}} {way} {shown(frame)}")
    print()
    printed: set[str] = set()
    for name, way, frame in log:
        message = decode(frame)
        if way == "→" and message.get("t") == "move" and message.get("mid") == "m1":
            kind = "the first move"
        elif message.get("code") == "stale":
            kind = "the stale refusal"
        elif name == "alice" and message.get("t") == "update" and any(
            e.get("type") == "ready" and e.get("seat") == 0 for e in message.get("events", [])
        ):
            kind = "the update for Alice's ready"
        else:
            continue
        if kind not in printed:
            printed.add(kind)
            print(f"{kind} ({len(frame)} bytes): {frame.hex()}")

if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
