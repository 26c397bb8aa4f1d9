"""docs/operations.md's settings table names every setting the server has, as it is set."""

from __future__ import annotations

from pathlib import Path

from playhall.config import Config

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_every_setting_has_its_row_with_flag_and_variable() -> None:
    section = DOC.read_text().split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = {row.split("`")[1]: row for row in rows}
    for f in Config.settings():
        row = named.get(f.name)
        assert row is not None, f"docs/operations.md has no row for {f.name}"
        flag = "--" + f.name.replace("_", "-")
        assert f"| `{flag}` | `PLAYHALL_{f.name.upper()}` |" in row, row
