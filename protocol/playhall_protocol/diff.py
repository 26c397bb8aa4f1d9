"""The view-diff format: how a client turns the view it has into the view the server has now,
without knowing any game's rules.

A diff is a list of operations applied in order. A path is a list of steps from the root: a str
steps into a map, an int into an array.

``["set", path, value]``
    Put ``value`` at ``path``. The parent must exist. In an array the index is either an existing
    index (replace) or the array's length (append). An empty path replaces the whole view.
``["del", path]``
    Remove the key at the end of ``path`` from its map.
``["len", path, n]``
    Truncate the array at ``path`` to length ``n`` (n never grows an array: "set" appends).

Values are copied in whole; nothing is shared between ops. ``make_diff`` is the reference
producer, ``apply_diff`` the reference consumer.
"""

from __future__ import annotations

from operator import is_
from typing import Any, Final, TypeGuard

from playhall_protocol.codec import SPEEDUPS, pack

Path = list[str | int]
Op = list[Any]


#: Ops already worked out for a pair of subtrees (old, new) at a path, keyed by their ids: see
#: :func:`make_diff`. The entry holds both objects, so their ids are not reused while it lives.
Memo = dict[tuple[int, int], tuple[Any, Any, Path, list[Op]]]


def make_diff(old: Any, new: Any, memo: Memo | None = None) -> list[Op]:
    """Operations that turn ``old`` into ``new`` (``[]`` if equal).

    ``memo``, shared by the diffs of several viewers' views of one version, lets a subtree
    that those views share (the very same objects, at the same path: the public part of a game
    state, say) be diffed once; the other viewers' diffs take the same ops. Views must not be
    changed once built for this to hold, which is the server's rule anyway."""
    ops: list[Op] = []
    if type(old) is dict and type(new) is dict:
        _diff_maps(old, new, [], ops, memo)
    elif not _same(old, new):
        _diff(old, new, [], ops)
    return ops


def packed_diff(old: Any, new: Any, memo: dict[Any, Any] | None = None) -> bytes:
    """``pack(make_diff(old, new, memo))``, the bytes a frame carries, worked out in one pass
    by the C speedups where they are built (no op or path list is made).

    ``memo`` is as :func:`make_diff`'s, shared by the diffs of one version's views; its entries
    are this function's own, so a memo is used with one of the two functions only."""
    if _C_PACKED_DIFF is not None:
        packed: bytes = _C_PACKED_DIFF(old, new, memo)
        return packed
    return pack(make_diff(old, new, memo))


_C_PACKED_DIFF: Final[Any] = SPEEDUPS.packed_diff if SPEEDUPS is not None else None

_CONTAINERS: Final = (dict, list)
#: Types whose ``==`` is exact on the wire once both sides have the same type.
_SCALARS: Final = frozenset({str, int, float, bool, type(None), bytes})
_MISSING: Final = object()


