"""RESP encoding of the commands the store sends: the Python reference as the protocol says, and
its C twin (``_resp.c``) byte for byte the same as the reference on any arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall.store import pipe
from playhall.store.pipe import encode_bulk_reference, encode_command
from playhall_protocol import codec
from tests.cext import c_extension, needs

_resp = c_extension("playhall.store._resp")
NEEDS_C = needs(_resp, "playhall.store._resp")

#: The reference, and the C twin where it was built.
ENCODERS = pytest.mark.parametrize(
    "encode_bulk",
    [encode_bulk_reference, pytest.param(getattr(_resp, "encode_bulk", None), marks=NEEDS_C)],
    ids=["reference", "c"],
)


def test_commands_are_encoded_as_arrays_of_bulk_strings() -> None:
    assert encode_command([b"SET", b"k", b"a\r\nb"]) == (
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n"
    )


@ENCODERS
@pytest.mark.parametrize("size", [0, 1, 9, 10, 99, 100, 511, 512, 513, 70_000])
def test_bulk_string_headers_give_the_length_at_every_size(
    size: int, encode_bulk: Callable[[list[bytes]], bytes]
) -> None:
    # The reference takes short lengths' headers from a table made once and formats longer
    # ones as they come; the C twin counts digits: both at and around every boundary.
    value = b"x" * size
    assert encode_bulk([value]) == b"$" + str(size).encode() + b"\r\n" + value + b"\r\n"


@ENCODERS
@given(st.lists(st.binary(max_size=1200), max_size=30))
def test_any_arguments_are_encoded_as_the_protocol_says(
    encode_bulk: Callable[[list[bytes]], bytes], args: list[bytes]
) -> None:
    assert encode_bulk(args) == b"".join(b"$%d\r\n%b\r\n" % (len(arg), arg) for arg in args)


@NEEDS_C
@given(st.lists(st.binary(max_size=100_000), max_size=4) | st.lists(st.binary(), max_size=60))
def test_the_c_twin_gives_the_references_bytes(args: list[bytes]) -> None:
    assert _resp is not None
    assert _resp.encode_bulk(args) == encode_bulk_reference(args)


@NEEDS_C
@pytest.mark.parametrize("bad", [[b"a", "b"], [1], (b"a",), b"ab", None], ids=repr)
def test_the_c_twin_refuses_what_is_not_a_list_of_bytes(bad: Any) -> None:
    assert _resp is not None
    with pytest.raises(TypeError):
        _resp.encode_bulk(bad)


def test_the_c_twin_is_used_where_built_unless_the_speedups_are_switched_off() -> None:
    expected = (
        _resp.encode_bulk
        if _resp is not None and codec.SPEEDUPS_WANTED
        else encode_bulk_reference
    )
    assert pipe.encode_bulk is expected
