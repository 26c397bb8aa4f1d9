"""The fast ``make_diff`` gives exactly the ops of a plain reference.

The reference below follows the same rules (a small map that mostly changed is sent whole, and a
short array whose changed elements are all maps or arrays is diffed element by element), but
confirms containers that ``==`` calls equal by their msgpack encodings. The fast one compares
element types instead and skips values that are the very same object; both must choose the same
ops, so clients see no change (PROTOCOL.md describes how the server builds diffs).
"""

from __future__ import annotations

import copy
from typing import Any

import msgpack
from hypothesis import given

from playhall_protocol import make_diff
from playhall_protocol.diff import SMALL_MAP
from tests.protocol.test_diff_properties import SETTINGS, edited, json_like, views


def _reference_same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict | list):
        return bool(msgpack.packb(a) == msgpack.packb(b))
    return True


def _reference_diff(old: Any, new: Any, path: list[Any], ops: list[Any]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        changed = [k for k, v in new.items() if k not in old or not _reference_same(old[k], v)]
        removed = [k for k in old if k not in new]
        if path and len(new) <= SMALL_MAP and (len(changed) + len(removed)) * 2 > len(new):
            ops.append(["set", path, new])  # a small map that mostly changed goes whole
            return
        for key, value in new.items():
            if key not in old:
                ops.append(["set", [*path, key], value])
            elif not _reference_same(old[key], value):
                _reference_diff(old[key], value, [*path, key], ops)
        for key in old:
            if key not in new:
                ops.append(["del", [*path, key]])
        return
    if isinstance(old, list) and isinstance(new, list) and old and new:
        common = min(len(old), len(new))
        changed = [i for i in range(common) if not _reference_same(old[i], new[i])]
        nested = all(
            (isinstance(old[i], dict) and isinstance(new[i], dict))
            or (isinstance(old[i], list) and isinstance(new[i], list))
            for i in changed
        )
        if len(changed) * 2 <= common or common > 8 or nested:
            for i in changed:
                _reference_diff(old[i], new[i], [*path, i], ops)
            for i in range(common, len(new)):
                ops.append(["set", [*path, i], new[i]])
            if len(new) < len(old):
                ops.append(["len", path, len(new)])
            return
    ops.append(["set", path, new])


def reference_diff(old: Any, new: Any) -> list[Any]:
    ops: list[Any] = []
    if not _reference_same(old, new):
        _reference_diff(old, new, [], ops)
    return ops


def _same_ops(old: Any, new: Any) -> None:
    expected = reference_diff(old, new)
    assert msgpack.packb(make_diff(old, new)) == msgpack.packb(expected), (old, new)


@SETTINGS
@given(json_like, json_like)
def test_same_ops_for_any_two_values(old: Any, new: Any) -> None:
    _same_ops(old, new)


@SETTINGS
@given(views, views)
def test_same_ops_for_any_two_views(old: dict[str, Any], new: dict[str, Any]) -> None:
    _same_ops(old, new)


@SETTINGS
@given(edited())
def test_same_ops_for_edited_views(pair: tuple[Any, Any]) -> None:
    _same_ops(*pair)


@SETTINGS
@given(edited())
def test_same_ops_when_unchanged_parts_are_shared(pair: tuple[Any, Any]) -> None:
    """Views share the parts that did not change (the same objects in both): the ops must be
    the ones for equal copies."""
    old, new = pair
    shared = _share(old, new)
    _same_ops(old, shared)
    assert msgpack.packb(shared) == msgpack.packb(new)


def _share(old: Any, new: Any) -> Any:
    """``new`` rebuilt with every subtree that encodes like ``old``'s at the same place being
    ``old``'s very object."""
    if type(old) is type(new) and msgpack.packb(old) == msgpack.packb(new):
        return old
    if isinstance(old, dict) and isinstance(new, dict):
        return {k: _share(old[k], v) if k in old else copy.deepcopy(v) for k, v in new.items()}
    if isinstance(old, list) and isinstance(new, list):
        return [_share(old[i], v) if i < len(old) else v for i, v in enumerate(new)]
    return new
