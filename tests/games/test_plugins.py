"""Games as plugins: the catalog's entry points (``playhall.games``) and ``playhall
check-game``, in this process, with plugins installed by ``tests/plugins.py`` (metadata in a
temporary folder on ``sys.path``, nothing installed). The server's side, a failed plugin's log
line at start and a plugin played online, is tests/server/test_plugins_online.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from playhall import catalog, cli
from playhall.games.conformance import Violation, check_random_game
from tests.plugins import dist_info, example_plugin, write_modules


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example plugin installed; returns a folder to write more plugins into."""
    for folder in example_plugin(tmp_path / "example"):
        monkeypatch.syspath_prepend(str(folder))
    more = write_modules(tmp_path / "more")
    monkeypatch.syspath_prepend(str(more))
    return more


def install(
    folder: Path, name: str, games: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(dist_info(folder / name, name, "1.0", games)))


def test_the_example_plugin_is_found_by_its_entry_point(installed: Path) -> None:
    found, failures = catalog.plugins()
    assert failures == []
    by_id = {f.game.id: f for f in found}
    assert by_id["fog_tictactoe"].source == (
        "playhall-fog-tictactoe 0.1.0 (entry point fog_tictactoe = fog_tictactoe:GAME)"
    )
    # The built-ins declare entry points too; found both ways, each is still one game.
    games = catalog.merge([*catalog.built_in(), *found])
    assert {"fog_tictactoe", "mantis", "mandala"} <= set(games)
    assert games["mantis"].game is catalog.get_game("mantis")


def test_a_plugin_that_fails_is_reported_with_its_package_and_reason(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(installed, "broken-games", {
        "raises": "plug_raises:GAME",
        "number": "plug_not_a_game",
        "wrong_name": "fog_tictactoe:GAME",
        "bad_id": "plug_bad_id:GAME",
    }, monkeypatch)  # fmt: skip
    found, failures = catalog.plugins()
    assert "fog_tictactoe" in {f.game.id for f in found}  # the others still load
    reasons = {f.entry_point.split(" = ")[0]: f.reason for f in failures}
    assert {f.package for f in failures} == {"broken-games 1.0"}
    assert reasons["raises"] == "import failed: RuntimeError('no board today')"
    assert reasons["number"] == "it names no playhall.games.contract.Game instance"
    assert reasons["wrong_name"] == (
        "the entry point is named 'wrong_name' but the game's id is 'fog_tictactoe'"
    )
    assert "'../x' is not a letter or _" in reasons["bad_id"]


def test_two_games_claiming_one_id_is_an_error_naming_both(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(installed, "impostor", {"mantis": "plug_impostor:GAME"}, monkeypatch)
    found, failures = catalog.plugins()
    assert failures == []
    with pytest.raises(catalog.GameConflict) as raised:
        catalog.merge([*catalog.built_in(), *found])
    assert str(raised.value) == (
        "two games claim the id 'mantis': built-in playhall.games.mantis and "
        "impostor 1.0 (entry point mantis = plug_impostor:GAME)"
    )


def test_check_game_passes_the_example_by_its_id(
    installed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["check-game", "fog_tictactoe", "--seeds", "20"]) == 0
    out = capsys.readouterr().out
    assert "ok    2 seats, options {'fuse_ms': 0}: 20 games" in out
    assert out.endswith("every check holds\n")


@pytest.mark.parametrize(
    "target, failure",
    [
        ("plug_mutating", "apply changed the state it was given"),
        ("plug_leaky:GAME", "a view changed when only the RNG state did"),
    ],
)
def test_check_game_fails_a_broken_game_by_its_module(
    installed: Path, capsys: pytest.CaptureFixture[str], target: str, failure: str
) -> None:
    assert cli.main(["check-game", target, "--seeds", "5"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  2 seats, options {{'fuse_ms': 0}}: seed 0: {failure}" in out
    assert out.endswith("failed\n")


def test_check_game_says_why_a_plugin_did_not_load(
    installed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install(installed, "broken-games", {"raises": "plug_raises:GAME"}, monkeypatch)
    assert cli.main(["check-game", "raises"]) == 2
    assert capsys.readouterr().err == (
        "playhall check-game: broken-games 1.0 declares raises = plug_raises:GAME but it "
        "failed to load: import failed: RuntimeError('no board today')\n"
    )
    assert cli.main(["check-game", "no_such_game"]) == 2
    assert "no game has the id 'no_such_game'" in capsys.readouterr().err


def test_the_checks_hold_without_assert_statements(installed: Path) -> None:
    """A broken rule raises the checks' own Violation, not a bare ``assert`` (which
    ``python -O`` strips)."""
    from plug_mutating import GAME

    with pytest.raises(Violation, match="apply changed the state it was given"):
        check_random_game(GAME, 2, {"fuse_ms": 0}, 1)
