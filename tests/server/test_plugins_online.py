"""Game plugins on a real server process: installed as tests/plugins.py installs them (metadata
on the server's ``PYTHONPATH``, nothing installed), found through their entry points at start.

A plugin that fails to load is a ``game_load_failed`` log line naming its package and the
reason, and the server starts with the other games; a plugin claiming a built-in's id stops the
start with a message naming both; the example plugin (examples/fog_tictactoe) is offered in the
lobby and played to its end against the server's bot, its automatic blast paced by its option;
a plugin's own renderer and rules page are served from its package.
"""

from __future__ import annotations

import asyncio
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from playhall_client import Client
from tests.plugins import dist_info, example_plugin, write_modules

from .conftest import free_port
from .helpers import play_to_the_end
from .process import ServerProcess

#: A plugin package that ships its own browser renderer (``web/<id>.js``) and rules page.
DRAWN = {
    "__init__.py": "from fog_tictactoe.game import FogTicTacToe\n\n"
    "class Drawn(FogTicTacToe):\n    id = 'drawn'\n\nGAME = Drawn()\n",
    "web/drawn.js": "export default { render: () => null, describe: () => null };\n",
    "rules/drawn.md": "# Drawn (`drawn`)\n\nThe rules.\n",
}


def plugin_paths(tmp_path: Path, name: str, games: dict[str, str]) -> list[Path]:
    """The example plugin, the broken modules, the package ``plug_drawn``, and a distribution
    ``name`` declaring ``games``."""
    for path, text in DRAWN.items():
        (tmp_path / "modules" / "plug_drawn" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "modules" / "plug_drawn" / path).write_text(text)
    return [
        *example_plugin(tmp_path / "example"),
        write_modules(tmp_path / "modules"),
        dist_info(tmp_path / name, name, "1.0", games),
    ]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


async def test_a_failed_plugin_is_logged_and_the_others_are_played(
    redis_url: str, tmp_path: Path
) -> None:
    plugins = plugin_paths(
        tmp_path,
        "more-games",
        # plug_mutating is a single module (no package, so no files of its own): offered too.
        {"raises": "plug_raises:GAME", "drawn": "plug_drawn:GAME", "mutating": "plug_mutating"},
    )
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
            assert {"drawn", "mutating"} <= set(games)
            await play_fog_tictactoe(client)
            # A plugin's own renderer and rules page, from its package, where the page looks.
            http = f"http://127.0.0.1:{server.port}"
            status, script = await asyncio.to_thread(get, f"{http}/app/games/drawn.js")
            assert (status, script) == (200, DRAWN["web/drawn.js"])
            assert (await asyncio.to_thread(get, f"{http}/app/games/fog_tictactoe.js"))[0] == 404
            status, page = await asyncio.to_thread(get, f"{http}/rules/fog_tictactoe")
            assert status == 200 and "<title>Fog Tic-Tac-Toe (fog_tictactoe) · Playhall" in page
            status, page = await asyncio.to_thread(get, f"{http}/rules/drawn")
            assert status == 200 and "<p>The rules.</p>" in page
        finally:
            await client.close()
    finally:
        server.terminate()
    failed = [line for line in server.log_lines() if line["event"] == "game_load_failed"]
    assert failed == [
        {
            "event": "game_load_failed",
            "level": "error",
            "package": "more-games 1.0",
            "entry_point": "raises = plug_raises:GAME",
            "reason": "import failed: RuntimeError('no board today')",
            "timestamp": failed[0]["timestamp"],
        }
    ]


async def play_fog_tictactoe(client: Client) -> None:
    """Seat 0 plays the first move it is offered, the server's bot seat 1, to the end."""
    room = await client.create("fog_tictactoe", 2, options={"fuse_ms": 30})
    await client.add_bot(room.room, 1)
    await client.ready(room.room)
    await play_to_the_end(client, room)
    assert room.view["outcome"]["reason"] in {"three_in_a_row", "board_full"}
    # Hidden information: this seat sees its own mine, and the other's only once it blew.
    state = room.view["state"]
    assert isinstance(state["my_mine"], int) and set(state["mines"]) <= {"0", "1"}


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
