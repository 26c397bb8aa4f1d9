"""The room record: a change makes a new record and leaves the old one as it was."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import pytest

from playhall.games.rng import int_key
from playhall.rooms.record import PLAYING, SEEN_PER_PLAYER, RoomRecord, Seat


def record() -> RoomRecord:
    return RoomRecord(
        id="r", game="mantis", options={}, seats=(Seat("a", "A"), Seat()), secret=int_key(1),
        creator="a",
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
    new = record().evolve(state={"deck": [3, 1, 2]}, seen={"a": {"m": 1, 7: 2}}, muted=("a",))
    assert RoomRecord.unpack(new.pack()) == new


def test_a_record_stored_before_mutes_existed_mutes_nobody() -> None:
    data = msgpack.unpackb(record().pack())
    del data["muted"]
    assert RoomRecord.unpack(msgpack.packb(data)).muted == ()


def test_a_game_step_keeps_the_mutes() -> None:
    muted = record().evolve(muted=("a",), status=PLAYING)
    assert muted.stepped({"y": 1}, PLAYING, None, None, None).muted == ("a",)


def test_fields_names_every_field_in_order() -> None:
    new = record().evolve(state={"x": 1}, seen={"a": {"m": 1}}, deadline=5.0)
    assert list(new.fields()) == [f.name for f in dataclasses.fields(RoomRecord)]
    assert new.fields() == {f.name: getattr(new, f.name) for f in dataclasses.fields(RoomRecord)}


def test_seen_remembers_the_last_moves_of_each_player() -> None:
    seen = record().seen
    for n in range(SEEN_PER_PLAYER + 5):
        seen = dataclasses.replace(record(), seen=seen).remember("a", f"m{n}", n + 1)
    seen = dataclasses.replace(record(), seen=seen).remember("b", 0, 99)
    new = record().evolve(seen=seen)
    assert new.seen_version("a", "m4") is None  # forgotten: the oldest five
    assert new.seen_version("a", "m5") == 6
    assert new.seen_version("a", f"m{SEEN_PER_PLAYER + 4}") == SEEN_PER_PLAYER + 5
    assert len(new.seen["a"]) == SEEN_PER_PLAYER
    assert (new.seen_version("b", 0), new.seen_version("b", "0"), new.seen_version("c", 0)) == (
        99,
        None,
        None,
    )


def test_stepped_is_evolve_with_the_fields_a_game_step_changes() -> None:
    old = dataclasses.replace(
        record(), code="C0DE", rematch_of="q", created=3.5, seen={"a": {1: 1}}, status=PLAYING
    )
    new = old.stepped({"y": 2}, "finished", {"winners": [0]}, 9.5, {"a": {1: 1, 2: 2}})
    assert new == dataclasses.replace(
        old,
        version=1,
        state={"y": 2},
        status="finished",
        outcome={"winners": [0]},
        deadline=9.5,
        seen={"a": {1: 1, 2: 2}},
    )
    assert old.stepped({"y": 2}, PLAYING, None, None, None).seen is old.seen  # None: unchanged


def test_the_written_out_init_takes_the_fields_and_defaults_of_the_dataclass() -> None:
    required: dict[str, Any] = {
        "id": "r", "game": "g", "options": {}, "seats": (), "secret": int_key(1), "creator": "c"
    }
    plain = RoomRecord(**required)
    for f in dataclasses.fields(RoomRecord):
        if f.name in required:
            continue
        if f.default is dataclasses.MISSING:
            assert f.default_factory is not dataclasses.MISSING, f.name  # no default: a factory
            expected = f.default_factory()
        else:
            expected = f.default
        assert getattr(plain, f.name) == expected, f.name
    everything = record().evolve(state={"x": 1}, seen={"a": {1: 2}}, deadline=3.0, code="C")
    values = everything.fields()
    assert RoomRecord(*values.values()) == everything  # positional, in field order
    assert RoomRecord(**values) == everything
    assert record().seen is not record().seen  # each record its own empty map
    with pytest.raises(dataclasses.FrozenInstanceError):
        everything.status = "x"  # type: ignore[misc]
