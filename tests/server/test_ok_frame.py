"""A request's answer is spliced from its result packed alone (net.session.ok_frame): the bytes
must be exactly what encoding the merged message gives, whatever the result holds."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from playhall.net.session import ok_frame
from playhall_protocol import decode, encode
from playhall_protocol.messages import MAX_ID

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    st.integers(0, MAX_ID),
    # Up to 20 fields: the whole map outgrows a fixmap at 14, the result's own at 16.
    st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ("t", "re")), _VALUES, max_size=20
    ),
)
def test_an_answer_is_the_encoded_message(rid: int, result: dict[str, Any]) -> None:
    whole = {"t": "ok", "re": rid, **result}
    frame = ok_frame(rid, result)
    assert frame == encode(whole)
    assert decode(frame) == whole


def test_a_moves_answer() -> None:
    frame = ok_frame(7, {"room": "r1", "version": 12})
    assert decode(frame) == {"t": "ok", "re": 7, "room": "r1", "version": 12}
    assert frame == encode({"t": "ok", "re": 7, "room": "r1", "version": 12})
