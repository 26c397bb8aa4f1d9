"""The C speedups (playhall_protocol/_speedups.c) against their Python references: the same
bytes for every value, the same errors, the same diffs with or without a shared memo, and the
same frames decoded or refused.

The install builds the module wherever a C compiler is at hand (setup.py), and these tests
require it. ``PLAYHALL_SPEEDUPS=0`` makes the codec use the references instead (the module is
still tested here)."""

from __future__ import annotations

import copy
import os
import sys
from typing import Any

import msgpack
import msgpack.fallback
import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall_protocol import ProtocolError, codec, errors, make_diff, packed_diff
from tests.cext import require_c_extension
from tests.protocol.test_codec import _VALUES
from tests.protocol.test_diff_properties import SETTINGS, edited, json_like
from tests.protocol.test_diff_shared import seat_views
from tests.protocol.vectors import exact

_speedups = require_c_extension("playhall_protocol._speedups")
REFERENCE = codec._PACKER.pack
# As codec does when it loads the module; here also when PLAYHALL_SPEEDUPS=0 kept it from that.
_speedups.set_fallback(REFERENCE, msgpack.fallback.DEFAULT_RECURSE_LIMIT)


def test_the_speedups_are_used_unless_switched_off() -> None:
    if os.environ.get("PLAYHALL_SPEEDUPS") == "0":
        assert codec.SPEEDUPS is None
    else:
        assert codec.SPEEDUPS is _speedups
        assert codec.pack([1, "a"]) == _speedups.pack([1, "a"])


# -- pack -----------------------------------------------------------------------------------


@given(_VALUES)
def test_pack_is_the_reference_packer_for_any_value(value: Any) -> None:
    # _VALUES has tuples, enums and subclasses: those go through the fallback.
    assert _speedups.pack(value) == REFERENCE(value)


@given(st.integers(-(2**63), 2**64 - 1))
def test_every_int_takes_msgpacks_smallest_encoding(value: int) -> None:
    assert _speedups.pack(value) == REFERENCE(value)


EDGES = [
    0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1,
    -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
    0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), True, False, None,
]


@pytest.mark.parametrize("value", EDGES, ids=repr)
def test_the_edges_of_each_encoding(value: Any) -> None:
    assert _speedups.pack(value) == REFERENCE(value)


@pytest.mark.parametrize("size", [0, 31, 32, 255, 256, 65535, 65536])
def test_strings_bytes_arrays_and_maps_at_each_header_size(size: int) -> None:
    for value in (
        "a" * size,
        "é" * size,  # two bytes each in UTF-8: the header counts bytes
        b"\x00" * size,
        bytearray(b"\x01" * size),
        [0] * size,
        tuple(range(size)),
        {f"k{i}": i for i in range(size)},
    ):
        assert _speedups.pack(value) == REFERENCE(value)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (2**64, OverflowError),
        (-(2**63) - 1, OverflowError),
        ("\ud800", UnicodeEncodeError),
        (object(), TypeError),
        ({"a": [1, {2, 3}]}, TypeError),
    ],
    ids=repr,
)
def test_what_the_reference_refuses_is_refused_the_same_way(value: Any, error: type) -> None:
    with pytest.raises(error):
        REFERENCE(value)
    with pytest.raises(error):
        _speedups.pack(value)
    assert _speedups.pack([1, "x"]) == REFERENCE([1, "x"])  # nothing left behind


def _nested(depth: int, inner: Any = 0) -> Any:
    value: Any = inner
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("inner", [0, [], (1,)], ids=repr)
def test_the_nesting_limit_is_msgpacks(inner: Any) -> None:
    limit = msgpack.fallback.DEFAULT_RECURSE_LIMIT  # 511 before msgpack 1.1, 1024 since
    for depth in (limit - 1, limit, limit + 1):
        value = _nested(depth, inner)
        try:
            expected = REFERENCE(value)
        except ValueError:
            with pytest.raises(ValueError, match="recursion limit"):
                _speedups.pack(value)
        else:
            assert _speedups.pack(value) == expected
    with pytest.raises(ValueError, match="recursion limit"):
        _speedups.pack(_nested(limit + 1))


