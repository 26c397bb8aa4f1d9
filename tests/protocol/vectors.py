"""Reading the protocol's test vector files (``playhall_protocol/vectors/*.json``).

Values there are in a typed JSON notation (:mod:`playhall_protocol.typed_json`), so
comparisons see ints, floats and bools apart; :func:`exact` compares Python values the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import playhall_protocol

VECTORS = Path(playhall_protocol.__file__).parent / "vectors"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    return data


def exact(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (``True``, ``1`` and ``1.0`` all differ); the
    order of keys inside a map does not matter."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(exact(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)
