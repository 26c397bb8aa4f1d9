"""A game step as a room change: the next record it makes, live or replayed from the room's log.

A game step (a player's move, a bot's move, an automatic step) changes only what the engine's
new state decides (status, outcome), plus two things the engine cannot know: the deadline of
the next automatic step (an absolute time) and, for a player's move, the move id remembered for
retries. The step's log entry carries both, so the log entry alone describes the change: the
room stores the whole record only now and then (a checkpoint), and whoever loads the room
replays the entries after it through the engine, which is pure and deterministic, to get
exactly the record that was live.
"""

from __future__ import annotations

import time
from typing import Any, Final

import msgpack

from playhall.games.contract import Applied, Game, State
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall_protocol.codec import pack

#: Log entry kinds that are game steps; any other change is stored with its whole record.
STEPS: Final = frozenset({"move", "bot_move", "auto"})


class ReplayError(Exception):
    """A log entry that does not follow from the record (damaged data, or an engine that is
    not deterministic)."""


def step_fields(
    game: Game, state: State, *, replayed: bool = False, deadline: float | None = None
) -> tuple[str, dict[str, Any] | None, float | None]:
    """A record's fields that follow from the game state: status, outcome, and the absolute
    time of the next automatic step: from now, live; the logged ``deadline`` when
    ``replayed``."""
    outcome = game.outcome(state)
    if outcome is not None:
        return FINISHED, outcome.as_dict(), None
    if not replayed:
        delay = game.auto_delay(state)
        deadline = time.time() + delay if delay is not None else None
    return PLAYING, None, deadline


def game_fields(game: Game, state: State) -> dict[str, Any]:
    """:func:`step_fields` (live) and the state, by field name: for a game being set up."""
    status, outcome, deadline = step_fields(game, state)
    return {"state": state, "status": status, "outcome": outcome, "deadline": deadline}


def played(
    record: RoomRecord,
    game: Game,
    applied: Applied,
    seen: dict[str, dict[Any, int]] | None = None,
) -> RoomRecord:
    """The next version of ``record``, carrying the engine's new state, live (and ``seen``, the
    move ids with a player's move added)."""
    status, outcome, deadline = step_fields(game, applied.state)
    return record.stepped(applied.state, status, outcome, deadline, seen)


def step_entry(
    new: RoomRecord, kind: str, seat: int | None, player: str | None, move: Any, mid: Any
) -> dict[str, bytes | str | int]:
    """The log entry of the change that made ``new``: what :func:`replay` needs to make it
    again from the record before it (``mid``: the move id, for a player's move)."""
    entry: dict[str, bytes | str | int] = {"v": new.version, "k": kind}
    if seat is not None:
        entry["s"] = seat
    if player is not None:
        entry["p"] = player
    if move is not None:
        entry["m"] = pack(move)
    if mid is not None:
        entry["i"] = pack(mid)
    if new.deadline is not None:
        entry["d"] = repr(new.deadline)  # repr gives the float back exactly
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
        else:
            applied = game.apply(record.state, int(entry["s"]), msgpack.unpackb(entry["m"]))
        logged = float(entry["d"]) if "d" in entry else None
        status, outcome, deadline = step_fields(game, applied.state, replayed=True, deadline=logged)
        seen = None
        if "i" in entry:
            seen = record.remember(entry["p"].decode(), msgpack.unpackb(entry["i"]), version)
        record = record.stepped(applied.state, status, outcome, deadline, seen)
    return record
