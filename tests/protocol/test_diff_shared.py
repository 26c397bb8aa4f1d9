"""Diffs of several viewers' views of one version, with a shared memo (as the room broadcasts
them): each viewer gets exactly the ops it would get alone, and what the views share by identity
at the same path is worked out once."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given
from hypothesis import strategies as st

from playhall_protocol import make_diff
from playhall_protocol.diff import Memo
from tests.protocol.test_diff_properties import SETTINGS, edited, json_like


def seat_views(public: dict[str, Any], seat: int, own: Any) -> dict[str, Any]:
    """A viewer's view: its own parts, and the public part's values shared by identity, once
    where every viewer has them and, for seat 2, once more at another path."""
    view: dict[str, Any] = {"you": seat, "moves": own, "state": {"you": seat, **public}}
    if seat == 2:
        view["elsewhere"] = {**public}
    return view


@SETTINGS
@given(edited(), st.lists(st.tuples(json_like, json_like), min_size=3, max_size=3))
def test_every_viewer_gets_the_ops_it_would_get_alone(
    pair: tuple[Any, Any], own: list[tuple[Any, Any]]
) -> None:
    old, new = pair
    memo: Memo = {}
    for seat, (old_own, new_own) in enumerate(own):
        before = seat_views(old, seat, old_own)
        after = seat_views(new, seat, new_own)
        shared = make_diff(before, after, memo)
        alone = make_diff(before, after)
        assert msgpack.packb(shared) == msgpack.packb(alone), (seat, before, after)


def test_a_shared_subtree_is_diffed_once_and_only_reused_at_its_own_path() -> None:
    same = {name: 0 for name in "abcdefg"}  # unchanged keys, so no map is small enough to go whole
    old_public = {**same, "tanks": [[1, 2, 3, 4, 5], [6]], "last": {"seat": 0, "card": 3}}
    new_public = {**same, "tanks": [[1, 2, 3, 4, 5, 7], [6]], "last": {"seat": 1, "card": 7}}
    memo: Memo = {}
    first = make_diff(seat_views(old_public, 0, []), seat_views(new_public, 0, []), memo)
    second = make_diff(seat_views(old_public, 1, []), seat_views(new_public, 1, []), memo)
    third = make_diff(seat_views(old_public, 2, []), seat_views(new_public, 2, []), memo)
    assert first == [
        ["set", ["state", "tanks", 0, 5], 7],
        ["set", ["state", "last"], {"seat": 1, "card": 7}],
    ]
    # The second viewer's ops for the shared part are the first's, not worked out again.
    assert second == first and all(a is b for a, b in zip(second, first, strict=True))
    # The third has the same objects at another path too: there it gets ops of its own.
    elsewhere = [op for op in third if op[1][0] == "elsewhere"]
    assert elsewhere == [
        ["set", ["elsewhere", "tanks", 0, 5], 7],
        ["set", ["elsewhere", "last"], {"seat": 1, "card": 7}],
    ]
