"""The room options every game accepts beside its own: the clock's (``rooms.clocks``) and the
spectator delay (``rooms.spectators``). The lobby's ``games`` lists them after each game's own
options; a room's options are the game's and these, defaults filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from playhall.games.contract import Option
from playhall.rooms import clocks

#: The longest spectator delay a room may ask for (the room holds this many records for it).
MAX_SPECTATOR_DELAY: Final = 100

SPECTATOR_DELAY: Final = Option(
    "spectator_delay",
    0,
    "while the game is played, spectators see it this many steps (room versions) behind the "
    "players; 0: live. Seated players always see it live",
    minimum=0,
    maximum=MAX_SPECTATOR_DELAY,
    label="spectator delay",
    unit="steps",
    value_labels=((0, "none"),),
)

OPTIONS: Final[tuple[Option, ...]] = (*clocks.OPTIONS, SPECTATOR_DELAY)

NAMES: Final = frozenset(option.name for option in OPTIONS)


def split(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A room's options as (the game's own, the room's: these)."""
    game: dict[str, Any] = {}
    room: dict[str, Any] = {}
    for name, value in options.items():
        (room if name in NAMES else game)[name] = value
    return game, room


def normalize(options: Mapping[str, Any]) -> dict[str, Any]:
    """The room options with defaults filled in; raises ``Rejected`` (``bad_option``) for a
    value that is not allowed. Only these options' names may be given."""
    return {
        option.name: option.check(options[option.name]) if option.name in options
        else option.default
        for option in OPTIONS
    }


def spectator_delay(options: Mapping[str, Any]) -> int:
    """A room's spectator delay in versions (rooms made before the option have none)."""
    delay = options.get(SPECTATOR_DELAY.name, 0)
    return delay if type(delay) is int else 0
