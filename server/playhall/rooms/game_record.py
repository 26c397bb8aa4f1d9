"""A finished room's game record (``playhall_protocol.gamerecord``): built from the room's
record and its whole log, as the ``record`` request returns it.

Only a finished room has one: before the end the log holds hidden facts (every move, the
secret's reveal) that the views keep from some viewers. After it, everything is public.
"""

from __future__ import annotations

from typing import Any

import msgpack

import playhall
from playhall.rooms.record import FINISHED, RoomRecord
from playhall.rooms.views import fair_map
from playhall_protocol import gamerecord


def build(
    record: RoomRecord, title: str, log: list[tuple[float, dict[str, bytes]]]
) -> dict[str, Any]:
    """The record of ``record``'s room from its ``log`` (time in Unix seconds, entry), oldest
    first. The room must be finished."""
    if record.status != FINISHED:
        raise ValueError("a game record is made only of a finished room")
    fair = fair_map(record, revealed=True)
    steps = [_step(at, entry) for at, entry in log]
    final = gamerecord.chained(record.id, fair["commitment"], steps)
    return {
        "format": gamerecord.FORMAT,
        "format_version": gamerecord.FORMAT_VERSION,
        "server": f"playhall/{playhall.__version__}",
        "room": record.id,
        "game": record.game,
        "title": title,
        "options": record.options,
        "seats": [{"name": seat.name, "bot": seat.bot} for seat in record.seats],
        "created": record.created,
        "rematch_of": record.rematch_of,
        "fair": fair,
        "steps": steps,
        "outcome": record.outcome,
        "final_hash": final,
    }


def _step(at: float, entry: dict[str, bytes]) -> dict[str, Any]:
    """One log entry as a step: what changed the room, by whom, when (player ids left out:
    the seats say who sat where)."""
    return {
        "version": int(entry["v"]),
        "kind": entry["k"].decode(),
        "seat": int(entry["s"]) if "s" in entry else None,
        "move": msgpack.unpackb(entry["m"]) if "m" in entry else None,
        "mid": msgpack.unpackb(entry["i"]) if "i" in entry else None,
        "time": at,
    }
