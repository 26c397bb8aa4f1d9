"""Which asyncio event loop the server runs on, and what it uses of the loop's transports.

The server is written against asyncio's API only. By default (``event_loop = auto``) it runs on
uvloop where uvloop is installed (a dependency everywhere but Windows): the same API with the
loop, its callbacks and its socket transports in C on libuv, where asyncio's own are Python.
Measured on the server's whole path of a move (``bench/moves.py`` with ``BENCH_CALLGRIND``,
docs/benchmarks.md): about a sixth fewer instructions per move. ``event_loop = asyncio`` keeps the
standard loop (for a platform without uvloop, or to rule the loop out when chasing a bug).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any, Protocol

LoopFactory = Callable[[], asyncio.AbstractEventLoop]

CHOICES = ("auto", "uvloop", "asyncio")


class LoopUnavailable(RuntimeError):
    """The configured event loop cannot be had here (``uvloop`` asked for, not installed)."""


def loop_factory(choice: str) -> LoopFactory | None:
    """What makes the event loop for ``choice`` (one of :data:`CHOICES`); None for asyncio's
    own (``asyncio.Runner``'s default)."""
    if choice not in CHOICES:
        raise ValueError(f"event loop {choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable(
                "event_loop is 'uvloop' but uvloop is not installed (pip install uvloop, or "
                "use event_loop 'auto' or 'asyncio')"
            ) from None
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: which loop is running (for the start-up log)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


class Transport(Protocol):
    """What the server's protocols use of a stream transport. uvloop's transports do the whole
    of ``asyncio.Transport`` but are not subclasses of it, so the server's protocols hold their
    transport by what it does, not by its class."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...

    def is_closing(self) -> bool: ...

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        ...

    def get_extra_info(self, name: str, default: Any = None) -> Any: ...
