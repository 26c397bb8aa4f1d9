"""A player's own rooms, as their lobby's "Your games" shows them (``my_rooms``): each room where
they hold a seat or that they created, with its game, the people at the table, its status and
whom it waits for, private rooms included.

Read without taking a room: a room this process holds gives its record as it is; any other is
read from Redis (its last checkpoint and the log entries since, replayed through the engine: at
most ``checkpoint_every`` steps), so asking never loads a room, never starts its timers (an
away player's stand-in) and works for rooms other processes hold.
"""

from __future__ import annotations

from typing import Any, Final

from playhall import log
from playhall.catalog import get_game
from playhall.rooms import views
from playhall.rooms.manager import RoomManager
from playhall.rooms.record import FINISHED, RoomRecord
from playhall.rooms.replay import replay
from playhall.store.rooms import LogGap

logger = log.get("playhall.rooms")

#: The most rooms one answer lists (the lobby's page size).
MOST: Final = 50


async def my_rooms(manager: RoomManager, player: str) -> list[dict[str, Any]]:
    """``player``'s rooms: unfinished ones first, then newest first, at most :data:`MOST`."""
    records = []
    for room_id in await manager.store.players.player_rooms(player):
        record = await _current(manager, room_id)
        if record is not None:
            records.append(record)
    records.sort(key=lambda r: (r.status == FINISHED, -r.created, r.id))
    summaries = []
    for record in records[:MOST]:
        game = get_game(record.game)
        if game is not None:
            summaries.append(views.my_summary(record, game, player))
    return summaries


async def _current(manager: RoomManager, room_id: str) -> RoomRecord | None:
    """The room's record as it is now, or None if it is gone (or its game is not offered)."""
    held = manager.rooms.get(room_id)
    if held is not None:
        return held.record
    for _ in range(2):  # a commit between the two reads of ``load`` shows as a gap: once more
        try:
            stored = await manager.store.rooms.load(room_id)
        except LogGap:
            continue
        if stored is None:
            return None
        record = RoomRecord.unpack(stored.record)
        game = get_game(record.game)
        if game is None:
            return None
        try:
            return replay(record, game, stored.since)
        except Exception:  # damaged: whoever loads the room says so; here, the checkpoint
            logger.warning("my_rooms_replay_failed", room=room_id)
            return record
    return None
