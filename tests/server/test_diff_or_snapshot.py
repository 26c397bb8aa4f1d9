"""A diff never costs more than the snapshot it replaces (DESIGN.md, "Views and diffs"): when
a viewer's update would be larger than a fresh snapshot of its view, the room sends the
snapshot instead (rooms.audience.Audience._update_or_snapshot). None of the real games changes a
view that much in one move, so a game made for this test does: ``rewrite`` changes every
element of a long array (a diff of one op per element, several times the array's own size),
``nudge`` changes one."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from playhall import app, catalog
from playhall.games.contract import Applied, Game, Outcome, Rejected, State, View
from playhall_client import Client
from playhall_protocol import encode, make_diff
from playhall_protocol.diff import SMALL_MAP

from .conftest import server_config

SIZE = 64
FIXED = {f"k{i}": i for i in range(SMALL_MAP)}
MOVES = [{"type": "nudge"}, {"type": "rewrite"}, {"type": "stop"}]


class Bulk(Game):
    id = "test_bulk"
    title = "Bulk (test only)"
    min_seats = 1
    max_seats = 1

    def setup(self, seats: int, options: dict[str, Any], seed: bytes | int) -> State:
        return {"xs": list(range(SIZE)), "done": False}

    def to_act(self, state: State) -> list[int]:
        return [] if state["done"] else [0]

    def legal_moves(self, state: State, seat: int) -> list[dict[str, Any]]:
        return [] if state["done"] else MOVES

    def apply(self, state: State, seat: int, move: Any) -> Applied:
        if move not in MOVES:
            raise Rejected("illegal_move", "nudge, rewrite or stop")
        xs = list(state["xs"])
        if move["type"] == "nudge":
            xs[0] += 1
        elif move["type"] == "rewrite":
            xs = [x + 1000 for x in xs]
        return Applied({"xs": xs, "done": move["type"] == "stop"}, [])

    def view(self, state: State, seat: int | None) -> View:
        # More keys than a map the diff would send whole when most of it changed (SMALL_MAP).
        return {"xs": state["xs"], **FIXED}

    def outcome(self, state: State) -> Outcome | None:
        return Outcome([0], [0], "stopped") if state["done"] else None


@pytest.fixture
async def server(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[app.Running]:
    # The catalog's (cached) table of games, with the test's game added for this test only.
    monkeypatch.setitem(catalog.all_games(), Bulk.id, Bulk())
    running = await app.start(server_config(redis_url))
    yield running
    await running.drain()


async def _push_for(client: Client, room: str, version: int) -> dict[str, Any]:
    """The room frame that brought ``client`` to ``version`` (update or snapshot)."""
    while True:
        message = await client.pushes.get()
        if message.get("room") == room and version in (message.get("to"), message.get("version")):
            return message


async def _move(client: Client, room: str, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Make a move; the view before it and the frame that carried the new version."""
    before = copy.deepcopy(client.rooms[room].view)  # the client applies diffs in place
    reply = await client.move(room, {"type": kind})
    return before, await _push_for(client, room, reply["version"])


def _as_update(room: str, version: int, before: dict[str, Any], after: dict[str, Any]) -> bytes:
    """The update frame the room would have sent for this version."""
    return encode({"t": "update", "room": room, "from": version - 1, "to": version,
                   "diff": make_diff(before, after), "events": []})


async def test_an_update_larger_than_the_snapshot_is_sent_as_the_snapshot(
    server: app.Running,
) -> None:
    client = await Client.connect(f"ws://127.0.0.1:{server.port}/", name="solo")
    try:
        mirror = await client.create(Bulk.id, 1)
        room = mirror.room
        await mirror.wait(lambda m: m.view["status"] == "playing")  # one seat: it starts at once
        # Small diffs go out as updates, also past the 16 versions for which the room trusts
        # the snapshot size it last measured; each rewrite goes out as a snapshot.
        for nudges in (20, 3, 1):
            for _ in range(nudges):
                before, frame = await _move(client, room, "nudge")
                assert frame["t"] == "update" and frame["diff"]
                version = frame["to"]
                snapshot = encode({"t": "snapshot", "room": room, "version": version,
                                   "view": mirror.view, "presence": [True], "events": []})
                assert len(_as_update(room, version, before, mirror.view)) < len(snapshot)

            before, frame = await _move(client, room, "rewrite")
            assert frame["t"] == "snapshot", "a diff larger than the snapshot went out"
            version = frame["version"]
            assert frame["view"] == mirror.view and frame["view"]["state"]["xs"][1] > 1000
            assert len(encode(frame)) < len(_as_update(room, version, before, frame["view"]))
        # The mirror kept by snapshots and diffs is the view a newcomer gets.
        other = await Client.connect(f"ws://127.0.0.1:{server.port}/", name="watcher")
        try:
            watched = await other.join(room, watch=True)
            assert watched.view["state"] == mirror.view["state"]
        finally:
            await other.close()
    finally:
        await client.close()
