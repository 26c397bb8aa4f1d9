"""Log levels: whether debug lines are written follows the configured level, so the per-move
``committed`` line can be skipped whole (not built and filtered) when they are not."""

from __future__ import annotations

import os

import pytest

from playhall import log


@pytest.mark.parametrize(
    ("level", "debug"), [("debug", True), ("info", False), ("warning", False), ("error", False)]
)
def test_debug_lines_are_written_only_at_the_debug_level(level: str, debug: bool) -> None:
    try:
        log.configure("json", level)
        assert log.debug_enabled() is debug
    finally:  # back to the test run's own level (tests/server/conftest.py)
        log.configure("json", os.environ.get("PLAYHALL_TEST_LOG_LEVEL", "error"))
