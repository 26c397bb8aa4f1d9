"""Reading a client's frame as the server does (``messages.read``): the same answers as
``decode`` then ``validate``, whatever the frame, with a plain move read in one pass that proves
"no key twice" from the frame's length instead of packing the message again."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall_protocol import ProtocolError, decode, errors
from playhall_protocol.codec import pack, packed_size, smallest_form
from playhall_protocol.messages import read, request_id_of, validate

MOVE = {"t": "move", "id": 6, "room": "r", "version": 5, "mid": "m1", "move": {"type": "score"}}


def _both(frame: bytes) -> tuple[Any, ...]:
    """What decode then validate make of ``frame``: the result, or the refusal's code, reason
    and the request id its reply names."""
    message: Any = None
    try:
        message = decode(frame)
        kind, rid = validate(message)
    except ProtocolError as exc:
        return ("refused", exc.code, exc.reason, request_id_of(message))
    return (message, kind, rid)


def _read(frame: bytes) -> tuple[Any, ...]:
    try:
        return read(frame)
    except ProtocolError as exc:
        return ("refused", exc.code, exc.reason, exc.request_id)


def _map(pairs: list[tuple[Any, Any]], single_floats: bool = False) -> bytes:
    """A msgpack map of ``pairs`` as given: a key may come twice."""
    packer = msgpack.Packer(use_bin_type=True, use_single_float=single_floats)
    return packer.pack_map_header(len(pairs)) + b"".join(
        packer.pack(key) + packer.pack(value) for key, value in pairs)


_SCALARS = st.one_of(
    st.integers(-(2**63), 2**63 - 1), st.text(max_size=40), st.floats(width=32, allow_nan=False),
    st.booleans(), st.none(), st.binary(max_size=4),
)
_MOVES = st.dictionaries(st.sampled_from(["type", "target", "card", "x"]),
                         st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3)), max_size=4)


@given(
    mid=st.one_of(st.text(max_size=70), st.integers(-5, 2**54)),
    version=st.integers(-5, 2**54),
    rid=st.one_of(st.integers(-5, 2**54), st.booleans()),
    room=st.text(max_size=70),
    move=_MOVES,
    extra=st.booleans(),
    twice=st.one_of(st.none(), st.integers(0, 6)),
    inner_twice=st.booleans(),
    single_floats=st.booleans(),
)
def test_read_answers_as_decode_then_validate(
    mid: Any, version: int, rid: Any, room: str, move: dict[str, Any], extra: bool,
    twice: int | None, inner_twice: bool, single_floats: bool,
) -> None:
    """Moves and near-moves, each part valid or not, packed in the smallest forms or with
    float32s, with a key twice in the top map or in the move's: ``read`` says what the two
    steps say, result or refusal, request id included."""
    move_pairs: list[tuple[Any, Any]] = list(move.items())
    if inner_twice and move_pairs:
        move_pairs.append((move_pairs[0][0], 1))
    inner = _map(move_pairs, single_floats)
    pairs: list[tuple[Any, Any]] = [("t", "move"), ("id", rid), ("room", room),
                                    ("version", version), ("mid", mid)]
    if extra:
        pairs.append(("x", 1))
    if twice is not None:
        pairs.insert(twice % len(pairs), pairs[twice % len(pairs)])
    head = _map(pairs, single_floats)
    # The move's map goes last, as its packed bytes (spliced in, so a key twice stays twice).
    frame = bytes((head[0] + 1,)) + head[1:] + msgpack.packb("move") + inner
    assert _read(frame) == _both(frame)


@pytest.mark.parametrize("message", [
    MOVE,
    {**MOVE, "mid": 17},
    {"t": "sync", "id": 9, "room": "r", "version": 0},
    {"t": "hello", "id": 1, "protocol": [1], "name": "alice"},
    {"t": "move", "id": 6, "room": "r", "version": 5, "mid": "m1"},
    {"t": "nope", "id": 6},
    {"t": "move", "id": -1},
])
def test_read_answers_as_decode_then_validate_for_plain_messages(message: dict[str, Any]) -> None:
    frame = msgpack.packb(message)
    assert _read(frame) == _both(frame)


def test_a_key_twice_in_a_moves_map_is_refused_on_the_one_pass_way() -> None:
    """The frame is otherwise in the packer's smallest forms, the way a move is cleared
    without packing it again: it is longer than its message packed, and so not cleared."""
    head = msgpack.packb({k: v for k, v in MOVE.items() if k != "move"})
    frame = bytes((head[0] + 1,)) + head[1:] + msgpack.packb("move") + _map(
        [("type", "score"), ("type", "steal")])
    with pytest.raises(ProtocolError, match="same key twice") as refused:
        read(frame)
    assert refused.value.code == errors.BAD_FRAME


def test_a_plain_move_in_the_smallest_forms_is_cleared_by_its_length() -> None:
    frame = pack(MOVE)
    assert read(frame) == (MOVE, "move", 6)
    assert smallest_form(frame, len(frame))
    assert not smallest_form(frame, len(frame) + 1)
    # A float32 anywhere is the one form shorter than the packer's: never cleared by length.
    assert not smallest_form(frame + b"\xca", len(frame) + 1)


@pytest.mark.parametrize("value", [
    0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53, -1, -32, -33, -128, -129,
    -32768, -32769, -(2**31), -(2**31) - 1, "", "a" * 31, "a" * 32, "a" * 255, "a" * 256,
    "a" * 65535, "a" * 65536, "é" * 16, "☃" * 11,
])
def test_packed_size_is_what_the_packer_makes(value: str | int) -> None:
    assert packed_size(value) == len(pack(value))


def test_a_refusal_after_decoding_names_the_request_id() -> None:
    with pytest.raises(ProtocolError) as refused:
        read(msgpack.packb({"t": "move", "id": 41, "room": "r"}))
    assert (refused.value.code, refused.value.request_id) == (errors.BAD_MESSAGE, 41)
    with pytest.raises(ProtocolError) as bad_frame:
        read(msgpack.packb({"t": "move", "id": 41, "room": msgpack.Timestamp(1)}))
    assert (bad_frame.value.code, bad_frame.value.request_id) == (errors.BAD_FRAME, None)


def test_a_float32_cannot_hide_a_key_twice() -> None:
    """A float32 is 4 bytes shorter than the packer's float: here exactly as much as the
    repeated entry adds, so the frame is as long as its message packed, and still refused."""
    head = msgpack.packb({k: v for k, v in MOVE.items() if k != "move"})
    frame = bytes((head[0] + 1,)) + head[1:] + msgpack.packb("move") + _map(
        [("ab", 1), ("ab", 1.5)], single_floats=True)
    assert len(frame) == len(pack({**MOVE, "move": {"ab": 1.5}}))
    with pytest.raises(ProtocolError, match="same key twice"):
        read(frame)
