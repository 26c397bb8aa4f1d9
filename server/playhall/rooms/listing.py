"""A room's entry in the lobby's listing: the summary Redis holds for it, what each change of
the room makes of it, and the listing written outside a change (a room loaded again lists
itself; an evicted one leaves the listing).

The lobby lists public rooms with people in them, until they finish. The summary follows from
the room's seats and status only, so most changes (every move) leave it as it was, the very
same object: then neither Redis nor the lobby's watchers hear of it.
"""

from __future__ import annotations

from typing import Any

import msgpack

from playhall.lobby import Lobby, lobby_order
from playhall.rooms import views
from playhall.rooms.record import RoomRecord
from playhall.store.redis_store import Store


class Listing:
    __slots__ = ("title", "store", "lobby", "summary")

    def __init__(self, title: str, store: Store, lobby: Lobby) -> None:
        self.title = title
        self.store = store
        self.lobby = lobby
        #: The summary Redis holds (None: not listed). A room starts unlisted: a new one is
        #: stored unlisted, a loaded one lists itself again.
        self.summary: dict[str, Any] | None = None

    def after(self, old: RoomRecord, new: RoomRecord) -> dict[str, Any] | None:
        """The summary once ``new`` is stored in place of ``old``."""
        if new.seats is old.seats and new.status == old.status:
            return self.summary
        return views.lobby_entry(new, self.title)

    def changes(self, summary: dict[str, Any] | None) -> bool:
        # (A dict compares entry by entry even with itself: the identity test spares every move.)
        return summary is not self.summary and summary != self.summary

    def commit_fields(self, summary: dict[str, Any] | None) -> tuple[bytes | None, bool, str]:
        """What the commit that makes ``summary`` the room's carries for the listing: the new
        summary packed (None: unchanged or unlisted), whether the room leaves the listing, and
        its place in the lobby's order ("" when unchanged)."""
        previous = self.summary
        if not self.changes(summary):
            return None, False, ""
        unlist = summary is None and previous is not None
        listed = previous if unlist else summary
        packed = msgpack.packb(summary) if summary is not None else None
        return packed, unlist, lobby_order(listed) if listed is not None else ""

    def adopt(self, record: RoomRecord, summary: dict[str, Any] | None) -> None:
        """``summary``, stored with ``record``, is the room's; the lobby's watchers hear of a
        change."""
        if self.changes(summary):
            self.lobby.changed(record.id, summary, record.game)
        self.summary = summary

    async def write(self, record: RoomRecord, lease: str, summary: dict[str, Any] | None) -> None:
        """Make the room's listing ``summary`` (None: unlisted), outside a change."""
        entry = summary if summary is not None else views.lobby_summary(record, "")
        written = await self.store.lobby.set_listing(
            record.id,
            record.game,
            lease,
            msgpack.packb(summary) if summary is not None else None,
            lobby_order(entry),
        )
        if written and summary != self.summary:
            self.lobby.changed(record.id, summary, record.game)
        self.summary = summary

    async def unlist(self, record: RoomRecord, lease: str) -> None:
        """Leave the listing, if listed (the room was evicted: nobody viewed it for
        ``idle_evict``, or the process is draining; or it was discarded). A waiting room whose
        people all went away does not stay listed; loading it again lists it again."""
        if self.summary is not None:
            await self.write(record, lease, None)
