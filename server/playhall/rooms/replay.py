"""A game step as a room change: the next record it makes, live or replayed from the room's log.

A game step (a player's move, a bot's move, an automatic step, a seat leaving the game) changes
only what the engine's new state decides (status, outcome), plus what the engine cannot know:
the deadline of the next automatic step (an absolute time), the seats' clocks (absolute
deadlines, ``rooms.clocks``) and, for a player's move, the move id remembered for retries. The
step's log entry carries them, so the log entry alone describes the change: the
room stores the whole record only now and then (a checkpoint), and whoever loads the room
replays the entries after it through the engine, which is pure and deterministic, to get
exactly the record that was live.
"""

from __future__ import annotations

import time
from typing import Any, Final

import msgpack

from playhall.games.contract import Applied, Event, Game, State
from playhall.rooms import clocks
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall_protocol.codec import pack

#: Log entry kinds that are game steps; any other change is stored with its whole record.
#: ``leave_game``: a seat left the game (``Game.leave``; the entry's move is the reason).
STEPS: Final = frozenset({"move", "bot_move", "auto", "leave_game"})


class ReplayError(Exception):
    """A log entry that does not follow from the record (damaged data, or an engine that is
    not deterministic)."""


def step_fields(
    game: Game,
    state: State,
    *,
    replayed: bool = False,
    deadline: float | None = None,
    now: float | None = None,
) -> tuple[str, dict[str, Any] | None, float | None]:
    """A record's fields that follow from the game state: status, outcome, and the absolute
    time of the next automatic step: from ``now`` (the time, unless given), live; the logged
    ``deadline`` when ``replayed``."""
    outcome = game.outcome(state)
    if outcome is not None:
        return FINISHED, outcome.as_dict(), None
    if not replayed:
        delay = game.auto_delay(state)
        if delay is None:
            deadline = None
        else:
            deadline = (time.time() if now is None else now) + delay
    return PLAYING, None, deadline


def game_fields(
    game: Game, state: State, options: dict[str, Any], seats: int, now: float
) -> dict[str, Any]:
    """:func:`step_fields` (live), the state and the clocks, by field name: for a game being
    set up at ``now`` in a room of these options and seats."""
    status, outcome, deadline = step_fields(game, state, now=now)
    to_act = game.to_act(state) if status == PLAYING else []
    started = clocks.start(clocks.Rules(options), seats, to_act, now)
    return {
        "state": state,
        "status": status,
        "outcome": outcome,
        "deadline": deadline,
        "clocks": started,
    }


def played(
    record: RoomRecord,
    game: Game,
    applied: Applied,
    seen: dict[str, dict[Any, int]] | None = None,
    mover: int | None = None,
    now: float | None = None,
) -> RoomRecord:
    """The next version of ``record``, carrying the engine's new state, live at ``now`` (the
    time, unless given), with the clocks moved on (``mover``: the seat that moved, if one did)
    and ``seen``, the move ids with a player's move added."""
    ticked = record.clocks
    if ticked is None:  # most rooms: no clock, and the time only if a step is paced
        status, outcome, deadline = step_fields(game, applied.state, now=now)
    else:
        at = time.time() if now is None else now
        status, outcome, deadline = step_fields(game, applied.state, now=at)
        to_act = game.to_act(applied.state) if status == PLAYING else []
        goes_on = [] if status != PLAYING or record.state is None else [
            seat for seat in range(len(record.seats))
            if game.turn_goes_on(record.state, applied.state, seat)
        ]
        ticked = clocks.advance(clocks.Rules(record.options), ticked, to_act, mover, at, goes_on)
    return record.stepped(applied.state, status, outcome, deadline, seen, ticked)


def step_entry(
    new: RoomRecord, kind: str, seat: int | None, player: str | None, move: Any, mid: Any,
    events: list[Event] | None = None,
) -> list[bytes]:
    """The log entry of the change that made ``new``: what :func:`replay` needs to make it
    again from the record before it (``mid``: the move id, for a player's move), and the
    change's ``events`` as sent, with their ``visible_to`` marks (for a viewer's recent history,
    ``history``; replay does not read them). As the log stores it: field, value, field, value,
    ... in bytes (made here once, as every move's entry is, rather than converted from a map by
    the store)."""
    entry = [b"v", b"%d" % new.version, b"k", kind.encode()]
    if seat is not None:
        entry += (b"s", b"%d" % seat)
    if player is not None:
        entry += (b"p", player.encode())
    if move is not None:
        entry += (b"m", pack(move))
    if mid is not None:
        entry += (b"i", pack(mid))
    if new.deadline is not None:
        entry += (b"d", repr(new.deadline).encode())  # repr gives the float back exactly
    if new.clocks is not None:
        entry += (b"c", pack(new.clocks))  # msgpack keeps floats exactly too
    if events:
        entry += (b"e", pack(events))
    return entry


def replay(record: RoomRecord, game: Game, entries: list[dict[str, bytes]]) -> RoomRecord:
    """``record`` with the game steps of ``entries`` (the log entries after it, oldest first)
    applied again. Raises :class:`ReplayError` if one does not follow."""
    for entry in entries:
        kind = entry.get("k", b"").decode()
        version = int(entry.get("v", b"-1"))
        if kind not in STEPS or version != record.version + 1 or record.state is None:
            raise ReplayError(f"log entry {kind!r} at version {version} after {record.version}")
        if kind == "auto":
            applied = game.apply_auto(record.state)
        elif kind == "leave_game":
            applied = game.leave(record.state, int(entry["s"]), msgpack.unpackb(entry["m"]))
        else:
            applied = game.apply(record.state, int(entry["s"]), msgpack.unpackb(entry["m"]))
        logged = float(entry["d"]) if "d" in entry else None
        status, outcome, deadline = step_fields(game, applied.state, replayed=True, deadline=logged)
        seen = None
        if "i" in entry:
            seen = record.remember(entry["p"].decode(), msgpack.unpackb(entry["i"]), version)
        ticked = msgpack.unpackb(entry["c"]) if "c" in entry else None
        record = record.stepped(applied.state, status, outcome, deadline, seen, ticked)
    return record
