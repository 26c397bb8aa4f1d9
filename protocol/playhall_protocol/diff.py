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
producer (short and plain: it is the specification; the server packs its diffs in C where that is
built, tested against it op for op), ``apply_diff`` the reference consumer.
"""

from __future__ import annotations

from typing import Any, Final, TypeGuard

import msgpack

from playhall_protocol.codec import SPEEDUPS, pack

Path = list[str | int]
Op = list[Any]

#: A map (not the whole view) with at most this many keys, most of them changed, is sent whole:
#: one op instead of one per key (a game's record of the last move, say).
SMALL_MAP: Final = 8
#: A short array (at most this many elements in common) whose elements mostly changed is sent
#: whole, unless every changed element is a map or an array on both sides (whose own diffs are
#: usually far smaller).
SHORT_ARRAY: Final = 8


def make_diff(old: Any, new: Any) -> list[Op]:
    """Operations that turn ``old`` into ``new`` (``[]`` if equal): the specification of the
    server's diffs (:func:`packed_diff` must give exactly these ops, packed)."""
    ops: list[Op] = []
    if not _same(old, new):
        _diff(old, new, [], ops)
    return ops


def packed_diff(old: Any, new: Any, memo: dict[Any, Any] | None = None) -> bytes:
    """``pack(make_diff(old, new))``, the bytes a frame carries: worked out in one pass by the
    C speedups where they are built (no op or path list is made), else by :func:`make_diff`.

    ``memo``, one dict shared by the diffs of one version's views, lets the C walk diff a
    subtree pair that those views share (the very same objects at the same path: the public
    part of a game state, say) once; the bytes are the same with or without it. Views must not
    be changed once built for this to hold, which is the server's rule anyway."""
    if _C_PACKED_DIFF is not None:
        packed: bytes = _C_PACKED_DIFF(old, new, memo)
        return packed
    return pack(make_diff(old, new))


_C_PACKED_DIFF: Final[Any] = SPEEDUPS.packed_diff if SPEEDUPS is not None else None


def _same(a: Any, b: Any) -> bool:
    """Equal as msgpack sees them. Python's ``==`` says ``True == 1 == 1.0`` and so
    ``[True] == [1]``; on the wire they differ, so containers that ``==`` calls equal are
    confirmed by their encodings."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict | list):
        return bool(msgpack.packb(a) == msgpack.packb(b))
    return True


def _nested(a: Any, b: Any) -> bool:
    """Both maps or both arrays: a pair that has a diff of its own."""
    return (isinstance(a, dict) and isinstance(b, dict)) or (
        isinstance(a, list) and isinstance(b, list)
    )


def _diff(old: Any, new: Any, path: Path, ops: list[Op]) -> None:
    """Append the ops for ``old`` -> ``new``, known not to be the same, at ``path``."""
    if isinstance(old, dict) and isinstance(new, dict):
        changed = [k for k, v in new.items() if k not in old or not _same(old[k], v)]
        removed = [k for k in old if k not in new]
        if path and len(new) <= SMALL_MAP and (len(changed) + len(removed)) * 2 > len(new):
            ops.append(["set", path, new])  # a small map that mostly changed goes whole
            return
        for key in changed:
            if key in old:
                _diff(old[key], new[key], [*path, key], ops)
            else:
                ops.append(["set", [*path, key], new[key]])
        for key in removed:
            ops.append(["del", [*path, key]])
        return
    if isinstance(old, list) and isinstance(new, list) and old and new:
        common = min(len(old), len(new))
        changed_at = [i for i in range(common) if not _same(old[i], new[i])]
        nested = all(_nested(old[i], new[i]) for i in changed_at)
        if len(changed_at) * 2 <= common or common > SHORT_ARRAY or nested:
            for i in changed_at:
                _diff(old[i], new[i], [*path, i], ops)
            for i in range(common, len(new)):
                ops.append(["set", [*path, i], new[i]])
            if len(new) < len(old):
                ops.append(["len", path, len(new)])
            return
    ops.append(["set", path, new])


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
