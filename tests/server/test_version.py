"""One version everywhere: the package's (pyproject.toml and ``playhall.__version__``), the
latest release in CHANGELOG.md, and the ``server`` string a real server says in its ``hello``
reply."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import playhall
from playhall_client import Client

ROOT = Path(__file__).resolve().parents[2]


def package_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def latest_release() -> str:
    """The first ``## [x.y.z] - date`` heading of CHANGELOG.md (``[Unreleased]`` is not one)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = re.search(r"^## \[(\d+\.\d+\.\d+[^\]]*)\] - \d{4}-\d{2}-\d{2}$", text, re.MULTILINE)
    assert found is not None, "CHANGELOG.md has no release heading '## [x.y.z] - YYYY-MM-DD'"
    return found.group(1)


def test_package_version_is_the_changelogs_latest_release() -> None:
    assert package_version() == latest_release()
    assert playhall.__version__ == package_version()


async def test_hello_names_the_package_version(url: str) -> None:
    client = await Client.connect(url, name="version")
    try:
        assert client.welcome["server"] == f"playhall/{package_version()}"
    finally:
        await client.close()
