"""Reading the protocol's test vector files (``playhall_protocol/vectors/*.json``).

Values there are in a typed JSON notation (see the files' ``notation``); :func:`untyped` turns
them into Python values and :func:`typed` back, so comparisons see ints, floats and bools apart.
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


def untyped(data: list[Any]) -> Any:
    tag = data[0]
    if tag == "nil":
        return None
    if tag == "bool":
        assert isinstance(data[1], bool)
        return data[1]
    if tag == "int":
        return int(data[1])
    if tag == "float":
        special = {"inf": math.inf, "-inf": -math.inf, "-0.0": -0.0}
        return special[data[1]] if isinstance(data[1], str) else float(data[1])
    if tag == "str":
        return str(data[1])
    if tag == "bin":
        return bytes.fromhex(data[1])
    if tag == "array":
        return [untyped(v) for v in data[1]]
    if tag == "map":
        return {untyped(k): untyped(v) for k, v in data[1]}
    raise ValueError(f"unknown tag {tag!r}")


def typed(value: Any) -> Any:
    """``value`` in the typed notation: equal typed forms mean equal values of equal types,
    with map keys in the same order."""
    if value is None:
        return ["nil"]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        if math.isinf(value):
            return ["float", "inf" if value > 0 else "-inf"]
        if value == 0 and math.copysign(1.0, value) < 0:
            return ["float", "-0.0"]
        return ["float", value]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, bytes):
        return ["bin", value.hex()]
    if isinstance(value, list):
        return ["array", [typed(v) for v in value]]
    if isinstance(value, dict):
        return ["map", [[typed(k), typed(v)] for k, v in value.items()]]
    raise TypeError(f"not plain data: {value!r}")


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
