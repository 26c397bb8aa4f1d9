"""The typed JSON notation of the test vectors in ``vectors/``.

JSON cannot tell ``1`` from ``1.0`` or keep bytes, and its parsers may reorder keys, so each
value in the vector files is written as ``[tag, payload]``: ``["nil"]``, ``["bool", b]``,
``["int", "decimal digits"]``, ``["float", x | "inf" | "-inf" | "-0.0"]``, ``["str", s]``,
``["bin", "hex"]``, ``["array", [...]]``, ``["map", [[key, value], ...]]`` (keys in order).
Equal typed forms mean equal values of equal types. PROTOCOL.md describes it for other
languages; this is the reference reader and writer.
"""

from __future__ import annotations

import math
from typing import Any


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
