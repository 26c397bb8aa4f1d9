"""The repository stands alone: no tracked file names a path outside it.

Rules, notes and reviews that live outside the repository are restated in docs/ (the game pages
restate every ruling they follow), so a citation of an outside path is a dangling reference for
everyone who clones the repository. The patterns are built from pieces so this file does not
match itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SLASH = "/"
OUTSIDE = re.compile(
    "|".join(
        [
            r"\bshared" + SLASH + r"(?:rules|notes|reviews|DESIGN)",  # the project's outside notes
            r"\.\." + SLASH + "shared",
            r"\w\.rulings\.md|\w\.seed\.md",  # the rule sources by file name
            r"(?<![\w.])" + SLASH + r"work" + SLASH,  # the developers' machine
            SLASH + r"Users" + SLASH,
            SLASH + r"home" + SLASH + r"(?!playhall\b)\w+",  # the image's own user is inside
        ]
    )
)


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of tracked files")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_the_pattern_catches_outside_paths() -> None:
    for text in ("see shared" + "/rules/mantis", "/work" + "/shared/x", "mandala" + ".rulings.md",
                 "/home" + "/alice/x", "../sha" + "red/notes"):
        assert OUTSIDE.search(text), text
    for text in ("--home-dir /home" + "/playhall", "docs/games/mantis.md", "a_shared/rulesx"):
        assert not OUTSIDE.search(text), text


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    found = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files, and files deleted but not yet committed
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "paths outside the repository:\n" + "\n".join(found)
