"""Update frames are spliced from parts packed once per version (rooms.audience.UpdateParts):
the bytes must be exactly what encoding the whole message gives, for every viewer."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from playhall.rooms import views
from playhall.rooms.audience import UpdateParts
from playhall_protocol import decode, encode
from playhall_protocol.codec import pack

_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "len"]), st.lists(st.text(max_size=3), max_size=3),
              st.integers(0, 9) | st.text(max_size=5)).map(list),
    max_size=12,
)
_EVENT = st.fixed_dictionaries({"type": st.sampled_from(["flip", "scored", "deal"])}, optional={
    "seat": st.integers(0, 5),
    "visible_to": st.lists(st.integers(0, 5), max_size=3),
})


@given(st.text(max_size=12), st.integers(1, 2**40), st.lists(_EVENT, max_size=4),
       st.lists(st.tuples(st.none() | st.integers(0, 5), _OPS), min_size=1, max_size=7))
def test_every_viewers_frame_is_the_encoded_message(
    room: str, version: int, events: list[dict[str, Any]], viewers: list[tuple[Any, list[Any]]]
) -> None:
    parts = UpdateParts(room, version, events)
    for key, diff in viewers:
        frame = parts.frame(pack(diff), key)
        whole = {"t": "update", "room": room, "from": version - 1, "to": version, "diff": diff,
                 "events": views.visible_events(events, key)}
        assert frame == encode(whole)
        assert decode(frame) == whole


def test_viewers_share_the_events_list_when_nothing_is_hidden() -> None:
    public = [{"type": "flip", "seat": 0}, {"type": "scored", "seat": 0}]
    assert views.visible_events(public, 0) is public
    assert views.visible_events(public, None) is public
    marked: list[dict[str, Any]] = [{"type": "deal", "visible_to": [1]}, {"type": "flip"}]
    assert views.visible_events(marked, 1) == [{"type": "deal"}, {"type": "flip"}]
    assert views.visible_events(marked, 0) == [{"type": "flip"}]
    assert views.visible_events(marked, None) == [{"type": "flip"}]
