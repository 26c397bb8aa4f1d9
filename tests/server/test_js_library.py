"""The JavaScript client library (clients/playhall_web/static/lib) against the real server:
Node plays a whole Mantis game against a server bot through it, dropping its own connection
mid-game (tests/js/live_game.mjs). Node 20.10+ is needed for its WebSocket; without Node the
test is skipped, except with ``CI=true`` where that fails."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from playhall import app

from .conftest import free_port
from .process import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "js" / "live_game.mjs"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        reason = "no node on PATH (apt-get install nodejs)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return found


async def test_a_whole_game_through_the_javascript_library(server: app.Running) -> None:
    process = await asyncio.create_subprocess_exec(
        node(),
        "--experimental-websocket",
        "--no-warnings",
        str(SCRIPT),
        f"ws://127.0.0.1:{server.port}/",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-3000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["outcome"]["reason"] == "target_reached"
    assert result["moves"] > 0 and result["events"] > 0
    # It dropped its connection once, came back by itself, and finally closed.
    assert result["states"] == ["connecting", "open", "reconnecting", "open", "closed"]
    assert result["errors"] == []


SPECTATOR = ROOT / "tests" / "js" / "private_spectator.mjs"


async def _spectator_script(url: str, mode: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        node(), "--experimental-websocket", "--no-warnings", str(SPECTATOR), url, mode,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


def _spectator_result(process: asyncio.subprocess.Process, out: bytes, err: bytes) -> None:
    assert process.returncode == 0, err.decode()[-3000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    # It lost its connection, came back by itself, and was never told the room is gone.
    assert result["states"][:3] == ["connecting", "open", "reconnecting"], result
    assert result["states"][-2:] == ["open", "closed"], result
    assert result["errors"] == [], result


async def test_a_private_spectator_stays_in_after_a_drop_in_the_javascript_library(
    server: app.Running,
) -> None:
    process = await _spectator_script(f"ws://127.0.0.1:{server.port}/", "drop")
    out, err = await asyncio.wait_for(process.communicate(), 60)
    _spectator_result(process, out, err)


async def test_a_private_spectator_stays_in_across_a_restart_in_the_javascript_library(
    redis_url: str,
) -> None:
    port = free_port()
    prefix = f"j{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "js-spectator")
    await first.start()
    second = ServerProcess(first.port, redis_url, prefix, "js-spectator")
    try:
        process = await _spectator_script(first.url, "restart")
        assert process.stdout is not None and process.stdin is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        assert line.strip() == b"joined", line
        first.kill()
        await second.start()
        process.stdin.write(b"go\n")
        out, err = await asyncio.wait_for(process.communicate(), 60)
        _spectator_result(process, out, err)
    finally:
        first.terminate()
        second.terminate()
