"""The JavaScript client library (clients/playhall_web/static/lib) against the real server:
Node plays a whole Mantis game against a server bot through it, dropping its own connection
mid-game (tests/js/live_game.mjs). Node 20.10+ is needed for its WebSocket; without Node the
test is skipped, except with ``CI=true`` where that fails."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from playhall import app

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
