"""Validation of client messages (playhall_protocol.messages): every type's fields, their types
and limits, and the request id. The table below mirrors PROTOCOL.md; if messages.py changes,
this test fails until both are brought back in line."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playhall_protocol import ProtocolError, errors
from playhall_protocol.messages import (
    CLIENT_MESSAGES,
    MAX_ID,
    SERVER_PUSHES,
    Field,
    _is_plain_move,
    check_fields,
    request_id_of,
    validate,
)

# type -> {field: (wire types, required, max length)} as documented in PROTOCOL.md.
SPEC: dict[str, dict[str, tuple[tuple[type, ...], bool, int | None]]] = {
    "hello": {
        "protocol": ((int, list), True, 16),
        "token": ((str,), False, 200),
        "host_token": ((str,), False, 4096),
        "name": ((str,), False, 32),
    },
    "ping": {},
    "games": {},
    "rooms": {
        "game": ((str,), False, 64),
        "limit": ((int,), False, None),
        "after": ((str,), False, 64),
    },
    "lobby.watch": {"game": ((str,), False, 64)},
    "lobby.unwatch": {},
    "create": {
        "game": ((str,), True, 64),
        "seats": ((int,), True, None),
        "options": ((dict,), False, None),
        "private": ((bool,), False, None),
        "sit": ((bool,), False, None),
        "rated": ((bool,), False, None),
    },
    "join": {
        "room": ((str,), False, 64),
        "code": ((str,), False, 64),
        "seat": ((int,), False, None),
        "watch": ((bool,), False, None),
    },
    "leave": {"room": ((str,), True, 64)},
    "ready": {
        "room": ((str,), True, 64),
        "ready": ((bool,), False, None),
        "entropy": ((bytes,), False, 64),
    },
    "start": {"room": ((str,), True, 64)},
    "bot": {"room": ((str,), True, 64), "seat": ((int,), True, None)},
    "chat": {"room": ((str,), True, 64), "text": ((str,), True, 500)},
    "move": {
        "room": ((str,), True, 64),
        "version": ((int,), True, None),
        "mid": ((str, int), True, 64),
        "move": ((dict,), True, None),
    },
    "my_rooms": {},
    "history": {"room": ((str,), True, 64), "limit": ((int,), False, None)},
    "rename": {"name": ((str,), True, 32)},
    "sync": {
        "room": ((str,), True, 64),
        "version": ((int,), False, None),
        "code": ((str,), False, 64),
    },
    "rematch": {"room": ((str,), True, 64)},
    "resign": {"room": ((str,), True, 64)},
    "record": {"room": ((str,), True, 64)},
    "replay": {"room": ((str,), True, 64), "seat": ((int,), False, None)},
    "games_played": {
        "player": ((str,), False, 64),
        "limit": ((int,), False, None),
        "after": ((str,), False, 64),
    },
    "profile": {"player": ((str,), False, 64)},
    "seek": {
        "game": ((str,), True, 64),
        "seats": ((list,), True, 2),
        "options": ((dict,), False, None),
        "rating": ((list,), False, 2),
        "bots_after": ((int,), False, None),
    },
    "cancel_seek": {},
    "leaderboard": {
        "game": ((str,), True, 64),
        "limit": ((int,), False, None),
        "after": ((str,), False, 64),
    },
}

SAMPLE: dict[type, Any] = {str: "x", int: 1, bool: True, dict: {}, list: [1], bytes: b"x"}
OTHERS: list[Any] = ["x", 1, True, {}, [1], None, 1.5, b"x"]


def _kinds(field: Field) -> tuple[type, ...]:
    return field.kind if isinstance(field.kind, tuple) else (field.kind,)


def _message(
    kind: str, values: dict[str, Any] | None = None, *, everything: bool = False
) -> dict[str, Any]:
    message: dict[str, Any] = {"t": kind, "id": 7}
    for name, (kinds, required, _) in SPEC[kind].items():
        if required or everything:
            message[name] = SAMPLE[kinds[0]]
    message.update(values or {})
    return message


def _refused(message: dict[str, Any], code: str = errors.BAD_MESSAGE) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        validate(message)
    assert info.value.code == code
    assert info.value.reason
    return info.value


def _fields() -> list[tuple[str, str]]:
    return [(kind, name) for kind, fields in SPEC.items() for name in fields]


# -- the table itself -----------------------------------------------------------------------------


def test_message_table_matches_the_spec() -> None:
    actual = {
        kind: {f.name: (_kinds(f), f.required, f.max_len) for f in fields}
        for kind, fields in CLIENT_MESSAGES.items()
    }
    assert actual == SPEC


def test_server_pushes() -> None:
    assert set(SERVER_PUSHES) == {"update", "snapshot", "presence", "chat", "lobby"}


# -- valid messages -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SPEC))
def test_required_fields_alone_are_enough(kind: str) -> None:
    assert validate(_message(kind)) == (kind, 7)


@pytest.mark.parametrize("kind", sorted(SPEC))
def test_every_field_at_once(kind: str) -> None:
    assert validate(_message(kind, everything=True)) == (kind, 7)


@pytest.mark.parametrize(("kind", "name"), _fields())
def test_every_allowed_type_of_a_field(kind: str, name: str) -> None:
    for wire_type in SPEC[kind][name][0]:
        assert validate(_message(kind, {name: SAMPLE[wire_type]}))


def test_realistic_messages() -> None:
    for message in (
        {"t": "hello", "id": 1, "protocol": [1], "name": "alice"},
        {"t": "hello", "id": 1, "protocol": 1, "token": "0aba16fa73ca.3EKKsdMHTnVZNcbyPE0h5H"},
        {"t": "create", "id": 3, "game": "mantis", "seats": 2, "options": {"target": 3}},
        {"t": "join", "id": 2, "code": "A1B2C3"},
        {"t": "join", "id": 2, "room": "myjZIzuXI2M", "watch": True},
        {"t": "move", "id": 6, "room": "r", "version": 5, "mid": "m1", "move": {"type": "score"}},
        {"t": "move", "id": 6, "room": "r", "version": 5, "mid": 17, "move": {"type": "score"}},
        {"t": "sync", "id": 9, "room": "r", "version": 0},
        {"t": "ready", "id": 4, "room": "r", "ready": False},
    ):
        assert validate(message)[0] == message["t"]


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, n in _fields() if SPEC[k][n][1]])
def test_missing_required_field(kind: str, name: str) -> None:
    message = _message(kind)
    del message[name]
    assert name in _refused(message).reason


@pytest.mark.parametrize(("kind", "name"), _fields())
def test_wrong_types(kind: str, name: str) -> None:
    kinds = SPEC[kind][name][0]
    for value in OTHERS:
        if type(value) in kinds:
            continue
        _refused(_message(kind, {name: value}))


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, n in _fields() if int in SPEC[k][n][0]])
def test_bools_are_not_ints(kind: str, name: str) -> None:
    """msgpack true/false are not numbers: ``true`` is never seat 1."""
    _refused(_message(kind, {name: True}))
    _refused(_message(kind, {name: False}))


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, n in _fields() if int in SPEC[k][n][0]])
def test_ints_are_0_to_2_53_minus_1(kind: str, name: str) -> None:
    assert validate(_message(kind, {name: 0}))
    assert validate(_message(kind, {name: MAX_ID}))
    _refused(_message(kind, {name: -1}))
    _refused(_message(kind, {name: MAX_ID + 1}))
    _refused(_message(kind, {name: 2**64 - 1}))


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, n in _fields() if SPEC[k][n][2]])
def test_length_limits(kind: str, name: str) -> None:
    kinds, _, limit = SPEC[kind][name]
    assert limit is not None
    if str in kinds:
        assert validate(_message(kind, {name: "é" * limit}))  # characters, not bytes
        _refused(_message(kind, {name: "x" * (limit + 1)}))
    if list in kinds:
        assert validate(_message(kind, {name: [1] * limit}))
        _refused(_message(kind, {name: [1] * (limit + 1)}))


@pytest.mark.parametrize("kind", sorted(SPEC))
def test_unknown_fields_are_refused(kind: str) -> None:
    assert "colour" in _refused(_message(kind, {"colour": "red"})).reason
    _refused(_message(kind, {"re": 1}))  # not even the reply's field names


@pytest.mark.parametrize("kind", sorted(SPEC))
def test_null_is_not_an_absent_field(kind: str) -> None:
    """An optional field sent as nil is refused: leave it out instead."""
    for name in SPEC[kind]:
        _refused(_message(kind, {name: None}))


def test_limits() -> None:
    assert MAX_ID == 2**53 - 1


# -- the request id and the type ------------------------------------------------------------------


@pytest.mark.parametrize("rid", [0, 1, 2**32, MAX_ID])
def test_good_ids(rid: int) -> None:
    assert validate({"t": "ping", "id": rid}) == ("ping", rid)


@pytest.mark.parametrize("rid", [-1, MAX_ID + 1, 2**64 - 1, True, False, 1.0, "1", None, [1]])
def test_bad_ids(rid: Any) -> None:
    _refused({"t": "ping", "id": rid})


def test_missing_id() -> None:
    _refused({"t": "ping"})


@pytest.mark.parametrize("kind", [None, 1, True, b"ping", ["ping"]])
def test_type_must_be_a_string(kind: Any) -> None:
    _refused({"t": kind, "id": 1})
    _refused({"id": 1})


@pytest.mark.parametrize("kind", ["pong", "PING", "", "ok", "error", "update", "lobby.Watch"])
def test_unknown_type(kind: str) -> None:
    _refused({"t": kind, "id": 1}, errors.UNKNOWN_TYPE)


def test_id_is_checked_before_the_type() -> None:
    _refused({"t": "no-such-type", "id": -1}, errors.BAD_MESSAGE)
    _refused({"t": "no-such-type"}, errors.BAD_MESSAGE)


def test_request_id_of() -> None:
    assert request_id_of({"t": "x", "id": 5}) == 5
    assert request_id_of({"t": "ping", "id": MAX_ID}) == MAX_ID
    for bad in ({"id": True}, {"id": -1}, {"id": MAX_ID + 1}, {"id": "5"}, {}, [5], None, 5):
        assert request_id_of(bad) is None


# -- edge cases the spec pins down ---------------------------------------------------------


def test_hello_protocol_list_items_must_be_ints() -> None:
    _refused({"t": "hello", "id": 1, "protocol": ["1", True, 1.5]})


# -- the move's short cut (messages._is_plain_move) ----------------------------------------------

_ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([MAX_ID, MAX_ID + 1, -1]),
    st.text(max_size=3),
    st.text(min_size=63, max_size=66),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=2),
    st.binary(max_size=2),
    st.floats(allow_nan=False),
)


def _table_accepts(message: dict[str, Any]) -> bool:
    try:
        check_fields("move", message)
    except ProtocolError:
        return False
    return True


_ABSENT = object()
_KEY = st.text(max_size=64)
_SMALL_ID = st.integers(0, MAX_ID)
#: Per field of a move: a value that fits, any value at all, or no field.
_MOVE_FIELDS = {
    "room": _KEY,
    "version": _SMALL_ID,
    "mid": st.one_of(_KEY, _SMALL_ID),
    "move": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
}


@settings(max_examples=1000)
@given(
    values=st.fixed_dictionaries(
        {
            name: st.one_of(fits, fits, _ANY_VALUE, st.just(_ABSENT))
            for name, fits in _MOVE_FIELDS.items()
        }
    ),
    extra=st.one_of(st.just(_ABSENT), _ANY_VALUE),
)
def test_the_moves_short_cut_accepts_exactly_what_the_field_table_accepts(
    values: dict[str, Any], extra: Any
) -> None:
    # Every value here is of an exact type, as msgpack decodes: then the short cut and the
    # table-driven checks must agree both ways (the short cut only ever says yes early).
    message = {"t": "move", "id": 1, **{k: v for k, v in values.items() if v is not _ABSENT}}
    if extra is not _ABSENT:
        message["seat"] = extra
    table_says = _table_accepts(message)
    assert _is_plain_move(message) == table_says
    if table_says:
        assert validate(message) == ("move", 1)
    else:
        with pytest.raises(ProtocolError):
            validate(message)


_PLAIN_MOVE = {"t": "move", "id": 7, "room": "r", "version": 3, "mid": "m", "move": {}}
_EDGES = ["", "x" * 64, "x" * 65, 0, MAX_ID, MAX_ID + 1, -1, True, False, None, {}, [], 1.5]


@pytest.mark.parametrize("name", ["room", "version", "mid", "move"])
@pytest.mark.parametrize("edge", _EDGES, ids=repr)
def test_the_moves_short_cut_agrees_at_every_edge(name: str, edge: Any) -> None:
    message = {**_PLAIN_MOVE, name: edge}
    table_says = _table_accepts(message)
    assert _is_plain_move(message) == table_says
    assert _is_plain_move(_PLAIN_MOVE)
