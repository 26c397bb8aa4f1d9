"""A game record built from a record and its log, without a server: only of a finished room,
valid against the schema, every step chained."""

from __future__ import annotations

import jsonschema
import pytest

from playhall.rooms import game_record, table
from playhall.rooms.replay import step_entry
from playhall_protocol import gamerecord
from tests.rooms.test_fair_deals import ALICE, mantis, seated


def _log(entries: list[list[bytes]]) -> list[tuple[float, dict[str, bytes]]]:
    return [
        (1.0 + i, {k.decode(): v for k, v in zip(e[::2], e[1::2], strict=True)})
        for i, e in enumerate(entries)
    ]


def test_only_a_finished_room_has_a_record_and_its_steps_are_chained() -> None:
    waiting = table.ready(seated(), mantis(), "alice", True, ALICE)[0]
    with pytest.raises(ValueError, match="finished"):
        game_record.build(waiting, "Mantis", [])
    started = table.ready(waiting, mantis(), "bob", True)[0]
    over = table.abandon(started, now=5.0)[0]
    log = _log([
        step_entry(waiting, "ready", 0, "alice", None, None),
        step_entry(started, "ready", 1, "bob", None, None),
        step_entry(over, "abandon", None, None, None, None),
    ])  # fmt: skip
    built = game_record.build(over, "Mantis", log)
    jsonschema.validate(built, gamerecord.schema())
    assert [(s["version"], s["kind"], s["seat"], s["time"]) for s in built["steps"]] == [
        (waiting.version, "ready", 0, 1.0), (started.version, "ready", 1, 2.0),
        (over.version, "abandon", None, 3.0),
    ]  # fmt: skip
    assert built["fair"]["contributions"] == [ALICE.hex(), None]
    start = gamerecord.chain_start(over.id, built["fair"]["commitment"])
    first = gamerecord.step_hash(start, built["steps"][0])
    assert built["steps"][0]["hash"] == first.hex()
    assert built["final_hash"] == built["steps"][-1]["hash"] != first.hex()
    assert game_record.build(over, "Mantis", [])["final_hash"] == start.hex()