def test_a_fallback_that_packs_reenters_safely() -> None:
    """The fallback is Python code; if it packs (msgpack's default does, for a subclass), the C
    packer is entered again while busy and must not overwrite its own buffer."""

    class Wrapped(list[Any]):
        pass

    value = {"outer": Wrapped([{"inner": [1, 2, 3]}, "x" * 300]), "after": "y" * 40}
    assert _speedups.pack(value) == msgpack.packb(value, use_bin_type=True)


# -- packed_diff ----------------------------------------------------------------------------


def _reference(old: Any, new: Any) -> bytes:
    return REFERENCE(make_diff(old, new))


@SETTINGS
@given(json_like, json_like)
def test_packed_diff_is_the_packed_reference_diff_of_any_two_values(old: Any, new: Any) -> None:
    assert _speedups.packed_diff(old, new) == _reference(old, new)


@SETTINGS
@given(edited())
def test_packed_diff_is_the_packed_reference_diff_of_edited_views(pair: tuple[Any, Any]) -> None:
    old, new = pair
    assert _speedups.packed_diff(old, new) == _reference(old, new)
    assert _speedups.packed_diff(old, new, {}) == _reference(old, new)


@SETTINGS
@given(edited(), st.lists(st.tuples(json_like, json_like), min_size=3, max_size=3))
def test_a_shared_memo_gives_every_viewer_its_own_diff(
    pair: tuple[Any, Any], own: list[tuple[Any, Any]]
) -> None:
    old, new = pair
    memo: dict[Any, Any] = {}
    for seat, (old_own, new_own) in enumerate(own):
        before = seat_views(old, seat, old_own)
        after = seat_views(new, seat, new_own)
        assert _speedups.packed_diff(before, after, memo) == _reference(before, after)


def test_a_shared_subtree_is_diffed_once_and_only_reused_at_its_own_path() -> None:
    same = {name: 0 for name in "abcdefg"}
    old_public = {**same, "tanks": [[1, 2, 3, 4, 5], [6]], "last": {"seat": 0, "card": 3}}
    new_public = {**same, "tanks": [[1, 2, 3, 4, 5, 7], [6]], "last": {"seat": 1, "card": 7}}
    memo: dict[Any, Any] = {}
    first = _speedups.packed_diff(seat_views(old_public, 0, []), seat_views(new_public, 0, []),
                                  memo)
    entries = dict(memo)
    second = _speedups.packed_diff(seat_views(old_public, 1, []), seat_views(new_public, 1, []),
                                   memo)
    # The second viewer's own "state" map is new; its tanks and last, shared, came from the memo:
    # their entries are still the very ones the first viewer made (a miss would replace them).
    assert len(entries) == 3 and len(memo) == 4
    assert all(memo[key] is entry for key, entry in entries.items())
    assert second == first == REFERENCE([
        ["set", ["state", "tanks", 0, 5], 7],
        ["set", ["state", "last"], {"seat": 1, "card": 7}],
    ])
    # The third has the same objects at another path too: there it gets ops of its own.
    third = _speedups.packed_diff(seat_views(old_public, 2, []), seat_views(new_public, 2, []),
                                  memo)
    assert third == _reference(seat_views(old_public, 2, []), seat_views(new_public, 2, []))
    assert b"elsewhere" in third


@pytest.mark.parametrize("keys", [15, 16, 40, 65536])
def test_many_ops_take_the_larger_array_headers(keys: int) -> None:
    old = {f"k{i}": i for i in range(keys)}
    new = {f"k{i}": -i - 1 for i in range(keys)}
    assert _speedups.packed_diff(old, new) == _reference(old, new)


