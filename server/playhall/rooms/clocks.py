"""Clocks: the clock's room options (every game accepts them, ``rooms.room_options``), and the
seats' clocks as pure functions of time.

A room's clock is one of: ``none``; ``turn`` (each turn has ``clock_ms``, afresh: what a turn
is, the game says, ``Game.turn_goes_on``); or
``fischer`` (each seat starts with a bank of ``clock_ms`` and gains ``increment_ms`` with each of
its turns). What a clock that runs out does is ``on_timeout``: ``bot`` (the server's bot moves
for the seat, a stand-in, until the player acts again) or ``forfeit`` (the seat leaves the game:
``Game.leave`` with the reason ``timeout``).

Time runs only for the seats in the game's ``to_act``: several at once during simultaneous
steps, none during automatic steps or once the game is over. The clocks are plain data stored
with the room record (:data:`Clocks`): each running seat's clock is an absolute deadline, the
way an automatic step's is, so a restart (or a move of the room to another process) neither
resets a clock nor fires it early. Nothing here reads the time: the room passes ``now`` in, and
the engines never see the clocks at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from playhall.games.contract import Option

#: Clock kinds and timeout policies.
KINDS: Final = ("none", "turn", "fischer")
POLICIES: Final = ("bot", "forfeit")

#: The longest clock the options allow: a week, in milliseconds.
_WEEK_MS: Final = 7 * 24 * 3600 * 1000

#: Room options every game accepts, beside its own (the lobby's ``games`` lists them with them).
OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        "clock",
        "none",
        "none: no clock; turn: clock_ms for each turn; fischer: a bank of clock_ms per seat, "
        "plus increment_ms with each of its turns",
        choices=KINDS,
        label="clock",
        value_labels=(("none", "no clock"), ("turn", "per turn"), ("fischer", "Fischer")),
    ),
    Option(
        "clock_ms",
        120_000,
        "time for each turn (turn), or each seat's starting bank (fischer)",
        minimum=100,
        maximum=_WEEK_MS,
        label="time",
        unit="ms",
        when=(("clock", ("turn", "fischer")),),
    ),
    Option(
        "increment_ms",
        5_000,
        "time a seat's bank gains with each of its turns (fischer)",
        minimum=0,
        maximum=_WEEK_MS,
        label="increment",
        unit="ms",
        when=(("clock", ("fischer",)),),
    ),
    Option(
        "on_timeout",
        "bot",
        "when a clock runs out: bot (the server's bot moves for the seat until the player acts "
        "again) or forfeit (the seat leaves the game, reason timeout)",
        choices=POLICIES,
        label="on timeout",
        when=(("clock", ("turn", "fischer")),),
        value_labels=(("bot", "a bot plays"), ("forfeit", "the seat forfeits")),
    ),
)

NAMES: Final = frozenset(option.name for option in OPTIONS)

#: The clocks of a game being played (plain data, stored with the room record)::
#:
#:     at            float              when ``remaining_ms`` was measured (epoch seconds)
#:     remaining_ms  list[int]          each seat's time left at ``at``
#:     deadlines     list[float|None]   when each running seat's clock runs out; None: stopped
Clocks = dict[str, Any]


class Rules:
    """A room's clock options, read once."""

    __slots__ = ("kind", "limit_ms", "increment_ms", "on_timeout")

    def __init__(self, options: Mapping[str, Any]) -> None:
        #: Rooms whose options predate clocks have none.
        self.kind: str = options.get("clock", "none")
        self.limit_ms: int = options.get("clock_ms", 0)
        self.increment_ms: int = options.get("increment_ms", 0)
        self.on_timeout: str = options.get("on_timeout", "bot")

    @property
    def on(self) -> bool:
        return self.kind != "none"


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def start(rules: Rules, seats: int, to_act: Sequence[int], now: float) -> Clocks | None:
    """The clocks of a game that starts at ``now`` (None: the room has no clock)."""
    if not rules.on:
        return None
    idle: Clocks = {
        "at": now,
        "remaining_ms": [rules.limit_ms] * seats,
        "deadlines": [None] * seats,
    }
    return advance(rules, idle, to_act, None, now)


def advance(
    rules: Rules,
    clocks: Clocks | None,
    to_act: Sequence[int],
    mover: int | None,
    now: float,
    goes_on: Collection[int] = (),
) -> Clocks | None:
    """The clocks after a change at ``now``, when ``to_act`` are the seats the game now waits
    for, ``mover`` the seat that moved (None: an automatic step, a seat leaving, ...) and
    ``goes_on`` the seats whose turn the change did not end (``Game.turn_goes_on``: a Math
    card turn is many actions, and may wait for the other seat's answer in between).

    A running seat that is still to act runs on towards the same deadline if it did not move
    (a simultaneous step: another seat moved) or its turn goes on. Any other running seat
    stops: under ``turn`` its next turn gets the whole ``clock_ms`` again, unless its turn goes
    on (it keeps what was left, for when the turn resumes); under ``fischer`` it keeps what was
    left, plus ``increment_ms`` if it moved and its turn is over. A seat to act whose clock is
    stopped starts it (the mover too, on an extra turn): with the whole ``clock_ms`` under
    ``turn`` unless its turn goes on, with what is left of its bank under ``fischer``."""
    if clocks is None:
        return None
    remaining: list[int] = list(clocks["remaining_ms"])
    deadlines: list[float | None] = list(clocks["deadlines"])
    fischer = rules.kind == "fischer"
    for seat, deadline in enumerate(deadlines):
        if deadline is None:
            continue
        left = _ms(deadline - now)
        remaining[seat] = left
        if seat in to_act and (seat != mover or seat in goes_on):
            continue
        deadlines[seat] = None
        if seat in goes_on:
            continue  # the turn resumes later with what is left
        if not fischer:
            remaining[seat] = rules.limit_ms
        elif seat == mover:
            remaining[seat] = left + rules.increment_ms
    for seat in to_act:
        if 0 <= seat < len(deadlines) and deadlines[seat] is None:
            if not fischer and seat not in goes_on:
                remaining[seat] = rules.limit_ms
            deadlines[seat] = now + remaining[seat] / 1000
    return {"at": now, "remaining_ms": remaining, "deadlines": deadlines}


def next_deadline(clocks: Clocks | None) -> float | None:
    """The earliest deadline of a running clock (None: none runs)."""
    if clocks is None:
        return None
    running = [d for d in clocks["deadlines"] if d is not None]
    return min(running) if running else None


def expired(clocks: Clocks | None, now: float) -> list[int]:
    """The seats whose clocks have run out at ``now``."""
    if clocks is None:
        return []
    return [s for s, d in enumerate(clocks["deadlines"]) if d is not None and d <= now]


def shown(rules: Rules, clocks: Clocks | None) -> dict[str, Any] | None:
    """What the room view shows of the clocks: the options, each seat's ``remaining_ms`` as
    measured at ``at`` (server time, epoch seconds), and the seats whose clocks are
    ``running``. A client counts a running clock down from there (PROTOCOL.md, "Clocks")."""
    if not rules.on:
        return None
    out: dict[str, Any] = {
        "kind": rules.kind,
        "clock_ms": rules.limit_ms,
        "increment_ms": rules.increment_ms if rules.kind == "fischer" else 0,
        "on_timeout": rules.on_timeout,
        "at": None,
        "remaining_ms": None,
        "running": [],
    }
    if clocks is not None:
        out["at"] = clocks["at"]
        out["remaining_ms"] = list(clocks["remaining_ms"])
        out["running"] = [s for s, d in enumerate(clocks["deadlines"]) if d is not None]
    return out
