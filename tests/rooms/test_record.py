"""The room record: a change makes a new record and leaves the old one as it was."""

from __future__ import annotations

import dataclasses

import pytest

from playhall.rooms.record import PLAYING, RoomRecord, Seat


def record() -> RoomRecord:
    return RoomRecord(
        id="r", game="mantis", options={}, seats=(Seat("a", "A"), Seat()), seed=1, creator="a"
    )


def test_evolve_moves_the_version_on_and_keeps_the_old_record() -> None:
    old = record()
    new = old.evolve(status=PLAYING, state={"x": 1})
    assert (new.version, new.status, new.state) == (1, PLAYING, {"x": 1})
    assert (old.version, old.status, old.state) == (0, "waiting", None)
    assert new.seats is old.seats and new.id == old.id
    assert new == dataclasses.replace(old, version=1, status=PLAYING, state={"x": 1})


def test_evolve_refuses_unknown_fields() -> None:
    with pytest.raises(TypeError, match="statu"):
        record().evolve(statu=PLAYING)


def test_a_record_survives_packing() -> None:
    new = record().evolve(state={"deck": [3, 1, 2]}, seen={"a": [["m", 1]]})
    assert RoomRecord.unpack(new.pack()) == new
