"""The C speedups (playhall_protocol/_speedups.c) against their Python reference: the same
bytes as ``codec.pack(make_diff(old, new))`` for every pair of values, with or without a shared
memo, the values in them packed as the codec packs them, and the same errors.

The install builds the module wherever a C compiler is at hand (setup.py), and these tests
require it. ``PLAYHALL_SPEEDUPS=0`` makes the codec use the reference instead (the module is
still tested here). .ci/sanitized runs this file against a build with AddressSanitizer and
UndefinedBehaviorSanitizer, under the ``thorough`` hypothesis profile."""

from __future__ import annotations

import copy
import os
from typing import Any

import msgpack
import msgpack.fallback
import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall_protocol import codec, make_diff, packed_diff
from tests.cext import require_c_extension
from tests.protocol.test_codec import _VALUES
from tests.protocol.test_diff_properties import SETTINGS, edited, json_like

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


# -- pack, alone and for the values in a diff: as msgpack's Packer packs ---------------------

_OLD = object()  # not the same as any value: the diff is one op that sets the whole view
#: How that diff, [["set", [], value]], begins: an array of one op, an array of three, "set", [].
_SET_WHOLE = b"\x91\x93\xa3set\x90"


def _c_pack(value: Any) -> bytes:
    """The C packer through the diff that sets the whole view to ``value``; and on its own,
    checked here to give the same bytes, or the same error."""
    through_diff = _speedups.packed_diff(_OLD, value)
    alone = _speedups.pack(value)
    assert through_diff == _SET_WHOLE + alone
    return through_diff


def _reference_set(value: Any) -> bytes:
    return REFERENCE([["set", [], value]])


@given(_VALUES)
def test_pack_is_the_reference_packer_for_any_value(value: Any) -> None:
    # _VALUES has tuples, enums and subclasses: those go through the fallback.
    assert _c_pack(value) == _reference_set(value)


@given(st.integers(-(2**63), 2**64 - 1))
def test_every_int_takes_msgpacks_smallest_encoding(value: int) -> None:
    assert _c_pack(value) == _reference_set(value)


EDGES = [
    0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1,
    -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
    0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), True, False, None,
]


@pytest.mark.parametrize("value", EDGES, ids=repr)
def test_the_edges_of_each_encoding(value: Any) -> None:
    assert _c_pack(value) == _reference_set(value)


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
        assert _c_pack(value) == _reference_set(value)


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
        _reference_set(value)
    with pytest.raises(error):
        _c_pack(value)
    assert _c_pack([1, "x"]) == _reference_set([1, "x"])  # nothing left behind


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
            expected = _reference_set(value)
        except ValueError:
            with pytest.raises(ValueError, match="recursion limit"):
                _c_pack(value)
        else:
            assert _c_pack(value) == expected
    with pytest.raises(ValueError, match="recursion limit"):
        _c_pack(_nested(limit + 1))


def test_a_fallback_that_packs_reenters_safely() -> None:
    """The fallback is Python code; if it packs (msgpack's default does, for a subclass), the C
    packer is entered again while busy and must not overwrite its own buffer."""

    class Wrapped(list[Any]):
        pass

    value = {"outer": Wrapped([{"inner": [1, 2, 3]}, "x" * 300]), "after": "y" * 40}
    assert _c_pack(value) == msgpack.packb([["set", [], value]], use_bin_type=True)


# -- packed_diff ----------------------------------------------------------------------------


def seat_views(public: dict[str, Any], seat: int, own: Any) -> dict[str, Any]:
    """A viewer's view: its own parts, and the public part's values shared by identity, once
    where every viewer has them and, for seat 2, once more at another path."""
    view: dict[str, Any] = {"you": seat, "moves": own, "state": {"you": seat, **public}}
    if seat == 2:
        view["elsewhere"] = {**public}
    return view


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
    old: dict[str, Any] = {"a": [1, 2, 3, 4, 5, 6], "b": {"c": 1}}
    new = copy.deepcopy(old)
    new["a"][2] = 9
    new["b"]["d"] = [True]
    assert packed_diff(old, new) == _reference(old, new) == _speedups.packed_diff(old, new)


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
