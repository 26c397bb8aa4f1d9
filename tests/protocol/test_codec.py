"""Frames: one msgpack map per binary websocket message (playhall_protocol.codec)."""

from __future__ import annotations

import enum
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall_protocol import ProtocolError, decode, encode, errors
from playhall_protocol.codec import frame_head, pack


def _refused(frame: bytes | str, words: str = "") -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        decode(frame)
    assert info.value.code == errors.BAD_FRAME
    assert words in info.value.reason
    assert str(info.value).startswith("bad_frame: ")
    return info.value


def test_round_trip() -> None:
    message = {"t": "ok", "re": 3, "room": "r", "seat": None, "chat": [], "at": 1.5, "b": b"\x00"}
    assert decode(encode(message)) == message


def test_text_frames_are_refused() -> None:
    _refused('{"t": "hello"}', "text")
    _refused("", "text")


@pytest.mark.parametrize("value", [[], [1, 2], 1, -1, "t", b"t", None, True, 1.5])
def test_a_frame_must_be_a_map(value: Any) -> None:
    _refused(msgpack.packb(value, use_bin_type=True), "map")


def test_trailing_bytes() -> None:
    frame = encode({"t": "ping", "id": 1})
    _refused(frame + b"\x00")
    _refused(frame + frame)


@pytest.mark.parametrize("frame", [b"", b"\x81", b"\x81\xa1t", b"\x82\xa1t\x01", b"\xda\x00"])
def test_truncated(frame: bytes) -> None:
    _refused(frame)


def test_garbage() -> None:
    _refused(b"\xc1")
    _refused(b"\x81\xa1t\xa2\xff\xfe")  # invalid UTF-8
    _refused(b"GET / HTTP/1.1\r\n\r\n")


@pytest.mark.parametrize("key", [1, -1, None, 1.5, True])
def test_map_keys_must_be_strings(key: Any) -> None:
    _refused(msgpack.packb({key: 1}, use_bin_type=True, strict_types=False))


def _nested(arrays: int, inner: Any = 0) -> dict[str, Any]:
    """A frame: the map, then ``arrays`` arrays one inside the other, then ``inner``."""
    value = inner
    for _ in range(arrays):
        value = [value]
    return {"x": value}


def test_depth_32_is_accepted() -> None:
    """Depth counts arrays and maps (the frame's own map is 1); scalars add nothing."""
    for frame in (_nested(31), _nested(31, "deep"), _nested(30, []), _nested(30, {})):
        assert decode(encode(frame)) == frame


def test_depth_33_is_refused() -> None:
    _refused(encode(_nested(32)), "deeper than 32")
    _refused(encode(_nested(31, [])), "deeper than 32")
    _refused(encode(_nested(31, {"k": 1})), "deeper than 32")
    deep: Any = {"k": 0}
    for _ in range(32):
        deep = {"k": deep}
    _refused(encode(deep), "deeper than 32")


def test_depth_is_the_deepest_branch() -> None:
    wide = {"a": [[1]], "b": _nested(31)["x"], "c": {"d": 2}}
    assert decode(encode(wide)) == wide
    wide["e"] = [wide["b"]]
    _refused(encode(wide), "deeper than 32")


def test_depth_counts_map_values_not_keys() -> None:
    assert decode(encode({"a": {"b": {"c": 1}}})) == {"a": {"b": {"c": 1}}}


def test_custom_depth_limit() -> None:
    assert decode(encode({"a": [1]}), max_depth=2)
    with pytest.raises(ProtocolError):
        decode(encode({"a": [[1]]}), max_depth=2)


def test_very_deep_frames_fail_cleanly() -> None:
    """Deeper than msgpack's own stack: still just a bad_frame, never a crash."""
    _refused(b"\x81\xa1x" + b"\x91" * 100_000 + b"\x80")
    _refused(b"\x81\xa1x" + b"\x81\xa1x" * 100_000 + b"\x80")


def test_strings_and_binary_stay_apart() -> None:
    frame = encode({"s": "abc", "b": b"abc"})
    assert frame == bytes.fromhex("82a173a3616263a162c403616263")
    assert decode(frame) == {"s": "abc", "b": b"abc"}


def test_arrays_decode_as_lists() -> None:
    assert decode(encode({"a": (1, 2)})) == {"a": [1, 2]}
    assert type(decode(encode({"a": [1]}))["a"]) is list


def test_ints_floats_and_bools_stay_apart() -> None:
    decoded = decode(encode({"i": 1, "f": 1.0, "b": True}))
    assert [type(decoded[k]) for k in "ifb"] == [int, float, bool]


def test_encode_refuses_what_is_not_plain_data() -> None:
    with pytest.raises(TypeError):
        encode({"x": object()})
    with pytest.raises(TypeError):
        encode({"x": {1, 2}})


def test_a_refused_encode_leaves_nothing_behind_for_the_next() -> None:
    # encode reuses one packer: what a failure had packed so far must not lead the next frame.
    with pytest.raises(TypeError):
        encode({"t": "update", "diff": [["set", ["a"], 1], ["set", ["b"], object()]]})
    assert encode({"t": "ok", "re": 1}) == b"\x82\xa1t\xa2ok\xa2re\x01"


def test_protocol_error_carries_code_and_reason() -> None:
    error = ProtocolError(errors.BAD_MESSAGE, "field 'x' must be a string")
    assert (error.code, error.reason) == ("bad_message", "field 'x' must be a string")
    assert str(error) == "bad_message: field 'x' must be a string"


# -- edge cases the spec pins down ---------------------------------------------------------


def test_binary_map_keys_are_refused() -> None:
    _refused(msgpack.packb({b"t": "ping", "id": 1}, use_bin_type=True))


