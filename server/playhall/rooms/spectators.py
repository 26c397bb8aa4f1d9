"""The spectator delay: under the room option ``spectator_delay`` (N, default 0; see
``rooms.room_options``) spectators see the game N versions behind the live table while it is
played, so someone watching cannot relay a live table to a player.

While the room's game is being played, the view of spectators (the viewer key None) at version
v is the room as it was at version v − N, with that version's events; seated players see the
live room. Before the game starts nothing is hidden and nothing is delayed; once it is over
everything is public (the ``record`` request gives it all), so the delay is flushed: the
spectators' frame of the version that ends the game is the live view, with the events of every
version they had not yet been shown.

The room keeps the records (and events) of its last N + 1 versions to show them. A room loaded
anew (a restart, or another process taking it over) has none from before it was loaded: until
N versions have passed, spectators see the room with the game withheld (no state, no clocks,
no deadline), never a newer one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from playhall.games.contract import Event, Game
from playhall.rooms import room_options, views
from playhall.rooms.record import PLAYING, RoomRecord


def delay_of(record: RoomRecord) -> int:
    """The room's delay in versions."""
    return room_options.spectator_delay(record.options)


def delayed(record: RoomRecord) -> bool:
    """Whether spectators see ``record`` later than its players: a delay, and a game on."""
    return record.status == PLAYING and delay_of(record) > 0


def newest_shown(record: RoomRecord) -> int:
    """The newest version spectators may see of a room at ``record``."""
    return record.version - delay_of(record) if delayed(record) else record.version


class SpectatorDelay:
    """The recent records and events of one room, and what its spectators are shown of them."""

    __slots__ = ("_held", "_memo")

    def __init__(self) -> None:
        self._held: dict[int, tuple[RoomRecord, list[Event]]] = {}
        self._memo = views.ViewMemo()  # the delayed views' own: the live views keep theirs

    def note(self, record: RoomRecord, events: list[Event]) -> list[Event]:
        """Hold ``record``, the room's newest version, with its ``events``; return the events
        spectators are shown with it: ``events`` itself when nothing is delayed, the events of
        version v − N while the game is played, and all the events not yet shown when this
        version ends the game (the delay flushed)."""
        delay = delay_of(record)
        if delay <= 0:
            if self._held:
                self._held.clear()
            return events
        version = record.version
        self._held[version] = (record, events)
        for old in [v for v in self._held if v < version - delay]:
            del self._held[old]
        if record.status == PLAYING:
            shown = self._held.get(version - delay)
            return [] if shown is None else shown[1]
        before = self._held.get(version - 1)
        if before is None or before[0].status != PLAYING:
            return events  # nothing was delayed before this version
        # Spectators were last shown version - 1 - N: this frame brings everything after it.
        return [e for v in sorted(self._held) if v > version - 1 - delay for e in self._held[v][1]]

    def view(self, record: RoomRecord, game: Game) -> dict[str, Any]:
        """The spectators' view of a room at ``record``, which :func:`delayed` says is delayed:
        the view of version v − N, or the room with its game withheld if that is not held."""
        version = record.version
        if version not in self._held:
            self._held[version] = (record, [])  # a version seen before any was noted (a load)
        shown = self._held.get(version - delay_of(record))
        if shown is None:
            withheld = replace(record, state=None, clocks=None, deadline=None)
            return views.room_view(withheld, game, None, views.ViewMemo())
        return views.room_view(shown[0], game, None, self._memo)