def _same(a: Any, b: Any) -> bool:
    """Equal as msgpack sees them. Python's ``==`` says ``True == 1 == 1.0`` and so
    ``[True] == [1]``; on the wire they differ, so containers that ``==`` calls equal are
    confirmed by comparing the types of everything inside them too (:func:`_exact`)."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, _CONTAINERS):
        return _exact(a, b)
    return True


def _exact(a: Any, b: Any) -> bool:
    """For ``a == b`` of one type: whether every value inside has the same type on both sides
    too. Element types are compared in C; only containers inside are walked. (Map keys that
    ``==`` calls equal are one key to the diff, so they are not looked at.)"""
    if isinstance(a, dict):
        xs = list(a.values())
        ys = list(map(b.__getitem__, a))
    else:
        xs = a
        ys = b
    types = list(map(type, xs))
    if types != list(map(type, ys)):
        return False
    if _SCALARS.issuperset(types):
        return True
    for x, y in zip(xs, ys, strict=True):
        if x is not y and isinstance(x, _CONTAINERS) and not _exact(x, y):
            return False
    return True


def _diff(old: Any, new: Any, path: Path, ops: list[Op]) -> None:
    """Ops for ``old`` -> ``new``, known not to be the same (see :func:`_same`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        _diff_maps(old, new, path, ops)
    elif isinstance(old, list) and isinstance(new, list) and old and new:
        _diff_arrays(old, new, path, ops)
    else:
        ops.append(["set", path, new])


# The two walks below are the hot path of every move (one diff per viewer), so they are written
# for CPython: a value that is the very same object on both sides (most of a view, from one
# version to the next) costs one test, the common types are tested inline, and a path list is
# built only for an op or a subtree to walk.


#: A map (not the whole view) with at most this many keys, most of them changed, is sent whole:
#: one op instead of one per key (a game's record of the last move, say).
SMALL_MAP: Final = 8


def _diff_maps(
    old: dict[Any, Any], new: dict[Any, Any], path: Path, ops: list[Op], memo: Memo | None = None
) -> None:
    """Ops for two maps, which may be the same (then none)."""
    added = 0
    changed = 0
    start = len(ops)
    for key, value in new.items():
        was = old.get(key, _MISSING)
        if was is value:
            continue
        kind = type(value)
        if kind is not type(was):
            if was is _MISSING:
                added += 1
            ops.append(["set", [*path, key], value])
        elif kind is dict or (kind is list and was and value):
            n = len(ops)
            if memo is None:
                if kind is dict:
                    _diff_maps(was, value, [*path, key], ops)
                else:
                    _diff_arrays(was, value, [*path, key], ops)
            else:
                _recalled(was, value, [*path, key], ops, memo)
            if len(ops) == n:
                continue
        elif kind is list:
            if was or value:
                ops.append(["set", [*path, key], value])
            else:
                continue
        elif was != value:
            ops.append(["set", [*path, key], value])
        elif isinstance(value, _CONTAINERS) and not _exact(was, value):
            _diff(was, value, [*path, key], ops)
        else:
            continue
        changed += 1
    # Each key of new that old has is one of old's keys: if old has more, the rest are gone.
    if len(old) > len(new) - added:
        for key in old:
            if key not in new:
                ops.append(["del", [*path, key]])
                changed += 1
    if changed * 2 > len(new) and len(new) <= SMALL_MAP and path:
        del ops[start:]
        ops.append(["set", path, new])


def _recalled(old: Any, new: Any, path: Path, ops: list[Op], memo: Memo) -> None:
    """Ops for two maps or two non-empty arrays, from ``memo`` if another view's diff already
    worked them out at this same path, else worked out and remembered."""
    key = (id(old), id(new))
    hit = memo.get(key)
    if hit is not None and hit[0] is old and hit[1] is new and hit[2] == path:
        ops.extend(hit[3])
        return
    n = len(ops)
    if type(new) is dict:
        _diff_maps(old, new, path, ops, memo)
    else:
        _diff_arrays(old, new, path, ops)
    memo[key] = (old, new, path, ops[n:])


def _diff_arrays(old: list[Any], new: list[Any], path: Path, ops: list[Op]) -> None:
    """Ops for two non-empty arrays, which may be the same (then none)."""
    n = len(old)
    m = len(new)
    common = n if n < m else m
    # zip and map stop at the shorter array. A long array only appended to or truncated is
    # found in C.
    if common <= 4 or not all(map(is_, old, new)):
        changed = []
        nested = True  # every changed element is a map, or an array, in both
        # An index loop, not zip(): compiled, it is a native loop over both lists.
        for i in range(common):
            a = old[i]
            b = new[i]
            if a is not b and (
                type(a) is not type(b)
                or a != b
                or (isinstance(a, _CONTAINERS) and not _exact(a, b))
            ):
                changed.append(i)
                if nested and not _both_nested(a, b):
                    nested = False
        # A short array whose elements mostly changed is cheaper sent whole; unless they are
        # maps or arrays themselves (Mantis's tanks), whose own diffs are usually far smaller.
        if common <= 8 and len(changed) * 2 > common and not nested:
            ops.append(["set", path, new])
            return
        for i in changed:
            a = old[i]
            b = new[i]
            kind = type(b)
            if kind is type(a) and (kind is list or kind is dict):
                if kind is dict:
                    _diff_maps(a, b, [*path, i], ops)
                elif a and b:
                    _diff_arrays(a, b, [*path, i], ops)
                else:
                    ops.append(["set", [*path, i], b])
            elif isinstance(a, _CONTAINERS) and isinstance(b, _CONTAINERS):
                _diff(a, b, [*path, i], ops)
            else:
                ops.append(["set", [*path, i], b])
    for i in range(common, m):
        ops.append(["set", [*path, i], new[i]])
    if m < n:
        ops.append(["len", path, m])


def _both_nested(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are both maps or both arrays (so they can be diffed)."""
    return (isinstance(a, dict) and isinstance(b, dict)) or (
        isinstance(a, list) and isinstance(b, list)
    )


def apply_diff(view: Any, ops: list[Any]) -> Any:
    """Apply ``ops`` to ``view`` (mutated in place where possible) and return the new view.

    ``ops`` is as received: each should be an :data:`Op`, but each is checked.

    Raises ``ValueError`` on an operation that does not fit the view; a client then asks for a
    snapshot.
    """
    for op in ops:
        if not isinstance(op, list) or not op or not isinstance(op[0], str):
            raise ValueError(f"malformed op {op!r}")
        kind = op[0]
        if len(op) < 2 or not isinstance(op[1], list):
            raise ValueError(f"malformed op {op!r}")
        path = op[1]
        if kind == "set" and len(op) == 3:
            if not path:
                view = _copy(op[2])
                continue
            parent = _walk(view, path[:-1])
            key = path[-1]
            if isinstance(parent, dict) and isinstance(key, str):
                parent[key] = _copy(op[2])
            elif isinstance(parent, list) and _index(key) and 0 <= key <= len(parent):
                if key == len(parent):
                    parent.append(_copy(op[2]))
                else:
                    parent[key] = _copy(op[2])
            else:
                raise ValueError(f"cannot set {path!r}")
        elif kind == "del" and len(op) == 2 and path:
            parent = _walk(view, path[:-1])
            name = path[-1]
            if not isinstance(parent, dict) or not isinstance(name, str) or name not in parent:
                raise ValueError(f"cannot delete {path!r}")
            del parent[name]
        elif kind == "len" and len(op) == 3 and _index(op[2]):
            target = _walk(view, path)
            if not isinstance(target, list) or not 0 <= op[2] <= len(target):
                raise ValueError(f"cannot truncate {path!r} to {op[2]}")
            del target[op[2] :]
        else:
            raise ValueError(f"malformed op {op!r}")
    return view


def _index(step: Any) -> TypeGuard[int]:
    """An array index: an int, and not a bool (``true`` is not index 1 on the wire)."""
    return type(step) is int


def _walk(view: Any, path: list[Any]) -> Any:
    """The node at ``path`` (as received: every step is checked)."""
    node = view
    for step in path:
        if isinstance(node, dict) and isinstance(step, str) and step in node:
            node = node[step]
        elif isinstance(node, list) and _index(step) and 0 <= step < len(node):
            node = node[step]
        else:
            raise ValueError(f"path {path!r} does not exist")
    return node


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data
