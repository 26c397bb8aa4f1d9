"""Write the protocol's test vectors: ``playhall_protocol/vectors/codec.json``, ``diff.json``
and ``fair.json``.

The cases are written out by hand below; this script only computes the bytes (with the same
msgpack settings as :func:`playhall_protocol.encode`) and checks every diff case against the
reference implementation before writing. Run it from the repository root:

    python protocol/tools/make_vectors.py          # rewrite the files
    python protocol/tools/make_vectors.py --check  # fail if the files are out of date

Values in the vector files use a *typed* JSON notation so that nothing is lost on the way
through a JSON parser (ints vs floats vs bools, map key order, binary data, 64-bit ints):

    ["nil"]  ["bool", true]  ["int", "-33"]  ["float", 1.5]  ["str", "abc"]  ["bin", "00ff"]
    ["array", [<typed>, ...]]  ["map", [[<typed key>, <typed value>], ...]]

Ints are decimal strings (JSON numbers lose precision past 2^53); floats are JSON numbers,
except the specials, written as the strings "inf", "-inf" and "-0.0".

``fair.json`` (commitments, room keys, the games' generator) is plain JSON: bytes in hex, 64-bit
words as decimal strings. Its values are computed here from ``PROTOCOL.md``'s "Fair deals"
text with ``hashlib`` and ``hmac`` alone, not by the server's code, which the tests then hold
to them.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import hmac
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402

from playhall_protocol import apply_diff  # noqa: E402
from playhall_protocol.typed_json import typed  # noqa: E402

VECTORS = ROOT / "playhall_protocol" / "vectors"


# -- the typed notation ---------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """The same data as plain JSON, for people reading the file (not normative)."""
    return copy.deepcopy(value)


def pack(value: Any) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


# -- codec cases --------------------------------------------------------------------------------


def codec_cases() -> list[dict[str, Any]]:
    seq16 = list(range(16))
    cases: list[tuple[str, Any]] = [
        ("nil", None),
        ("false", False),
        ("true", True),
        ("positive fixint 0", 0),
        ("positive fixint 1 (not true)", 1),
        ("positive fixint 127", 127),
        ("uint8 128", 128),
        ("uint8 255", 255),
        ("uint16 256", 256),
        ("uint16 65535", 65535),
        ("uint32 65536", 65536),
        ("uint32 4294967295", 2**32 - 1),
        ("uint64 4294967296", 2**32),
        ("uint64 2^53-1 (largest request id)", 2**53 - 1),
        ("uint64 2^63 (a 64-bit seed-sized int)", 2**63),
        ("uint64 2^64-1", 2**64 - 1),
        ("negative fixint -1", -1),
        ("negative fixint -32", -32),
        ("int8 -33", -33),
        ("int8 -128", -128),
        ("int16 -129", -129),
        ("int16 -32768", -32768),
        ("int32 -32769", -32769),
        ("int32 -2^31", -(2**31)),
        ("int64 -2^31-1", -(2**31) - 1),
        ("int64 -2^63", -(2**63)),
        ("float64 1.0 (a float, not the int 1)", 1.0),
        ("float64 0.0", 0.0),
        ("float64 -0.0", -0.0),
        ("float64 0.5", 0.5),
        ("float64 -1.25", -1.25),
        ("float64 0.1", 0.1),
        ("float64 epoch seconds", 1795315472.3329349),
        ("float64 1e300", 1e300),
        ("float64 infinity", math.inf),
        ("empty str", ""),
        ("fixstr", "hello"),
        ("fixstr 31 bytes (longest fixstr)", "a" * 31),
        ("str8 32 bytes", "a" * 32),
        ("str8 255 bytes", "b" * 255),
        ("str16 256 bytes", "c" * 256),
        ("utf-8 2-byte char: length counts bytes", "é"),
        ("utf-8 3-byte chars", "日本"),
        ("utf-8 4-byte char", "🂡"),
        ("empty bin", b""),
        ("bin8", b"\x00\xff\x10"),
        ("bin16 256 bytes", bytes(range(256))),
        ("empty array", []),
        ("fixarray", [1, 2, 3]),
        ("fixarray 15 (longest fixarray)", list(range(15))),
        ("array16 16", seq16),
        ("array of mixed types", [None, True, 0, -1, 1.5, "x", b"\x01", [], {}]),
        ("empty map", {}),
        ("fixmap", {"t": "ping", "id": 1}),
        ("fixmap 15 (longest fixmap)", {f"k{i:02}": i for i in range(15)}),
        ("map16 16", {f"k{i:02}": i for i in range(16)}),
        ("map order b,a: bytes follow the listed order", {"b": 1, "a": 2}),
        ("map order a,b: same map, other bytes", {"a": 2, "b": 1}),
        ("map with an empty-string key", {"": None}),
        (
            "nested: a small room view fragment",
            {
                "seats": [{"name": "ann", "bot": False, "ready": True}, {"name": None}],
                "you": 0,
                "to_act": [0],
                "state": {"hand": [[1, 2], [3]], "deadline": 1795315472.5},
            },
        ),
        ("request: hello", {"t": "hello", "id": 1, "protocol": [1], "name": "alice"}),
        (
            "request: move",
            {
                "t": "move",
                "id": 6,
                "room": "myjZIzuXI2M",
                "version": 5,
                "mid": "m1",
                "move": {"type": "score"},
            },
        ),
    ]
    out = []
    for name, value in cases:
        out.append({"name": name, "value": typed(value), "hex": pack(value).hex()})
    return out


def decode_only_cases() -> list[dict[str, Any]]:
    """Encodings the server never produces but a decoder must accept (msgpack allows them)."""
    cases = [
        ("int 1 as uint8", "cc01", 1),
        ("int 1 as uint16", "cd0001", 1),
        ("int 1 as uint64", "cf0000000000000001", 1),
        ("int 1 as int8", "d001", 1),
        ("int -1 as int64", "d3ffffffffffffffff", -1),
        ("int 5 as int32 (signed format, positive value)", "d200000005", 5),
        ("float32 1.5", "ca3fc00000", 1.5),
        ("str 'a' as str8", "d90161", "a"),
        ("str 'a' as str16", "da000161", "a"),
        ("empty array as array16", "dc0000", []),
        ("empty map as map16", "de0000", {}),
        ("map {'a': 1} as map32", "df00000001a16101", {"a": 1}),
    ]
    out = []
    for name, hexed, value in cases:
        assert msgpack.unpackb(bytes.fromhex(hexed), raw=False) == value, name
        assert type(msgpack.unpackb(bytes.fromhex(hexed), raw=False)) is type(value), name
        out.append({"name": name, "hex": hexed, "value": typed(value)})
    return out


def _nested(arrays: int, inner: Any) -> dict[str, Any]:
    """A frame: the map, then ``arrays`` arrays one inside the other, then ``inner``."""
    value = inner
    for _ in range(arrays):
        value = [value]
    return {"x": value}


def invalid_frame_cases() -> list[dict[str, Any]]:
    """Whole frames the server refuses with a ``bad_frame`` error (its connection stays open)."""
    cases = [
        ("empty frame", b""),
        ("not a map: an array", pack([1, 2])),
        ("not a map: nil", pack(None)),
        ("not a map: a str", pack("hello")),
        ("two values in one frame (trailing bytes)", pack({"t": "ping", "id": 1}) + b"\xc0"),
        ("truncated map", bytes.fromhex("82a17401")),
        ("reserved byte 0xc1", bytes.fromhex("c1")),
        ("int map key", bytes.fromhex("810102")),
        ("nil map key", bytes.fromhex("81c002")),
        ("invalid utf-8 in a str", bytes.fromhex("81a174a2fffe")),
        ("an extension type (fixext 1, type 5)", bytes.fromhex("81a178d40501")),
        ("a timestamp (extension type -1)", bytes.fromhex("81a178d6ff00000001")),
        ("33 nested containers (the map and 32 arrays)", pack(_nested(32, 0))),
        # A key twice in one map: refused, never "the last one wins" (a check of the first
        # value would be bypassed by the second).
        ("a key twice in the frame's map", bytes.fromhex("83a174a470696e67a2696401a174a470696e67")),
        ("a key twice in a nested map, same value", bytes.fromhex("81a17682a16b01a16b01")),
        ("a key twice, the first value an extension type", bytes.fromhex("82a178d40501a17801")),
    ]
    return [{"name": name, "hex": frame.hex()} for name, frame in cases]


def accepted_frame_cases() -> list[dict[str, Any]]:
    cases = [
        ("32 nested containers (the map and 31 arrays) holding a scalar", _nested(31, 0)),
        ("32 nested containers, the innermost empty", _nested(30, [])),
    ]
    return [{"name": name, "hex": pack(frame).hex()} for name, frame in cases]


# -- diff cases ---------------------------------------------------------------------------------

VIEW: dict[str, Any] = {
    "status": "playing",
    "seats": [{"name": "ann", "ready": True}, {"name": "bob", "ready": True}],
    "to_act": [1],
    "moves": [],
    "state": {"turn": 1, "tanks": [["red", "blue"], ["green"]], "scores": [0, 2], "last": None},
}


def diff_cases() -> list[dict[str, Any]]:
    v = copy.deepcopy
    cases: list[tuple[str, Any, list[Any], Any]] = [
        ("empty diff: nothing changes", {"a": 1}, [], {"a": 1}),
        ("set an existing map key", {"a": 1, "b": 2}, [["set", ["a"], 5]], {"a": 5, "b": 2}),
        ("set a new map key (added at the end)", {"a": 1}, [["set", ["b"], 2]], {"a": 1, "b": 2}),
        ("set a key to nil (the key stays)", {"a": 1}, [["set", ["a"], None]], {"a": None}),
        ("del a map key", {"a": 1, "b": 2}, [["del", ["a"]]], {"b": 2}),
        ("del a key whose value is nil", {"a": None, "b": 2}, [["del", ["a"]]], {"b": 2}),
        ("del a nested key", {"a": {"x": 1, "y": 2}}, [["del", ["a", "x"]]], {"a": {"y": 2}}),
        (
            "replace an array element",
            {"l": [1, 2, 3]},
            [["set", ["l", 1], 9]],
            {"l": [1, 9, 3]},
        ),
        ("append: index == length", {"l": [1, 2]}, [["set", ["l", 2], 3]], {"l": [1, 2, 3]}),
        (
            "append several, in order",
            {"l": []},
            [["set", ["l", 0], "a"], ["set", ["l", 1], "b"]],
            {"l": ["a", "b"]},
        ),
        ("shrink with len", {"l": [1, 2, 3, 4]}, [["len", ["l"], 2]], {"l": [1, 2]}),
        ("shrink to empty", {"l": [1, 2]}, [["len", ["l"], 0]], {"l": []}),
        (
            "len to the same length changes nothing",
            {"l": [1, 2]},
            [["len", ["l"], 2]],
            {"l": [1, 2]},
        ),
        (
            "shrink then grow: truncate, then append",
            {"l": [1, 2, 3]},
            [["len", ["l"], 1], ["set", ["l", 1], 7]],
            {"l": [1, 7]},
        ),
        (
            "change and grow one array",
            {"l": [1, 2]},
            [["set", ["l", 0], 0], ["set", ["l", 2], 3], ["set", ["l", 3], 4]],
            {"l": [0, 2, 3, 4]},
        ),
        ("len on the root array", [1, 2, 3], [["len", [], 1]], [1]),
        (
            "nested path through maps and arrays",
            v(VIEW),
            [["set", ["state", "tanks", 0, 1], "pink"]],
            {**v(VIEW), "state": {**v(VIEW)["state"], "tanks": [["red", "pink"], ["green"]]}},
        ),
        (
            "a typical turn (shaped like a real Mantis update)",
            v(VIEW),
            [
                ["set", ["to_act"], [0]],
                ["set", ["state", "turn"], 0],
                ["len", ["state", "tanks", 1], 0],
                ["set", ["state", "scores", 1], 4],
                ["set", ["state", "last"], {"seat": 1, "card": "green", "into": None}],
            ],
            {
                **v(VIEW),
                "to_act": [0],
                "state": {
                    "turn": 0,
                    "tanks": [["red", "blue"], []],
                    "scores": [0, 4],
                    "last": {"seat": 1, "card": "green", "into": None},
                },
            },
        ),
        ("replace the whole view: empty path", {"a": 1}, [["set", [], {"b": 2}]], {"b": 2}),
        (
            "root replacement, then ops on the new root",
            {"a": 1},
            [["set", [], {"l": []}], ["set", ["l", 0], True]],
            {"l": [True]},
        ),
        ("root replaced by a scalar", {"a": 1}, [["set", [], 7]], 7),
        ("type change: map to scalar", {"a": {"x": 1}}, [["set", ["a"], 3]], {"a": 3}),
        ("type change: array to map", {"a": [1]}, [["set", ["a"], {"k": 1}]], {"a": {"k": 1}}),
        ("type change: scalar to array", {"a": "x"}, [["set", ["a"], [1, 2]]], {"a": [1, 2]}),
        (
            "type change: nil to map",
            {"state": None},
            [["set", ["state"], {"turn": 0}]],
            {"state": {"turn": 0}},
        ),
        ("bool vs int: 1 becomes true", {"a": 1}, [["set", ["a"], True]], {"a": True}),
        ("bool vs int: false becomes 0", {"a": [False]}, [["set", ["a", 0], 0]], {"a": [0]}),
        ("int vs float: 1 becomes 1.0", {"a": 1}, [["set", ["a"], 1.0]], {"a": 1.0}),
        ('str vs int keys: map key "0" is a str', {"0": "x"}, [["set", ["0"], "y"]], {"0": "y"}),
        ("empty-string key", {"": 1}, [["set", [""], 2]], {"": 2}),
        (
            "replace one key and add another",
            {"a": 1, "b": 2},
            [["set", ["a"], 3], ["set", ["c"], 4]],
            {"a": 3, "b": 2, "c": 4},
        ),
        (
            "ops apply in order: create a map, then set inside it",
            {},
            [["set", ["m"], {}], ["set", ["m", "k"], 1]],
            {"m": {"k": 1}},
        ),
        (
            "ops apply in order: delete, then add the key again",
            {"a": 1, "b": 2},
            [["del", ["a"]], ["set", ["a"], 1]],
            {"b": 2, "a": 1},
        ),
        (
            "values are copied: setting the same value twice makes two independent copies",
            {},
            [["set", ["x"], [1]], ["set", ["y"], [1]], ["set", ["x", 0], 2]],
            {"x": [2], "y": [1]},
        ),
        (
            "set an element inside a nested array",
            [[1, [2, 3]]],
            [["set", [0, 1, 0], 9]],
            [[1, [9, 3]]],
        ),
    ]
    out = []
    for name, old, ops, new in cases:
        got = apply_diff(copy.deepcopy(old), copy.deepcopy(ops))
        assert typed(got) == typed(new), (name, got, new)
        out.append(
            {
                "name": name,
                "plain": plain({"old": old, "ops": ops, "new": new}),
                "old": typed(old),
                "ops": typed(ops),
                "new": typed(new),
            }
        )
    return out


#: Python's reference consumer accepts these although the format forbids them (see
#: PROTOCOL.md, "Known deviations"); the tests mark them as expected failures.


def invalid_diff_cases() -> list[dict[str, Any]]:
    """Diffs a client must reject (and then ask for a snapshot)."""
    cases: list[tuple[str, Any, Any]] = [
        ("op is not an array", {"a": 1}, ["set"]),
        ("empty op", {"a": 1}, [[]]),
        ("unknown op name", {"a": 1}, [["put", ["a"], 1]]),
        ("op name is not a str", {"a": 1}, [[1, ["a"], 1]]),
        ("path is not an array", {"a": 1}, [["set", "a", 1]]),
        ("set without a value", {"a": 1}, [["set", ["a"]]]),
        ("set with an extra element", {"a": 1}, [["set", ["a"], 1, 2]]),
        ("set: parent missing", {}, [["set", ["x", "y"], 1]]),
        ("set: index past the end (only length itself appends)", [1], [["set", [2], 1]]),
        ("set: negative index", [1], [["set", [-1], 1]]),
        ("set: str step into an array", [1], [["set", ["0"], 1]]),
        ("set: int step into a map", {"0": 1}, [["set", [0], 1]]),
        ("set: walking through a scalar", {"a": 1}, [["set", ["a", "b"], 1]]),
        ("set: nil path step", [1], [["set", [None], 1]]),
        ("del: missing key", {"a": 1}, [["del", ["b"]]]),
        ("del: empty path (the root)", {"a": 1}, [["del", []]]),
        ("del: array element (del is for map keys only)", [1, 2], [["del", [0]]]),
        ("del with an extra element", {"a": 1}, [["del", ["a"], 1]]),
        ("len: target is a map", {"a": 1}, [["len", [], 0]]),
        ("len: grow", [1], [["len", [], 3]]),
        ("len: negative", [1], [["len", [], -1]]),
        ("len: count is not an int", [1], [["len", [], "0"]]),
        ("len: count missing", [1], [["len", []]]),
        ("len: path missing", {"a": [1]}, [["len", ["b"], 0]]),
        ("second op fails after the first applied", {"a": 1}, [["set", ["a"], 2], ["del", ["b"]]]),
        ("bool as an array index", [5, 6], [["set", [True], 9]]),
        ("bool as the len count", [5, 6], [["len", [], False]]),
        ("unhashable path step in del (an array)", {"a": 1}, [["del", [["a"]]]]),
    ]
    out = []
    for name, old, ops in cases:
        try:
            apply_diff(copy.deepcopy(old), copy.deepcopy(ops))
            rejected = False
        except ValueError:
            rejected = True
        assert rejected, f"the reference consumer accepts invalid case {name!r}"
        out.append(
            {
                "name": name,
                "plain": plain({"old": old, "ops": ops}),
                "old": typed(old),
                "ops": typed(ops),
            }
        )
    return out


# -- files ------------------------------------------------------------------------------------

TYPED_NOTE = (
    "Values are written in a typed JSON notation so nothing is lost through a JSON parser: "
    '["nil"], ["bool", b], ["int", "<decimal>"], ["float", x or "inf"/"-inf"/"-0.0"], '
    '["str", s], ["bin", "<hex>"], ["array", [typed...]], ["map", [[typed key, typed value], '
    "...]]. A map's pairs are listed in order."
)


def codec_document() -> dict[str, Any]:
    return {
        "about": "msgpack test vectors for the Playhall protocol (protocol version 1). "
        "Generated by protocol/tools/make_vectors.py; see protocol/PROTOCOL.md.",
        "notation": TYPED_NOTE,
        "rules": [
            "'cases': encoding the value must give exactly these bytes, and decoding the bytes "
            "must give exactly this value (same types: an int is not a float or a bool).",
            "Encoders use the smallest format for ints, strs, bins, arrays and maps; floats are "
            "always float64 (0xcb); strs are UTF-8 (0xa0-0xbf, 0xd9-0xdb) and binary data is "
            "bin (0xc4-0xc6), never str.",
            "Maps are encoded in the listed key order. Decoders must accept the keys of a map in "
            "any order: the two 'map order' cases are the same map.",
            "'decode_only': valid msgpack the server never sends in this form; a decoder must "
            "still accept it and produce the value.",
            "'invalid_frames': whole frames the server answers with an error 'bad_frame'.",
            "'accepted_frames': frames right at a limit that are accepted.",
            "Sizes 2^16 and above (str32, bin32, array32, map32) are plain msgpack and left out "
            "to keep the file small.",
        ],
        "cases": codec_cases(),
        "decode_only": decode_only_cases(),
        "invalid_frames": invalid_frame_cases(),
        "accepted_frames": accepted_frame_cases(),
    }


def diff_document() -> dict[str, Any]:
    return {
        "about": "View-diff test vectors for the Playhall protocol (protocol version 1). "
        "Generated by protocol/tools/make_vectors.py; see protocol/PROTOCOL.md, 'Diffs'.",
        "notation": TYPED_NOTE,
        "rules": [
            "'cases': applying 'ops' to 'old' must give exactly 'new', with the same types (an "
            "int is not a bool or a float). Key order inside a map carries no meaning; 'new' "
            "lists keys as an insertion-ordered map ends up (a new key last).",
            "'invalid': applying 'ops' to 'old' must fail; the client then discards the view "
            "(it may be half-changed) and asks for a snapshot with a 'sync'.",
            "'plain' repeats a case as ordinary JSON for reading; the typed fields are the "
            "normative ones (plain JSON cannot tell 1 from 1.0, and some parsers reorder keys).",
            "The ops in 'cases' are hand-written to show the format; a producer may emit "
            "different ops for the same change. Only applying them is specified.",
        ],
        "cases": diff_cases(),
        "invalid": invalid_diff_cases(),
    }


# -- fair deals (PROTOCOL.md, "Fair deals"), from the text --------------------------------------


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _commitment(room: str, secret: bytes) -> bytes:
    return hashlib.sha256(b"playhall/commit/v1" + _lp(room.encode()) + secret).digest()


def _key(secret: bytes, room: str, contributions: list[bytes]) -> bytes:
    message = b"playhall/key/v1" + _lp(room.encode()) + len(contributions).to_bytes(4, "big")
    message += b"".join(_lp(c) for c in contributions)
    return hmac.new(secret, message, hashlib.sha256).digest()


class _Stream:
    def __init__(self, key: bytes, label: str, counter: int = 0) -> None:
        self.key, self.label, self.counter = key, label, counter

    def word(self) -> int:
        block = hmac.new(
            self.key, self.label.encode() + (self.counter // 4).to_bytes(8, "big"), hashlib.sha256
        ).digest()
        offset = 8 * (self.counter % 4)
        self.counter += 1
        return int.from_bytes(block[offset : offset + 8], "big")

    def below(self, n: int) -> int:
        limit = 2**64 - 2**64 % n
        while (x := self.word()) >= limit:
            pass
        return x % n


def fair_cases() -> dict[str, list[dict[str, Any]]]:
    secret = bytes(range(32))
    other = hashlib.sha256(b"another secret").digest()
    commitments = [
        {"room": room, "secret": s.hex(), "commitment": _commitment(room, s).hex()}
        for room, s in (("myjZIzuXI2M", secret), ("r", other), ("é-room", secret))
    ]
    keys = []
    for room, contributions in (
        ("myjZIzuXI2M", [bytes.fromhex("00112233445566778899aabbccddeeff"), b""]),
        ("myjZIzuXI2M", [b"", b""]),
        ("myjZIzuXI2M", [b"", bytes.fromhex("00112233445566778899aabbccddeeff")]),
        ("r", [b"\x01", b"\x02\x03", b"", b"\xff" * 64]),
        ("solo", [b""]),
    ):
        keys.append({
            "room": room, "secret": secret.hex(), "contributions": [c.hex() for c in contributions],
            "key": _key(secret, room, contributions).hex(),
        })
    streams = []
    for key, label, counter in (
        (bytes(32), "game", 0), (secret, "game", 0), (secret, "game", 6), (secret, "bot/17", 0),
    ):
        words = _Stream(key, label, counter)
        bounded = _Stream(key, label, counter)
        shuffled = _Stream(key, label, counter)
        deck = list(range(10))
        for i in range(len(deck) - 1, 0, -1):
            j = shuffled.below(i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        streams.append({
            "key": key.hex(), "label": label, "counter": counter,
            "words": [str(words.word()) for _ in range(6)],
            "below": [[n, bounded.below(n)] for n in (6, 105, 2, 2**63 + 1, 1, 52)],
            "below_counter": bounded.counter,
            "shuffle_10": deck, "shuffle_counter": shuffled.counter,
        })
    return {"commitments": commitments, "keys": keys, "streams": streams}


def fair_document() -> dict[str, Any]:
    return {
        "about": "Fair-deal test vectors for the Playhall protocol: commitments, room keys and "
        "the games' generator. Generated by protocol/tools/make_vectors.py; see "
        "protocol/PROTOCOL.md, 'Fair deals'.",
        "rules": [
            "Bytes are lowercase hex; 64-bit words are decimal strings.",
            "'commitments': SHA-256('playhall/commit/v1' || lp(room) || secret).",
            "'keys': HMAC-SHA256(secret, 'playhall/key/v1' || lp(room) || u32(seats) || "
            "lp(contribution) per seat); an empty contribution is a seat that gave none.",
            "'streams': from the state (key, label, counter): the next six words; then, from "
            "the same state again, below(n) for each n in turn and the counter after them; then, "
            "from the same state again, Fisher-Yates over [0..9] and the counter after it.",
        ],
        **fair_cases(),
    }


def render(document: dict[str, Any]) -> str:
    """JSON with one line per case, so the file reads as a table."""
    parts = []
    for key, value in document.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in value)
            parts.append(f" {json.dumps(key)}: [\n{rows}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, indent=2)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    args = parser.parse_args()
    files = {
        "codec.json": render(codec_document()),
        "diff.json": render(diff_document()),
        "fair.json": render(fair_document()),
    }
    stale = []
    for name, text in files.items():
        path = VECTORS / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            VECTORS.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date:", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
