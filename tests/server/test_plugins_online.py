"""Game plugins on a real server process: installed as tests/plugins.py installs them (metadata
on the server's ``PYTHONPATH``, nothing installed), found through their entry points at start.

A plugin that fails to load is a ``game_load_failed`` log line naming its package and the
reason, and the server starts with the other games; a plugin claiming a built-in's id stops the
start with a message naming both; the example plugin (examples/fog_tictactoe) is offered in the
lobby and played to its end against the server's bot, its automatic blast paced by its option.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from pathlib import Path

from playhall_client import Client, ServerError
from tests.plugins import dist_info, example_plugin, write_modules

from .conftest import free_port
from .process import ServerProcess


def plugin_paths(tmp_path: Path, name: str, games: dict[str, str]) -> list[Path]:
    """The example plugin, the broken modules, and a distribution ``name`` declaring ``games``."""
    return [
        *example_plugin(tmp_path / "example"),
        write_modules(tmp_path / "modules"),
        dist_info(tmp_path / name, name, "1.0", games),
    ]


async def test_a_failed_plugin_is_logged_and_the_others_are_played(
    redis_url: str, tmp_path: Path
) -> None:
    plugins = plugin_paths(tmp_path, "broken-games", {"raises": "plug_raises:GAME"})
    server = ServerProcess(
        free_port(), redis_url, f"p{uuid.uuid4().hex[:8]}:", "plugins-test", plugins=plugins,
        log_path=tmp_path / "server.log",
    )  # fmt: skip
    await server.start()
    try:
        client = await Client.connect(server.url, name="player")
        try:
            games = {g["id"]: g for g in await client.games()}
            assert {"fog_tictactoe", "mantis", "mandala"} <= set(games) and "raises" not in games
            assert games["fog_tictactoe"]["title"] == "Fog Tic-Tac-Toe"
            await play_to_the_end(client)
        finally:
            await client.close()
    finally:
        server.terminate()
    failed = [line for line in server.log_lines() if line["event"] == "game_load_failed"]
    assert failed == [
        {
            "event": "game_load_failed",
            "level": "error",
            "package": "broken-games 1.0",
            "entry_point": "raises = plug_raises:GAME",
            "reason": "import failed: RuntimeError('no board today')",
            "timestamp": failed[0]["timestamp"],
        }
    ]


async def play_to_the_end(client: Client) -> None:
    """Seat 0 plays the first move it is offered, the server's bot seat 1, to the end."""
    room = await client.create("fog_tictactoe", 2, options={"fuse_ms": 30})
    await client.add_bot(room.room, 1)
    await client.ready(room.room)
    await room.wait(lambda m: m.view["status"] != "waiting")
    while room.view["status"] != "finished":
        await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
        if room.view["status"] == "finished":
            break
        state = room.view["state"]
        # Hidden information: this seat sees its own mine, and the other's only once it blew.
        assert isinstance(state["my_mine"], int) and set(state["mines"]) <= {"0", "1"}
        before = room.version
        try:
            await client.move(room.room, room.view["moves"][0], version=before)
        except ServerError as exc:  # stale only: the blast (an automatic step) came first
            assert exc.code == "stale", exc
        await room.wait(lambda m, v=before: m.version > v, 30)
    assert room.view["outcome"]["reason"] in {"three_in_a_row", "board_full"}


async def test_two_games_claiming_one_id_stop_the_start(tmp_path: Path) -> None:
    plugins = plugin_paths(tmp_path, "impostor", {"mantis": "plug_impostor:GAME"})
    server = ServerProcess(free_port(), None, "", "conflict-test", plugins=plugins)
    ran = await asyncio.to_thread(
        subprocess.run, server.args, env=server.env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 2
    assert ran.stderr.endswith(
        "playhall serve: two games claim the id 'mantis': built-in playhall.games.mantis and "
        "impostor 1.0 (entry point mantis = plug_impostor:GAME)\n"
    )
