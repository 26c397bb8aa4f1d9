"""docs/operations.md's table of log events against the server's code: every event the code
logs by name is in the table, and every name in the table is one the code can log."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server" / "playhall"
LEVELS = {"debug", "info", "warning", "error", "exception", "critical"}
#: A row of the events table: its first cell (one or more names) and its level(s).
_LEVEL = r"(?:debug|info|warning|error)"
ROW = re.compile(rf"^\| (`[^|]+) \| ({_LEVEL}(?: / {_LEVEL})*) \|")


def logged_by_name() -> dict[str, str]:
    """Each event the code logs with its name written out (``logger.info("room_loaded", ...)``),
    with a file that logs it."""
    found: dict[str, str] = {}
    for path in sorted(SERVER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in LEVELS
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and re.fullmatch(r"[a-z][a-z0-9_]*", node.args[0].value)
            ):
                found.setdefault(node.args[0].value, str(path.relative_to(ROOT)))
    return found


def names_in_code() -> set[str]:
    """Every string the code holds, and the ``<what>_failed`` events made from one
    (``playhall.tasks.Tasks``, ``store.outage.failure_of``: "room stop" logs
    ``room_stop_failed``)."""
    strings: set[str] = set()
    for path in SERVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
    return strings | {s.replace(" ", "_") + "_failed" for s in strings}


def documented() -> set[str]:
    """The events the table names: "`embedded_redis_restarted` / `_restart_failed`" names
    ``embedded_redis_restarted`` and ``embedded_redis_restart_failed`` (a name starting with
    an underscore replaces the last word of the one before)."""
    text = (ROOT / "docs" / "operations.md").read_text()
    table = text[text.index("| event | level | when |"):]
    names: set[str] = set()
    for line in table.splitlines():
        if not line.startswith("|"):
            break
        row = ROW.match(line)
        if row is None:
            continue
        before = ""
        for name in re.findall(r"`([a-z0-9_]+)`", row.group(1)):
            if name.startswith("_") and before:
                names.add(before.rsplit("_", 1)[0] + name)
            else:
                names.add(name)
                before = name
    return names


def test_the_table_reads_as_the_events_it_lists() -> None:
    names = documented()
    assert {"embedded_redis_started", "embedded_redis_reused", "embedded_redis_restart_failed",
            "room_loaded", "rooms_handed_over"} <= names
    assert len(names) > 90


def test_every_event_the_code_logs_is_in_the_table() -> None:
    missing = {name: path for name, path in logged_by_name().items()
               if name not in documented()}
    assert not missing, f"log events missing from docs/operations.md's table: {missing}"


def test_every_event_in_the_table_is_one_the_code_can_log() -> None:
    unknown = sorted(documented() - names_in_code())
    assert not unknown, f"docs/operations.md's table names events the code never logs: {unknown}"
