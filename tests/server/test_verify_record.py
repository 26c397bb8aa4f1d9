"""Verifying a game record played over a real server: the whole record checks out (the
client library's ``verify_record`` with the server's engine replay, and ``playhall verify``),
and every field tampered with is caught where it was changed, by the Python verifier and, for
what it checks, by the JavaScript one (tests/js/verify_records.mjs) on the same records."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from playhall import app
from playhall.record_check import check_replay
from playhall_client import Client
from playhall_client.fair import Seen, verify_record
from playhall_protocol import gamerecord

from .conftest import server_config
from .helpers import play_to_the_end
from .test_js_library import node

ROOT = Path(__file__).resolve().parents[2]
JS_VERIFIER = ROOT / "tests" / "js" / "verify_records.mjs"

Record = dict[str, Any]


@pytest.fixture(scope="module")
async def game(redis_url: str) -> AsyncIterator[tuple[Record, Seen]]:
    """A finished Mantis game against a server bot: its record as ``playhall export`` writes
    it and a reader reads it back (JSON), and what alice's client saw of it."""
    running = await app.start(server_config(redis_url))
    alice = await Client.connect(f"ws://127.0.0.1:{running.port}/", name="alice")
    try:
        room = await alice.create("mantis", 2, options={"target": 8})
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        record = await alice.record(room.room)
    finally:
        await alice.close()
        await running.drain()
    yield json.loads(json.dumps(record)), room.seen()


@pytest.fixture(scope="module")
def played(game: tuple[Record, Seen]) -> Record:
    return game[0]


def index_of(record: Record, kind: str, nth: int = 0) -> int:
    return [i for i, s in enumerate(record["steps"]) if s["kind"] == kind][nth]


def rechained(record: Record) -> Record:
    """The record with every hash made again: a forger who changes a step and the chain after
    it (so only the engine, or the rules of the steps, can tell)."""
    record["final_hash"] = gamerecord.chained(
        record["room"], record["fair"]["commitment"], record["steps"]
    )
    return record


def other_hex(value: str) -> str:
    return ("0" if value[0] != "0" else "1") + value[1:]


def set_step(kind: str, field: str, value: Callable[[Any], Any], chain: bool = False,
             nth: int = 0) -> Callable[[Record], int]:
    def tamper(record: Record) -> int:
        i = index_of(record, kind, nth)
        record["steps"][i][field] = value(record["steps"][i][field])
        if chain:
            rechained(record)
        return i
    return tamper


def set_top(path: tuple[Any, ...], value: Callable[[Any], Any]) -> Callable[[Record], None]:
    def tamper(record: Record) -> None:
        place: Any = record
        for name in path[:-1]:
            place = place[name]
        last = path[-1]
        place[last] = value(place[last] if isinstance(place, list) else place.get(last))
    return tamper


# (what is changed, how, where it is caught: "step" for the changed step, else the place,
# then the field; "js": where the JavaScript verifier catches it, None if it cannot).
TAMPERS: list[tuple[str, Callable[[Record], Any], str, str, bool]] = [
    ("a move, its hash left", set_step("move", "move", lambda m: {**m, "type": "x"}),
     "step", "hash", True),
    ("a move, the chain made again", set_step("move", "move", lambda m: {"type": "fly"}, True),
     "step", "move", False),
    ("a bot's move, the chain made again",
     set_step("bot_move", "move", lambda m: {"type": "steal", "target": 0}
              if m.get("type") != "steal" else {"type": "score"}, True),
     "step", "move", False),
    ("a time, its hash left", set_step("move", "time", lambda t: t + 0.5), "step", "hash", True),
    ("a time moved back, the chain made again",
     set_step("move", "time", lambda t: t - 3600, True), "step", "time", True),
    ("a seat, its hash left", set_step("move", "seat", lambda s: 1 - s), "step", "hash", True),
    ("a seat, the chain made again", set_step("move", "seat", lambda s: 1 - s, True),
     "step", "seat", False),
    ("a seat that is none", set_step("ready", "seat", lambda s: 7, True), "step", "seat", True),
    ("a version", set_step("ready", "version", lambda v: v + 1, True), "step", "version", True),
    ("a move id", set_step("move", "mid", lambda m: "forged"), "step", "hash", True),
    ("a kind, the chain made again", set_step("move", "kind", lambda k: "auto", True),
     "step", "kind", False),
    ("a hash", set_step("bot", "hash", other_hex), "step", "hash", True),
    ("the final hash", set_top(("final_hash",), other_hex), "record", "final_hash", True),
    ("the secret", set_top(("fair", "secret"), other_hex), "fair", "secret", True),
    ("the commitment", set_top(("fair", "commitment"), other_hex), "fair", "secret", True),
    ("a contribution", set_top(("fair", "contributions", 0), other_hex),
     "replay", "", False),
    ("a contribution too many", set_top(("fair", "contributions"), lambda c: [*c, None]),
     "fair", "contributions", True),
    ("the winners", set_top(("outcome", "winners"), lambda w: [1 - w[0]]),
     "outcome", "winners", False),
    ("the reason", set_top(("outcome", "reason"), lambda r: "abandoned"),
     "outcome", "reason", True),
    ("who left", set_top(("outcome", "left"), lambda r: [1]), "outcome", "left", True),
    ("an option", set_top(("options", "target"), lambda t: t + 10), "replay", "", False),
    ("an option out of range", set_top(("options", "target"), lambda t: -1),
     "record", "options", False),
    # (Its last character changed to one it is not: a room id may end in "x".)
    ("the room id", set_top(("room",), lambda r: r[:-1] + ("y" if r.endswith("x") else "x")),
     "fair", "secret", True),
    ("the format version", set_top(("format_version",), lambda v: 2),
     "record", "format_version", True),
]


