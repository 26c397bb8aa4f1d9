"""One version everywhere: the server's (pyproject.toml and ``playhall.__version__``), the
latest release in CHANGELOG.md, the ``server`` string a real server says in its ``hello``
reply, and the versions of the distributions that move with it: playhall-protocol,
playhall-client (and its pin of the protocol) and the JavaScript library's npm package (and
package-lock.json's record of it)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import playhall
import playhall_client
import playhall_protocol
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


def test_the_protocol_and_both_client_libraries_carry_the_servers_version() -> None:
    version = package_version()
    assert playhall_protocol.__version__ == version
    assert playhall_client.__version__ == version
    with (ROOT / "clients" / "pyproject.toml").open("rb") as f:
        client = tomllib.load(f)["project"]
    assert f"playhall-protocol=={version}" in client["dependencies"]
    for folder, package in (("protocol", "playhall_protocol"), ("clients", "playhall_client")):
        with (ROOT / folder / "pyproject.toml").open("rb") as f:
            dynamic = tomllib.load(f)["tool"]["setuptools"]["dynamic"]
        assert dynamic["version"] == {"attr": f"{package}.__version__"}
    lib = "clients/playhall_web/static/lib"
    assert json.loads((ROOT / lib / "package.json").read_text())["version"] == version
    locked = json.loads((ROOT / "package-lock.json").read_text())["packages"][lib]
    assert locked["version"] == version


async def test_hello_names_the_package_version(url: str) -> None:
    client = await Client.connect(url, name="version")
    try:
        assert client.welcome["server"] == f"playhall/{package_version()}"
    finally:
        await client.close()