def test_extension_types_are_refused() -> None:
    _refused(msgpack.packb({"t": "move", "x": msgpack.ExtType(5, b"ab")}, use_bin_type=True))


@pytest.mark.parametrize("value", [7, "m7", None, [1, "a", b"\x00"], {"type": "score"}, 1.5])
def test_pack_packs_any_plain_value_as_messages_are(value: Any) -> None:
    assert pack(value) == msgpack.packb(value, use_bin_type=True)
    with pytest.raises(TypeError):
        pack({"bad": object()})
    assert pack(value) == msgpack.packb(value, use_bin_type=True)  # nothing left behind


class _Level(enum.IntEnum):
    HIGH = 3


class _Colour(enum.StrEnum):
    RED = "red"

    def __str__(self) -> str:  # what packing must not use: the wire has the value
        return "Colour.RED"


class _Map(dict[str, Any]):
    pass


class _Row(list[Any]):
    pass


class _Bytes(bytes):
    pass


class _Real(float):
    pass


_SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.binary(max_size=8)
    | st.sampled_from([_Level.HIGH, _Colour.RED, _Bytes(b"\x01"), _Real(2.5)])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=4).map(tuple)
    | st.lists(inner, max_size=4).map(_Row)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4).map(_Map),
    max_leaves=20,
)


@given(_VALUES)
def test_pack_gives_msgpacks_bytes_for_tuples_and_subclasses_too(value: Any) -> None:
    # The packer checks types exactly; what is not exactly a msgpack type is made plain first.
    assert pack(value) == msgpack.packb(value, use_bin_type=True)
    assert encode({"v": value}) == msgpack.packb({"v": value}, use_bin_type=True)


@pytest.mark.parametrize("value", [object(), {1, 2}, {"a": [complex(1, 2)]}, range(3)])
def test_pack_refuses_what_is_not_plain_data(value: Any) -> None:
    with pytest.raises(TypeError):
        pack(value)


@given(st.integers(0, 20), st.integers(0, 20), st.booleans())
def test_a_frame_spliced_from_packed_fields_is_the_frame_encode_makes(
    first: int, more: int, big: bool
) -> None:
    # Map sizes either side of the one-byte header's limit (15) and of map16's (65535).
    extra = 65530 if big else 0
    head = {f"h{i}": i for i in range(first + extra)}
    tail = {f"t{i}": [i, "x"] for i in range(more)}
    spliced = frame_head(head, len(tail)) + b"".join(pack(k) + pack(v) for k, v in tail.items())
    assert spliced == encode({**head, **tail})


def test_timestamps_are_refused_like_every_extension_type() -> None:
    # msgpack decodes its timestamp type itself: the ext hook alone let them through.
    _refused(msgpack.packb({"t": "move", "x": msgpack.Timestamp(1)}), "extension types")
    _refused(msgpack.packb({"t": "move", "x": [{"at": msgpack.Timestamp(1, 5)}]}), "extension")


@pytest.mark.parametrize(
    "where",
    [
        lambda bad: {"x": bad},
        lambda bad: {"x": [bad]},
        lambda bad: {"x": [1, {"y": bad}]},
        lambda bad: {"x": {"y": [[bad]]}},
    ],
)
def test_timestamps_and_non_string_keys_are_refused_wherever_they_sit(where: Any) -> None:
    # In a map's value and in an array's item, at any depth: the check walks both. (Keys of
    # other types msgpack refuses itself; bin keys it lets through.)
    _refused(msgpack.packb(where(msgpack.Timestamp(1))), "extension types")
    _refused(msgpack.packb(where({b"k": 1}), use_bin_type=True), "keys must be strings")
    assert decode(msgpack.packb(where({"k": 1}))) == where({"k": 1})


# -- a key twice in one map ---------------------------------------------------------------------

_INTS = st.integers(-(2**63), 2**63 - 1)
#: Floats that float32 holds exactly, so both packings stand for the same message.
_FIELDS = st.dictionaries(
    st.text(max_size=4),
    st.one_of(_INTS, st.text(max_size=4), st.floats(width=32, allow_nan=False)),
    min_size=1,
    max_size=5,
)


def _map_bytes(pairs: list[tuple[str, Any]], single_floats: bool) -> bytes:
    """A msgpack map of ``pairs`` as given (a key may come twice), floats as float32 or 64."""
    packer = msgpack.Packer(use_bin_type=True, use_single_float=single_floats)
    return packer.pack_map_header(len(pairs)) + b"".join(
        packer.pack(key) + packer.pack(value) for key, value in pairs)


@given(_FIELDS, st.data(), st.booleans(), st.booleans())
def test_a_key_twice_in_any_map_is_refused_however_the_frame_is_packed(
    fields: dict[str, Any], data: Any, single_floats: bool, nested: bool
) -> None:
    """Frames packed in this codec's smallest forms and in others (float32): a duplicate is
    found on both of decode's ways, and the same maps without it decode."""
    pairs = list(fields.items())
    twice = data.draw(st.sampled_from(pairs))
    at = data.draw(st.integers(0, len(pairs)))
    doubled = [*pairs[:at], (twice[0], data.draw(_INTS)), *pairs[at:]]
    inner, plain = _map_bytes(doubled, single_floats), _map_bytes(pairs, single_floats)
    wrap = (lambda body: b"\x81\xa1m" + body) if nested else (lambda body: body)
    with pytest.raises(ProtocolError, match="same key twice") as refused:
        decode(wrap(inner))
    assert refused.value.code == errors.BAD_FRAME
    assert decode(wrap(plain)) == ({"m": fields} if nested else fields)
