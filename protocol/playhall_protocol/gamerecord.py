"""Game records: a finished room's whole history in one self-contained map, and the hash chain
that ties its steps together.

The format (``PROTOCOL.md``, "Game records", and the JSON Schema ``schemas/record-1.json``) is
plain data: what the ``record`` request returns and ``playhall export`` writes as JSON. Each
step carries ``hash = SHA-256(previous hash || msgpack([version, kind, seat, move, mid,
time]))``, the chain starting from ``SHA-256(CHAIN_LABEL || lp(room id) || commitment)``, so
a record cannot lose, gain or change a step without every later hash changing.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any, Final

from playhall_protocol.codec import pack

FORMAT: Final = "playhall-record"
FORMAT_VERSION: Final = 1
CHAIN_LABEL: Final = b"playhall/record/v1"
#: A step's fields in the order they are hashed.
STEP_FIELDS: Final = ("version", "kind", "seat", "move", "mid", "time")


def chain_start(room_id: str, commitment: str) -> bytes:
    """The hash before the first step: the room and its commitment (hex)."""
    room = room_id.encode()
    start = CHAIN_LABEL + len(room).to_bytes(4, "big") + room + bytes.fromhex(commitment)
    return hashlib.sha256(start).digest()


def step_hash(previous: bytes, step: dict[str, Any]) -> bytes:
    """The hash of ``step`` after ``previous``: its fields (not its own hash) as one msgpack
    array, in :data:`STEP_FIELDS` order."""
    return hashlib.sha256(previous + pack([step[name] for name in STEP_FIELDS])).digest()


def chained(room_id: str, commitment: str, steps: list[dict[str, Any]]) -> str:
    """Set each step's ``hash`` (hex) in place; the last one (the chain's start if none)."""
    current = chain_start(room_id, commitment)
    for step in steps:
        current = step_hash(current, step)
        step["hash"] = current.hex()
    return current.hex()


def schema() -> dict[str, Any]:
    """The format's JSON Schema (``schemas/record-1.json``)."""
    text = resources.files("playhall_protocol").joinpath("schemas/record-1.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded
