"""The lobby: the games on offer, the public rooms, and live updates for clients watching it.

Room actors report every change of a public room here; watchers (optionally filtered by game)
get a ``lobby`` push with the changed summaries. The listing itself is read from Redis, so it
shows rooms of every server process sharing that Redis.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgpack

from playhall.store.redis_store import Store
from playhall_protocol import encode


class Watcher(Protocol):
    def push(self, frame: bytes, room: str | None = None) -> None: ...


class Lobby:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._watchers: dict[Watcher, str | None] = {}

    def watch(self, watcher: Watcher, game: str | None) -> None:
        self._watchers[watcher] = game

    def unwatch(self, watcher: Watcher) -> None:
        self._watchers.pop(watcher, None)

    async def rooms(self, game: str | None = None) -> list[dict[str, Any]]:
        summaries = [msgpack.unpackb(blob) for blob in await self.store.lobby()]
        if game is not None:
            summaries = [s for s in summaries if s["game"] == game]
        return sorted(summaries, key=lambda s: (s["status"] != "waiting", -s["created"]))

    def changed(self, room: str, summary: dict[str, Any] | None, game: str) -> None:
        """A public room changed (``summary``) or left the listing (``None``)."""
        message: dict[str, Any] = (
            {"t": "lobby", "rooms": [summary]}
            if summary is not None
            else {"t": "lobby", "removed": [room]}
        )
        frame = encode(message)
        for watcher, wanted in self._watchers.items():
            if wanted is None or wanted == game:
                watcher.push(frame)
