"""Verifying records without a server: the record of a real three-seat Mantis game
(tests/js/record-mantis.json, which the JavaScript verifier's tests read too) holds for the
Python verifier, with and without the engine's replay; and records damaged in shape rather than
in content give a failure at a place, never an exception."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from playhall.record_check import check_replay, replay_record
from playhall_client.fair import verify_record
from playhall_protocol import fairness, gamerecord

RECORD: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "js" / "record-mantis.json").read_text()
)


def test_the_recorded_game_holds_and_replays_to_its_outcome() -> None:
    jsonschema.validate(RECORD, gamerecord.schema())
    report = verify_record(RECORD, replay=check_replay)
    assert report.ok, report.lines()
    fair = RECORD["fair"]
    key = fairness.room_key(
        bytes.fromhex(fair["secret"]), RECORD["room"],
        [None if c is None else bytes.fromhex(c) for c in fair["contributions"]],
    )
    assert report.key == key
    replayed = list(replay_record(RECORD, key))
    assert [r.step["kind"] for r in replayed] == [
        s["kind"] for s in RECORD["steps"] if s["kind"] in ("move", "bot_move", "leave_game")
    ]
    assert all(r.before is not r.applied.state for r in replayed)


def _set(
    path: tuple[Any, ...], value: Any, rechain: bool = False
) -> Callable[[dict[str, Any]], None]:
    """Set the value at ``path``; ``rechain``: then make every hash again, so only the engine
    sees the damage."""
    def damage(record: dict[str, Any]) -> None:
        place: Any = record
        for name in path[:-1]:
            place = place[name]
        place[path[-1]] = value
        if rechain:
            record["final_hash"] = gamerecord.chained(
                record["room"], record["fair"]["commitment"], record["steps"]
            )
    return damage


@pytest.mark.parametrize(("damage", "where"), [
    pytest.param(_set(("steps", 7), "not a step"), "step 7", id="a step that is no map"),
    pytest.param(_set(("steps", 7, "move"), None), "step 7", id="a move that is none"),
    pytest.param(_set(("steps", 7, "move"), [1, [2]]), "step 7", id="a move that is a list"),
    pytest.param(_set(("steps", 7, "move"), [1, [2]], True), "step 7",
                 id="a move that is a list, the chain made again"),
    pytest.param(_set(("steps", 7, "move"), {"type": "steal", "target": "all"}, True), "step 7",
                 id="a move with a field of a wrong kind, the chain made again"),
    pytest.param(_set(("steps", 5, "move"), "boredom", True), "step 5",
                 id="a reason to leave that is none, the chain made again"),
    pytest.param(_set(("steps", 7, "time"), "noon"), "step 7", id="a time that is text"),
    pytest.param(_set(("steps", 7, "seat"), "0"), "step 7", id="a seat that is text"),
    pytest.param(_set(("steps",), {}), "record", id="steps that are no list"),
    pytest.param(_set(("fair", "secret"), "zz"), "fair", id="a secret not in hex"),
    pytest.param(_set(("fair", "contributions"), None), "fair", id="no contributions"),
    pytest.param(_set(("outcome", "winners"), ["a"]), "outcome", id="a winner that is text"),
    pytest.param(_set(("game",), "chess"), "record", id="a game this server has not"),
    pytest.param(_set(("options",), {"target": "x"}), "record", id="an option of a wrong kind"),
])  # fmt: skip
def test_a_record_damaged_in_shape_is_a_failure_at_a_place_not_a_crash(
    damage: Callable[[dict[str, Any]], None], where: str
) -> None:
    record = copy.deepcopy(RECORD)
    damage(record)
    report = verify_record(record, replay=check_replay)
    assert not report.ok
    assert report.failures[0].where.startswith(where), report.lines()


#: Values of every JSON kind, put in place of each field in turn.
ODD_VALUES: list[Any] = [None, 0, -1, 1.5, True, "x", "", [], {}, [[1]], {"a": {}}]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value``: the map keys and list indices down to each leaf."""
    if isinstance(value, dict):
        items: list[tuple[Any, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return [path]
    return [path] + [p for key, item in items for p in _paths(item, (*path, key))]


def test_any_field_of_any_kind_gives_a_report_never_an_exception() -> None:
    """Each field (the steps' through one step of each kind) replaced by a value of each JSON
    kind: the verifier with the engine's replay always reports, and a field the checks cover
    (the chain, the fair-deal material, the format) never passes changed."""
    sample = copy.deepcopy(RECORD)
    kept = {s["kind"]: i for i, s in enumerate(sample["steps"])}
    paths = [
        p for p in _paths(sample)
        if p and (p[0] != "steps" or len(p) < 2 or p[1] in kept.values())
    ]
    covered = ("format", "format_version", "room", "fair", "steps", "final_hash")
    for path in paths:
        for value in ODD_VALUES:
            record = copy.deepcopy(RECORD)
            _set(path, value)(record)
            report = verify_record(record, replay=check_replay)
            report.lines()
            # "" for the bot's contribution is null's meaning: none (the same key).
            same = path == ("fair", "contributions", 2) and value == ""
            if path[0] in covered and record != RECORD and not same:
                assert not report.ok, (path, value)
