"""Structured logging: one event per line, JSON when not on a terminal.

Call sites bind ``room``, ``seat``, ``player`` and ``req`` so that every line about a room can
be found with one filter.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

import structlog

#: Whether debug lines are written (structlog's own default, until :func:`configure` says).
_debug = True


def debug_enabled() -> bool:
    """Whether debug lines are written: a line on every move is worth skipping whole when they
    are not (a filtered ``debug`` call still builds its keywords and calls an empty method)."""
    return _debug


def configure(fmt: str = "auto", level: str = "info") -> None:
    global _debug
    threshold = logging.getLevelName(level.upper())
    _debug = threshold <= logging.DEBUG
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def get(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger


def call_each(hooks: Iterable[Callable[[], None]], logger: Any, failed: str) -> None:
    """Call every hook (of a list copied first: a hook may change it); one that raises is
    logged as ``failed`` with its traceback, and the others are called all the same (one
    user's bug must not keep the others from repairing)."""
    for hook in list(hooks):
        try:
            hook()
        except Exception:
            logger.exception(failed)
