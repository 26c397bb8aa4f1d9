"""The repository speaks of what is true now: history belongs in git, not in its files.

No tracked file under the folders a user or contributor reads names a "session N" (how or when
something was made). The files are git's tracked ones; where there is no git checkout (the
compiled build's copy of the tree, say), every file under those folders but build output."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("docs", "README.md", "server", "protocol", "clients", "bench")
SESSION = re.compile(r"\bsessions?[ \t_-]*\d", re.IGNORECASE)
NOT_SOURCE = {"__pycache__", "build", ".mypy_cache", ".ruff_cache", "node_modules"}


def checked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *CHECKED],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode()
        return [ROOT / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for top in CHECKED:
            path = ROOT / top
            candidates = [path] if path.is_file() else path.rglob("*")
            found += [
                p for p in candidates
                if p.is_file() and not any(
                    part in NOT_SOURCE or part.endswith(".egg-info")
                    for part in p.relative_to(ROOT).parts
                )
            ]
        return found


def mentions(path: Path) -> list[str]:
    data = path.read_bytes()
    if b"\0" in data:  # a binary file (an image, a built module)
        return []
    text = data.decode("utf-8", errors="replace")
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if SESSION.search(line)
    ]


def test_the_checked_folders_are_found() -> None:
    files = checked_files()
    assert ROOT / "README.md" in files
    assert any(p.suffix == ".py" and "server" in p.parts for p in files)


def test_no_file_names_a_session_by_number() -> None:
    found = [hit for path in checked_files() if path.exists() for hit in mentions(path)]
    assert not found, "history belongs in git log, not in the files:\n" + "\n".join(found)


def test_the_pattern_catches_what_it_should() -> None:
    for text in ("session 10", "Session 9's run", "(sessions 7-8)", "session_3", "SESSION 1"):
        assert SESSION.search(text), text
    for text in ("an example session", "session.reply(frame)", "sessions = {}", "session 's"):
        assert not SESSION.search(text), text
