"""Game plugins installed for a test, without pip and without touching any environment.

A plugin is found by its distribution's entry points (``playhall.games``). ``importlib.metadata``
reads them from a ``<name>-<version>.dist-info`` folder on ``sys.path``, which is what ``pip
install`` writes; :func:`dist_info` writes that folder into a temporary directory, and a test
puts the directory (and the plugin's source) on ``sys.path`` or a server's ``PYTHONPATH``.
:func:`example_plugin` does it for ``examples/fog_tictactoe`` from the entry points its own
``pyproject.toml`` declares, so the test checks the declaration a user's ``pip install -e``
reads.
"""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fog_tictactoe"


def dist_info(root: Path, name: str, version: str, games: dict[str, str]) -> Path:
    """Write the metadata of a distribution ``name`` declaring ``games`` (entry point name ->
    ``module:attr``) under ``root``; returns ``root``, the folder to put on the path."""
    folder = root / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    )
    lines = ["[playhall.games]", *(f"{k} = {v}" for k, v in games.items())]
    (folder / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return root


def example_plugin(root: Path) -> list[Path]:
    """``examples/fog_tictactoe`` as if pip-installed in editable mode: the folders to put on
    the path (its metadata under ``root``, and its source)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    games = project["entry-points"]["playhall.games"]
    return [dist_info(root, project["name"], project["version"], games), EXAMPLE]


#: Modules of broken or conflicting plugins, written next to their metadata.
MODULES = {
    "plug_raises": "raise RuntimeError('no board today')\n",
    "plug_not_a_game": "GAME = 42\n",
    "plug_impostor": """
        from fog_tictactoe.game import FogTicTacToe

        class Impostor(FogTicTacToe):
            id = "mantis"

        GAME = Impostor()
    """,
    "plug_bad_id": """
        from fog_tictactoe.game import FogTicTacToe

        class BadId(FogTicTacToe):
            id = "../x"

        GAME = BadId()
    """,
    "plug_mutating": """
        from fog_tictactoe.game import FogTicTacToe

        class Mutating(FogTicTacToe):
            id = "mutating"

            def apply(self, state, seat, move):
                applied = super().apply(state, seat, move)
                state["board"][move["cell"]] = seat  # the bug: the input changes
                return applied

        GAME = Mutating()
    """,
    "plug_leaky": """
        from fog_tictactoe.game import FogTicTacToe

        class Leaky(FogTicTacToe):
            id = "leaky"

            def view(self, state, seat):
                return {**super().view(state, seat), "seed_hint": state["rng"]["label"]}

        GAME = Leaky()
    """,
}


def write_modules(folder: Path) -> Path:
    """Write :data:`MODULES` into ``folder`` (made if need be); returns it, to put on the
    path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in MODULES.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return folder
