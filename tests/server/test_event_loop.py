"""The event loop the server runs on (playhall.eventloop): uvloop by default where installed,
asyncio's own when asked; a whole game is played on each, in a real server process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid

import pytest
import uvloop

from playhall import eventloop
from playhall_client import Client
from tests.cext import c_extension, needs

from .conftest import free_port
from .process import ROOT, ServerProcess
from .test_play_mantis import play_until_over


def test_auto_is_uvloop_where_installed_and_asyncio_is_the_standard_loop() -> None:
    assert eventloop.loop_factory("auto") is uvloop.new_event_loop
    assert eventloop.loop_factory("uvloop") is uvloop.new_event_loop
    assert eventloop.loop_factory("asyncio") is None  # asyncio.Runner's own


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    assert eventloop.loop_factory("auto") is None
    with pytest.raises(eventloop.LoopUnavailable, match="uvloop is not installed"):
        eventloop.loop_factory("uvloop")
    with pytest.raises(ValueError, match="not one of"):
        eventloop.loop_factory("trio")


async def test_tests_run_on_the_loop_the_server_would() -> None:
    expected = "asyncio" if os.environ.get("PLAYHALL_EVENT_LOOP") == "asyncio" else "uvloop"
    assert eventloop.loop_name(asyncio.get_running_loop()) == expected


WITH_C = needs(c_extension("playhall_protocol._speedups"), "playhall_protocol._speedups")


@pytest.mark.parametrize(
    ("loop", "speedups"),
    [
        pytest.param("uvloop", True, marks=WITH_C),
        pytest.param("asyncio", True, marks=WITH_C),
        ("uvloop", False),
    ],
)
async def test_a_whole_game_on_each_loop(redis_url: str, loop: str, speedups: bool) -> None:
    """On each loop; and once with the pure Python reference of packing and diffing instead of
    the C speedups (``PLAYHALL_SPEEDUPS=0``)."""
    server = ServerProcess(
        free_port(),
        redis_url,
        f"l{uuid.uuid4().hex[:8]}:",
        f"loop-{loop}",
        ["--event-loop", loop, "--log-level", "info"],
    )
    server.env["PLAYHALL_SPEEDUPS"] = "1" if speedups else "0"
    await server.start()
    alice = await Client.connect(server.url, name="alice")
    bob = await Client.connect(server.url, name="bob")
    try:
        room_a = await alice.create("mantis", 2)
        room_b = await bob.join(room_a.room)
        await alice.ready(room_a.room)
        await bob.ready(room_a.room)
        await room_a.wait(lambda m: m.view["status"] == "playing")
        assert await play_until_over([(alice, room_a), (bob, room_b)]) > 0
        await room_b.wait(lambda m: m.view["status"] == "finished")
        assert room_b.view["outcome"]["winners"]
    finally:
        await alice.close()
        await bob.close()
        assert server.terminate() == 0
    events = [json.loads(line) for line in server.stderr().splitlines() if line.startswith("{")]
    listening = [e for e in events if e.get("event") == "listening"]
    assert [(e["loop"], e["speedups"]) for e in listening] == [(loop, speedups)]


def test_serve_refuses_uvloop_when_it_is_not_installed() -> None:
    hide = "import sys; sys.modules['uvloop'] = None; from playhall.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", hide, "serve", "--event-loop", "uvloop", "--redis-url",
         "redis://127.0.0.1:1/0"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            str(ROOT / d) for d in ("protocol", "server", "clients"))},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "uvloop is not installed" in result.stderr