def test_long_arrays_with_changes_throughout() -> None:
    # More changed elements than the walk keeps on its stack (32).
    old = [[i] for i in range(100)] + list(range(50))
    new = [[i + 1] for i in range(100)] + [x * 2 for x in range(40)]
    assert _speedups.packed_diff(old, new) == _reference(old, new)
    assert _speedups.packed_diff({"a": old}, {"a": new}) == _reference({"a": old}, {"a": new})


def test_values_of_other_types_in_a_diff_are_packed_as_the_reference_packs_them() -> None:
    old = {"t": (1, 2), "n": 1, "l": [1, 2]}
    new = {"t": (1, 3), "n": True, "l": [1, 1.0], "e": [_Wrapped([1])]}
    assert _speedups.packed_diff(old, new) == _reference(old, new)


class _Wrapped(list[Any]):
    pass


def test_views_nested_too_deeply_are_refused_as_the_reference_refuses_them() -> None:
    old, new = _nested(5000), _nested(5000)
    node = new
    for _ in range(4999):
        node = node[0]
    node[0] = 1
    with pytest.raises(RecursionError):
        make_diff(old, new)
    with pytest.raises(RecursionError):
        _speedups.packed_diff(old, new)
    assert _speedups.packed_diff([1], [2]) == _reference([1], [2])


def test_packed_diff_uses_the_speedups_or_the_reference_alike() -> None:
    old = {"a": [1, 2, 3, 4, 5, 6], "b": {"c": 1}}
    new = copy.deepcopy(old)
    new["a"][2] = 9
    new["b"]["d"] = [True]
    assert packed_diff(old, new) == _reference(old, new) == _speedups.packed_diff(old, new)


# -- decode ---------------------------------------------------------------------------------


def _outcome(decoder: Any, frame: bytes, max_depth: int = 32) -> Any:
    """What decoding ``frame`` gives: the message, or that it was refused as a bad frame."""
    try:
        message = decoder(frame, max_depth)
    except (ProtocolError, ValueError) as exc:
        if isinstance(exc, ProtocolError):
            assert exc.code == errors.BAD_FRAME
        return "refused"
    return ("message", message)


def _c_decode(frame: bytes, max_depth: int) -> Any:
    return _speedups.decode_frame(frame, max_depth)


_MESSAGES = st.dictionaries(st.text(max_size=6), json_like, max_size=6)


@SETTINGS
@given(_MESSAGES)
def test_decode_reads_every_frame_as_the_reference_does(message: dict[str, Any]) -> None:
    frame = codec.encode(message)
    decoded = _speedups.decode_frame(frame, 32)
    assert decoded == codec.decode_reference(frame) == message
    assert exact(decoded, message)


