"""A diff must carry changes that Python's ``==`` cannot see.

``True == 1 == 1.0`` in Python, so ``[True] == [1]``; msgpack encodes them differently and a
client in another language sees a different view. A diff that pruned such subtrees as equal
would leave that client's view wrong.
"""

from __future__ import annotations

import copy
from typing import Any

import msgpack
import pytest

from playhall_protocol import apply_diff, make_diff


@pytest.mark.parametrize(
    "old, new",
    [
        ([False, 1], [0, 1]),
        ({"a": [True]}, {"a": [1]}),
        ({"a": {"b": 1}}, {"a": {"b": 1.0}}),
        ([[0]], [[False]]),
        ({"x": [1, [2, [True]]]}, {"x": [1, [2, [1]]]}),
    ],
)
def test_bool_int_float_changes_inside_containers_are_sent(old: Any, new: Any) -> None:
    ops = make_diff(old, new)
    assert ops, "the change was pruned as 'equal'"
    result = apply_diff(copy.deepcopy(old), ops)
    assert msgpack.packb(result) == msgpack.packb(new)
