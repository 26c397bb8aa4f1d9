"""Every option every game offers (its own and the clock's) describes itself to people: a label,
a unit where an int is a duration, the choices under which it applies, and what particular values
mean, each naming only options and values that exist (PROTOCOL.md section 4, ``games``)."""

from __future__ import annotations

from typing import Any

import pytest

from playhall import catalog
from playhall.rooms.views import game_entry

GAMES = sorted(catalog.all_games())


def described(game_id: str) -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = game_entry(catalog.all_games()[game_id])["options"]
    return options


@pytest.mark.parametrize("game_id", GAMES)
def test_every_option_has_a_label_and_names_only_what_exists(game_id: str) -> None:
    options = described(game_id)
    by_name = {o["name"]: o for o in options}
    for option in options:
        assert option["label"].strip(), option["name"]
        for other, choices in option.get("when", {}).items():
            assert other != option["name"] and other in by_name, (option["name"], other)
            assert set(choices) <= set(by_name[other]["choices"]), (option["name"], choices)
        for value in option.get("value_labels", {}):
            allowed = option.get("choices")
            if allowed is not None:
                assert value in [str(c) for c in allowed], (option["name"], value)
            else:
                assert option["kind"] == "int" and option["min"] <= int(value) <= option["max"]
        if option["name"].endswith("_ms"):
            assert option.get("unit") == "ms", option["name"]


def test_clock_settings_apply_only_to_the_clocks_that_use_them() -> None:
    by_name = {o["name"]: o for o in described("mantis")}
    assert "when" not in by_name["clock"]
    assert by_name["clock_ms"]["when"] == {"clock": ["turn", "fischer"]}
    assert by_name["increment_ms"]["when"] == {"clock": ["fischer"]}
    assert by_name["on_timeout"]["when"] == {"clock": ["turn", "fischer"]}


def test_mandala_solo_settings_apply_only_to_solo_and_mantis_says_what_target_0_is() -> None:
    mandala = {o["name"]: o for o in described("mandala")}
    assert mandala["yoga"]["when"] == {"mode": ["solo"]}
    assert mandala["yoga_delay_ms"]["when"] == {"mode": ["solo"]}
    assert "when" not in mandala["mode"]
    target = {o["name"]: o for o in described("mantis")}["target"]
    assert "15 with 2 players" in target["value_labels"]["0"]


def test_mandragora_names_the_first_seat_as_people_count() -> None:
    first = {o["name"]: o for o in described("mandragora")}["first"]
    assert first["value_labels"] == {"0": "seat 1", "1": "seat 2"}