@SETTINGS
@given(_MESSAGES, st.data())
def test_decode_refuses_what_the_reference_refuses(message: dict[str, Any], data: Any) -> None:
    """Frames damaged at random (cut short, bytes changed, bytes added): both decoders accept
    the same message or both refuse it."""
    frame = bytearray(codec.encode(message))
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(st.sampled_from(["cut", "change", "insert"]))
        at = data.draw(st.integers(0, len(frame)))
        if kind == "cut":
            del frame[at:]
        elif kind == "change" and at < len(frame):
            frame[at] = data.draw(st.integers(0, 255))
        else:
            frame[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    depth = data.draw(st.integers(1, 6))
    assert _outcome(_c_decode, bytes(frame), depth) == _outcome(
        codec.decode_reference, bytes(frame), depth)


@given(st.binary(max_size=40))
def test_decode_of_any_bytes_agrees_with_the_reference(frame: bytes) -> None:
    assert _outcome(_c_decode, frame) == _outcome(codec.decode_reference, frame)


@pytest.mark.parametrize(
    "value",
    [msgpack.Timestamp(1), msgpack.Timestamp(2**34, 5), msgpack.ExtType(5, b"ab")],
    ids=repr,
)
def test_extension_types_timestamps_included_are_refused_by_both(value: Any) -> None:
    """msgpack decodes its timestamp type without asking the ext hook: the reference let a
    Timestamp object through into the server until it looked for one."""
    for frame in (msgpack.packb({"t": "move", "x": value}),
                  msgpack.packb({"t": "move", "x": [1, {"y": value}]})):
        for decoder in (_c_decode, codec.decode_reference):
            with pytest.raises((ProtocolError, ValueError), match="extension types"):
                decoder(frame, 32)


def test_single_floats_and_every_int_width_decode_as_the_reference() -> None:
    values = {"f32": 1.1, "ints": [2**64 - 1, 2**32, 65536, 256, 128, -1, -33, -129, -32769,
                                    -(2**31) - 1, -(2**63)]}
    frame = msgpack.packb(values, use_single_float=True)
    assert _speedups.decode_frame(frame, 32) == codec.decode_reference(frame)
    assert _speedups.decode_frame(frame, 32)["ints"] == values["ints"]


def test_a_header_that_claims_more_than_the_frame_holds_is_refused_without_allocating() -> None:
    for frame in (b"\x81\xa1a\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff",
                  b"\x81\xa1a\xdb\xff\xff\xff\xff", b"\x81\xa1a\xc6\xff\xff\xff\xff"):
        with pytest.raises(ValueError, match="incomplete"):
            _speedups.decode_frame(frame, 32)


def test_map_keys_are_interned_as_msgpack_interns_them() -> None:
    key = "".join(["ro", "om"])  # a str made at run time, not the literal
    decoded = _speedups.decode_frame(codec.encode({key: 1}), 32)
    assert next(iter(decoded)) is sys.intern("room")


def test_many_distinct_keys_collide_in_the_key_cache_and_still_decode_exactly() -> None:
    # 2,000 keys over 256 slots; some not ASCII (never cached), some of the longest short length.
    keys = [f"k{i}" for i in range(1000)] + [f"é{i}" for i in range(500)] + [
        f"{i:031d}" for i in range(500)]
    for start in range(0, len(keys), 40):
        message = {key: i for i, key in enumerate(keys[start:start + 40])}
        frame = codec.encode(message)
        assert _speedups.decode_frame(frame, 32) == codec.decode_reference(frame) == message
        assert list(_speedups.decode_frame(frame, 32)) == list(message)


def test_short_string_values_repeat_from_the_value_cache_and_still_decode_exactly() -> None:
    # 3,000 values over 512 slots: every short length, some not ASCII (never cached), and some
    # one byte past the cached length; each frame decoded twice (the second from the cache).
    values = [f"v{i}" for i in range(1000)] + [f"é{i}" for i in range(500)] + [
        f"{i:08d}" for i in range(1000)] + [f"{i:09d}" for i in range(500)]
    for start in range(0, len(values), 50):
        message = {"values": values[start:start + 50], "one": values[start]}
        frame = codec.encode(message)
        for _ in range(2):
            assert _speedups.decode_frame(frame, 32) == codec.decode_reference(frame) == message
    again = _speedups.decode_frame(codec.encode({"a": "steal"}), 32)["a"]
    assert again is _speedups.decode_frame(codec.encode({"b": "steal"}), 32)["b"]


def test_the_diff_of_maps_whose_keys_come_in_another_order() -> None:
    """The walk takes old's values alongside new's while the keys come in the same order, and
    looks them up where they part: keys added, removed or reordered."""
    old = {"a": 1, "b": [1, 2], "c": {"x": 1}, "d": "s", "e": None}
    for new in (
        {"e": None, "d": "t", "c": {"x": 2}, "b": [1, 2], "a": 1},
        {"a": 1, "z": 0, "b": [1, 3], "c": {"x": 1}, "d": "s", "e": None},
        {"a": 2, "c": {"x": 1}, "d": "s", "e": 1},
        {"b": [1, 2], "a": 1, "d": "s", "c": {"y": 1}, "e": None},
    ):
        assert _speedups.packed_diff(old, new) == _reference(old, new)
        assert _speedups.packed_diff(new, old) == _reference(new, old)
