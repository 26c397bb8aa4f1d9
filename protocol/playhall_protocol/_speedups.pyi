"""Types of the C speedups (_speedups.c); the Python reference of packed_diff is
codec.pack(diff.make_diff(old, new))."""

from collections.abc import Callable
from typing import Any

def packed_diff(old: Any, new: Any, memo: dict[Any, Any] | None = None) -> bytes: ...
def set_fallback(packer: Callable[[Any], bytes], nest_limit: int) -> None: ...