def tampered(played: Record, how: Callable[[Record], Any]) -> tuple[Record, int | None]:
    record = copy.deepcopy(played)
    changed = how(record)
    return record, changed


def test_the_played_record_verifies_whole(game: tuple[Record, Seen]) -> None:
    played, seen = game
    assert seen.seat == 0 and seen.entropy and seen.commitment == played["fair"]["commitment"]
    report = verify_record(played, replay=check_replay, seen=seen)
    assert report.ok, report.lines()
    text = "\n".join(report.lines())
    for checked in ("secret matches the commitment", "1 of 2 seats' contributions",
                    "seat 0's the one this client sent", "the one this client saw",
                    "every hash chained", "'target_reached' agrees", "game steps taken",
                    "each the bot's own choice", "the one the engine reaches"):
        assert checked in text, text
    # Without the engine, the library says what it left out.
    alone = verify_record(played)
    assert alone.ok and not alone.replayed
    assert "not checked: the replay" in alone.lines()[-1]
    # What alice's client saw is checked too: another contribution, another commitment.
    other = Seen(seen.commitment, 0, bytes(16))
    assert str(verify_record(played, seen=other).failures[0]) == (
        "fair, contributions[0]: not the contribution this client sent"
    )
    earlier = Seen("0" * 64)
    assert verify_record(played, seen=earlier).failures[0].field == "commitment"


@pytest.mark.parametrize(
    ("how", "where", "field"), [pytest.param(*t[1:4], id=t[0]) for t in TAMPERS]
)
def test_a_tampered_record_is_caught_where_it_was_changed(
    played: Record, how: Callable[[Record], Any], where: str, field: str
) -> None:
    record, changed = tampered(played, how)
    report = verify_record(record, replay=check_replay)
    assert not report.ok
    first = report.failures[0]
    if where == "step":
        assert first.step == changed and first.field == field, str(first)
        assert str(first).startswith(f"step {changed} (version "), str(first)
    elif where == "replay":  # only the engine, from the key, can tell
        assert [f.where.split()[0] for f in report.failures] in (["step"], ["outcome"]), report
        assert not any(f.where == "fair" for f in report.failures)
        assert "every stored step holds its hash" in report.lines()[-1]
    else:
        assert (first.where, first.field) == (where, field), str(first)
        assert str(first).startswith(f"{where}, {field}: ")


async def test_the_javascript_verifier_catches_what_it_checks_at_the_same_place(
    played: Record, tmp_path: Path
) -> None:
    """The same records through tests/js/verify_records.mjs (WebCrypto): the real one holds;
    each tampered one it can check fails at the place the Python checks without an engine
    name; the others it cannot tell (and says what it did not check)."""
    records = [played] + [tampered(played, t[1])[0] for t in TAMPERS]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    ran = await _node(str(JS_VERIFIER), str(path))
    assert ran.returncode == 0, ran.stderr
    reports = json.loads(ran.stdout)
    assert reports[0]["ok"], reports[0]
    assert any("not checked" in line and "engine" in line for line in reports[0]["lines"])
    for (name, _, _, _, caught), record, js in zip(TAMPERS, records[1:], reports[1:], strict=True):
        python = verify_record(record).failures  # the engine-free checks, as the JS makes them
        if caught:
            assert not js["ok"], name
            first = js["failures"][0]
            assert (first["where"], first["field"]) == (python[0].where, python[0].field), name
        else:
            assert js["ok"] == (not python), name


async def test_playhall_verify_prints_the_checks_and_the_place(
    played: Record, tmp_path: Path
) -> None:
    good = tmp_path / "game.json"
    good.write_text(json.dumps(played))
    ran = await _playhall("verify", str(good))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1] == "verified"
    assert "ok    replay: Mantis set up for 2 seats" in ran.stdout
    bad = tmp_path / "bad.json"
    record, changed = tampered(played, TAMPERS[1][1])
    assert changed is not None  # the step it changed
    bad.write_text(json.dumps(record))
    ran = await _playhall("verify", str(bad))
    assert ran.returncode == 1
    assert f"FAIL  step {changed} (version {changed + 1}, move), move: the engine refuses" in (
        ran.stdout
    )
    assert ran.stdout.splitlines()[-1] == "NOT verified"
    unreadable = tmp_path / "nothing.json"
    unreadable.write_text("{not json")
    ran = await _playhall("verify", str(unreadable))
    assert ran.returncode == 2 and "cannot read" in ran.stderr


class _Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


async def _run(*command: str) -> _Ran:
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return _Ran(process.returncode, out.decode(), err.decode())


async def _playhall(*args: str) -> _Ran:
    return await _run(sys.executable, "-m", "playhall.cli", *args)


async def _node(*args: str) -> _Ran:
    return await _run(node(), *args)
