"""The lobby: the games on offer, the public rooms a page at a time, and live updates for
clients watching it.

Listing: Redis keeps a summary per listed room and, per game, an index of the listed rooms in
listing order (:func:`lobby_order`; see store/lobby.py). A page reads at most
``limit + 1`` index entries of each game and ``limit`` summaries, so a request costs the same
with ten rooms or a hundred thousand; the listing shows rooms of every server process sharing
that Redis.

Watching: room actors report every change of a public room here (:meth:`Lobby.changed`), and
so, through Redis, does every other process sharing the listing (:meth:`Lobby.heard`, fed by
``playhall.lobby_feed``, which this process's own changes are published through). Changes are
gathered and sent at most once per ``lobby_interval`` seconds to each watcher (the first change
after a quiet spell at once), each push carrying at most ``lobby_page`` rooms, so what a watcher
receives per second does not grow with the number of rooms: past that, the push says ``more``
and the watcher reads the listing again. When changes may have been missed (the feed's link to
Redis was lost), :meth:`Lobby.refresh` pushes each watcher the listing's first page as it is
now, with ``more``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import msgpack

from playhall.catalog import all_games
from playhall.store.redis_store import Store
from playhall_protocol import encode


def lobby_order(summary: dict[str, Any]) -> str:
    """The room's place in the lobby, as a string that sorts as the lobby lists: waiting rooms
    first, then newest first, then by id. The lobby's index holds these (one sorted set per
    game, read a page at a time), and a page's cursor is the last one it listed."""
    rank = "0" if summary["status"] == "waiting" else "1"
    newest_first = 10**13 - round(summary["created"] * 1000)
    return f"{rank}{newest_first:013d}:{summary['room']}"


class Watcher(Protocol):
    def push(self, frame: bytes, room: str | None = None) -> None: ...


class Lobby:
    def __init__(self, store: Store, page: int = 50, interval: float = 1.0) -> None:
        self.store = store
        self.page = page
        self.interval = interval
        self._watchers: dict[Watcher, str | None] = {}
        #: Changes not yet pushed: room id -> (game, summary or None when it left the listing).
        self._pending: dict[str, tuple[str, dict[str, Any] | None]] = {}
        self._flush: asyncio.TimerHandle | asyncio.Handle | None = None
        self._flushed_at = 0.0
        #: Where this process's own changes go to reach the other processes (set by the feed,
        #: ``playhall.lobby_feed``; None: this process alone hears of them).
        self.publish: Callable[[str, dict[str, Any] | None, str], None] | None = None

    def watch(self, watcher: Watcher, game: str | None) -> None:
        self._watchers[watcher] = game

    def unwatch(self, watcher: Watcher) -> None:
        self._watchers.pop(watcher, None)

    async def rooms(
        self, game: str | None = None, after: str = "", limit: int | None = None
    ) -> dict[str, Any]:
        """A page of the listing: ``rooms`` (summaries, waiting rooms first, then newest
        first) and ``next``, the cursor of the following page (None after the last)."""
        count = self.page if limit is None else max(1, min(limit, self.page))
        games = list(all_games()) if game is None else [game] if game in all_games() else []
        blobs, cursor = await self.store.lobby.lobby_page(games, after, count)
        return {"rooms": [msgpack.unpackb(blob) for blob in blobs], "next": cursor}

    def changed(self, room: str, summary: dict[str, Any] | None, game: str) -> None:
        """A public room of this process changed (``summary``) or left the listing (``None``),
        as stored: its watchers hear of it, and so, through Redis, every other process's."""
        if self.publish is not None:
            self.publish(room, summary, game)
        self.heard(room, summary, game)

    def heard(self, room: str, summary: dict[str, Any] | None, game: str) -> None:
        """A public room changed (``summary``) or left the listing (``None``): pushed to the
        watchers with the other changes of the interval."""
        self._pending[room] = (game, summary)
        if self._flush is None:
            wait = max(0.0, self._flushed_at + self.interval - time.monotonic())
            self._flush = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Push the changes gathered since the last flush: one frame per game filter."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self._flushed_at = time.monotonic()
        pending, self._pending = self._pending, {}
        frames: dict[str | None, bytes | None] = {}
        for watcher, wanted in self._watchers.items():
            if wanted not in frames:
                frames[wanted] = self._frame(pending, wanted)
            frame = frames[wanted]
            if frame is not None:
                watcher.push(frame)

    async def refresh(self) -> None:
        """Push every watcher the first page of its listing as it is now, saying ``more``: the
        changes of a while may have been missed, and the rest of the listing is the client's
        to read again (``rooms``). One page read per game filter in use."""
        pages: dict[str | None, bytes] = {}
        for wanted in set(self._watchers.values()):
            rooms = (await self.rooms(wanted))["rooms"]
            message: dict[str, Any] = {"t": "lobby"}
            if rooms:
                message["rooms"] = rooms
            message["more"] = True
            pages[wanted] = encode(message)
        for watcher, wanted in list(self._watchers.items()):
            frame = pages.get(wanted)
            if frame is not None:  # (a watcher that came or changed filter meanwhile has its
                watcher.push(frame)  # page from its own lobby.watch)

    def _frame(
        self, pending: dict[str, tuple[str, dict[str, Any] | None]], wanted: str | None
    ) -> bytes | None:
        """The push for watchers of ``wanted`` (None: every game): changed rooms in listing
        order, then rooms gone, ``page`` of them at most; None if none concerns them."""
        changed: list[dict[str, Any]] = []
        removed: list[str] = []
        for room, (game, summary) in pending.items():
            if wanted is None or wanted == game:
                if summary is None:
                    removed.append(room)
                else:
                    changed.append(summary)
        total = len(changed) + len(removed)
        if not total:
            return None
        changed.sort(key=lobby_order)
        changed = changed[: self.page]
        removed = removed[: self.page - len(changed)]
        message: dict[str, Any] = {"t": "lobby"}
        if changed:
            message["rooms"] = changed
        if removed:
            message["removed"] = removed
        if len(changed) + len(removed) < total:
            message["more"] = True
        return encode(message)
