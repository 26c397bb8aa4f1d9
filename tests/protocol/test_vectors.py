"""The Python implementation against the test vectors, in both directions. Other languages'
clients are meant to run the same files through their own codec and diff code."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from playhall_protocol import ProtocolError, apply_diff, decode, encode, errors
from playhall_protocol.typed_json import typed, untyped
from tests.protocol.vectors import exact, load

CODEC = load("codec.json")
DIFF = load("diff.json")
PREFIX = bytes.fromhex("81a176")  # {"v": ...}: every value case, wrapped as a valid frame

#: Diff cases the Python consumer accepts although the format forbids them (see the report in
#: PROTOCOL.md, "Known deviations of the reference implementation").


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [case["name"] for case in cases]


# -- codec ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CODEC["cases"], ids=_ids(CODEC["cases"]))
def test_encode_gives_the_vector_bytes(case: dict[str, Any]) -> None:
    value = untyped(case["value"])
    raw = bytes.fromhex(case["hex"])
    assert encode({"v": value}) == PREFIX + raw
    if isinstance(value, dict):
        assert encode(value) == raw


@pytest.mark.parametrize("case", CODEC["cases"], ids=_ids(CODEC["cases"]))
def test_decode_gives_the_vector_value(case: dict[str, Any]) -> None:
    raw = bytes.fromhex(case["hex"])
    decoded = decode(PREFIX + raw)["v"]
    assert typed(decoded) == case["value"]
    if raw[:1] and (raw[0] & 0xF0 == 0x80 or raw[0] in (0xDE, 0xDF)):
        assert typed(decode(raw)) == case["value"]


@pytest.mark.parametrize("case", CODEC["decode_only"], ids=_ids(CODEC["decode_only"]))
def test_decoder_accepts_other_encodings(case: dict[str, Any]) -> None:
    decoded = decode(PREFIX + bytes.fromhex(case["hex"]))["v"]
    assert typed(decoded) == case["value"]
    # ... and the encoder writes the smallest form, never this one.
    assert encode({"v": decoded}) != PREFIX + bytes.fromhex(case["hex"])


@pytest.mark.parametrize("case", CODEC["invalid_frames"], ids=_ids(CODEC["invalid_frames"]))
def test_invalid_frames_are_refused(case: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as info:
        decode(bytes.fromhex(case["hex"]))
    assert info.value.code == errors.BAD_FRAME


@pytest.mark.parametrize("case", CODEC["accepted_frames"], ids=_ids(CODEC["accepted_frames"]))
def test_frames_at_the_limits_are_accepted(case: dict[str, Any]) -> None:
    assert isinstance(decode(bytes.fromhex(case["hex"])), dict)


def test_both_map_orders_decode_to_the_same_map() -> None:
    cases = {c["name"]: c for c in CODEC["cases"]}
    b_first = cases["map order b,a: bytes follow the listed order"]["hex"]
    a_first = cases["map order a,b: same map, other bytes"]["hex"]
    one = decode(PREFIX + bytes.fromhex(b_first))
    two = decode(PREFIX + bytes.fromhex(a_first))
    assert one == two
    assert list(one["v"]) == ["b", "a"] and list(two["v"]) == ["a", "b"]


def test_codec_vectors_cover_every_format_family() -> None:
    firsts = {bytes.fromhex(c["hex"])[0] for c in CODEC["cases"]}
    for family in (
        0xC0,
        0xC2,
        0xC3,
        0xCC,
        0xCD,
        0xCE,
        0xCF,
        0xD0,
        0xD1,
        0xD2,
        0xD3,
        0xCB,
        0xD9,
        0xDA,
        0xC4,
        0xC5,
        0xDC,
        0xDE,
        0x00,
        0xE0,
        0xA0,
        0x90,
        0x80,
    ):
        assert family in firsts, hex(family)


# -- diff -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", DIFF["cases"], ids=_ids(DIFF["cases"]))
def test_diff_case_applies(case: dict[str, Any]) -> None:
    old, ops, new = untyped(case["old"]), untyped(case["ops"]), untyped(case["new"])
    kept = copy.deepcopy(ops)
    result = apply_diff(old, ops)
    assert typed(result) == typed(new)  # types and key order
    assert ops == kept  # the ops are not changed by applying them


@pytest.mark.parametrize("case", DIFF["cases"], ids=_ids(DIFF["cases"]))
def test_diff_case_survives_the_wire(case: dict[str, Any]) -> None:
    """The ops as the client receives them: inside a msgpack update frame."""
    old, ops, new = untyped(case["old"]), untyped(case["ops"]), untyped(case["new"])
    frame = decode(encode({"t": "update", "room": "r", "from": 1, "to": 2, "diff": ops}))
    assert exact(apply_diff(old, frame["diff"]), new)


@pytest.mark.parametrize("case", DIFF["cases"], ids=_ids(DIFF["cases"]))
def test_diff_case_plain_matches_typed(case: dict[str, Any]) -> None:
    """The readable 'plain' copy says the same as the typed fields (up to JSON's blind spots)."""
    for part in ("old", "ops", "new"):
        assert case["plain"][part] == untyped(case[part])


@pytest.mark.parametrize("case", DIFF["invalid"], ids=_ids(DIFF["invalid"]))
def test_invalid_diff_is_rejected(case: dict[str, Any]) -> None:
    old, ops = untyped(case["old"]), untyped(case["ops"])
    with pytest.raises(ValueError):
        apply_diff(old, ops)


def test_vector_files_are_up_to_date() -> None:
    """The checked-in files are what protocol/tools/make_vectors.py writes."""
    script = Path(__file__).resolve().parents[2] / "protocol" / "tools" / "make_vectors.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
