"""The example bots of examples/bots (PROTOCOL.md section 14), each run as its own process
against the real server: a room of a game created, the other seat the server's bot, played to
the end from the listed moves alone; and the two bots at one table, each joining a seat. The
JavaScript one needs Node 20.10+ (skipped without Node, except with ``CI=true``:
tests/server/test_js_library.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable

import pytest

from playhall import app
from playhall_client import Client

from .process import ROOT
from .test_js_library import node

BOTS = ROOT / "examples" / "bots"


async def run(*argv: str) -> dict[str, object]:
    """Run a bot to its end; returns the outcome it printed."""
    path = os.pathsep.join(str(ROOT / d) for d in ("protocol", "clients"))
    env = {**os.environ, "PYTHONPATH": path}
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-3000:]
    outcome: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    assert isinstance(outcome["reason"], str) and outcome["reason"], outcome
    return outcome


def python_bot(url: str, *args: str) -> list[str]:
    return [sys.executable, str(BOTS / "python_bot.py"), url, *args]


def js_bot(url: str, *args: str) -> list[str]:
    flags = ["--experimental-websocket", "--no-warnings"]
    return [node(), *flags, str(BOTS / "js_bot.mjs"), url, *args]


@pytest.mark.parametrize("bot", [python_bot, js_bot])
@pytest.mark.parametrize("game", ["mantis", "mandragora"])
async def test_a_bot_plays_a_game_to_the_end_against_the_server_bot(
    server: app.Running, bot: Callable[..., list[str]], game: str
) -> None:
    outcome = await run(*bot(f"ws://127.0.0.1:{server.port}/", "--game", game))
    assert len(outcome["scores"]) == 2  # type: ignore[arg-type]


async def test_the_two_bots_play_each_other(server: app.Running) -> None:
    url = f"ws://127.0.0.1:{server.port}/"
    host = await Client.connect(url, name="host")
    try:
        room = (await host.create("mantis", 2, sit=False)).room
        first, second = await asyncio.gather(
            run(*python_bot(url, "--room", room)), run(*js_bot(url, "--room", room))
        )
        assert first == second  # both saw the same end
        mirror = host.rooms[room]
        await mirror.wait(lambda m: m.view["status"] == "finished")
        names = sorted(seat["name"] for seat in mirror.view["seats"])
        assert names == ["js-bot", "python-bot"]
    finally:
        await host.close()
