"""Game records over a real server: refused before the end (and so is a replay), the whole
history after it, valid against the format's JSON Schema, its hash chain recomputable, the
replayed moves giving the outcome, a private room's record and replay kept from outsiders, and
``playhall export``."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import jsonschema
import pytest

from playhall.catalog import get_game
from playhall.rooms.table import game_options
from playhall_client import Client, ServerError
from playhall_protocol import errors, fairness, gamerecord
from tests.server.helpers import play_to_the_end


def check_chain(record: dict[str, Any]) -> None:
    """Every step's hash follows from the one before it, and the last is ``final_hash``."""
    current = gamerecord.chain_start(record["room"], record["fair"]["commitment"])
    for step in record["steps"]:
        current = gamerecord.step_hash(current, step)
        assert step["hash"] == current.hex(), step
    assert record["final_hash"] == current.hex()


def replayed_outcome(record: dict[str, Any]) -> dict[str, Any] | None:
    """The outcome the game's engine reaches from the revealed key over the recorded steps."""
    fair = record["fair"]
    key = fairness.room_key(
        bytes.fromhex(fair["secret"]), record["room"],
        [None if c is None else bytes.fromhex(c) for c in fair["contributions"]],
    )
    game = get_game(record["game"])
    assert game is not None
    state = game.setup(len(record["seats"]), game_options(record["options"]), key)
    for step in record["steps"]:
        if step["kind"] in ("move", "bot_move"):
            state = game.apply(state, step["seat"], step["move"]).state
        elif step["kind"] == "auto":
            state = game.apply_auto(state).state
        elif step["kind"] == "leave_game":
            state = game.leave(state, step["seat"], step["move"]).state
    outcome = game.outcome(state)
    return None if outcome is None else outcome.as_dict()


async def test_a_finished_rooms_record_is_whole_valid_and_chained(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    stranger = await Client.connect(url, name="stranger")
    try:
        # The rules' target (15 with two players): no first move can end the game at once.
        room = await alice.create("mantis", 2)
        await alice.add_bot(room.room, 1)
        with pytest.raises(ServerError) as refused:
            await stranger.record(room.room)
        assert refused.value.code == errors.WRONG_STATUS
        await alice.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        with pytest.raises(ServerError) as refused:
            await alice.record(room.room)
        assert refused.value.code == errors.WRONG_STATUS  # it would show hidden facts
        for seat in (0, 1, None):  # nor a replay, from any seat
            with pytest.raises(ServerError) as refused:
                await stranger.replay(room.room, seat)
            assert refused.value.code == errors.WRONG_STATUS
        await play_to_the_end(alice, room)
        record = await stranger.record(room.room)  # anyone who may view the room
    finally:
        await alice.close()
        await stranger.close()
    jsonschema.validate(record, gamerecord.schema())
    assert json.loads(json.dumps(record)) == record  # plain JSON, nothing lost
    assert record["fair"] == room.view["fair"] and record["outcome"] == room.view["outcome"]
    assert [s["version"] for s in record["steps"]] == list(range(1, room.version + 1))
    assert [s["name"] for s in record["seats"]] == ["alice", "Bot 1"]
    moves = [s for s in record["steps"] if s["kind"] == "move"]
    assert moves and all(s["seat"] == 0 and s["mid"] is not None for s in moves)
    assert {"bot_move", "ready"} <= {s["kind"] for s in record["steps"]}
    times = [s["time"] for s in record["steps"]]
    assert times == sorted(times) and times[0] >= record["created"] - 1
    check_chain(record)
    assert replayed_outcome(record) == record["outcome"]
    # A changed step breaks the chain from there on.
    moves[0]["move"] = {"type": "steal", "target": 1}
    with pytest.raises(AssertionError):
        check_chain(record)


async def test_a_private_rooms_record_is_no_outsiders(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    outsider = await Client.connect(url, name="outsider")
    try:
        room = await alice.create("mantis", 2, options={"target": 3}, private=True)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        assert (await alice.record(room.room))["room"] == room.room
        with pytest.raises(ServerError) as refused:
            await outsider.record(room.room)
        assert refused.value.code == errors.NO_SUCH_ROOM
        assert (await alice.replay(room.room))[-1]["view"]["status"] == "finished"
        with pytest.raises(ServerError) as refused:
            await outsider.replay(room.room)  # nor its replay
        assert refused.value.code == errors.NO_SUCH_ROOM
        code = room.view["code"]
    finally:
        await alice.close()
        await outsider.close()
    exported = await _export(url, room.room, "--code", code)
    assert exported.returncode == 0, exported.stderr
    record = json.loads(exported.stdout)
    jsonschema.validate(record, gamerecord.schema())
    check_chain(record)
    refused_export = await _export(url, room.room)
    assert refused_export.returncode == 1 and "no_such_room" in refused_export.stderr


class _Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


async def _export(url: str, room: str, *more: str) -> _Ran:
    """``playhall export`` as a person runs it, in a process of its own."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "playhall.cli", "export", room, "--url", url, *more,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return _Ran(process.returncode, out.decode(), err.decode())
