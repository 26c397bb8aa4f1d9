"""One lobby across processes: every change of the listing, made by whichever process holds the
room, reaches the ``lobby.watch``ers of every process sharing the Redis.

Out: each change this process makes (a room listed, changed or unlisted, once stored) is
published on the channel ``<prefix>lobby:changes`` (``store.lobby.LobbyStore.publish``: the
command pipe, in the same write as the commits of the loop pass) as a msgpack array ``[origin,
room, game, summary or nil]``; ``origin`` is a token drawn at start, so a process knows its own
changes when they come back and does not push them twice (it pushed them already).

In: the channel is one of the bus's (``store.bus``, the process's one subscribed connection);
each change from another process goes to :meth:`Lobby.heard`, which pushes it exactly as a
change of this process's own rooms. Pub/sub delivers a message only to the subscribers
connected when it is published: a change published while the subscription is down is lost to
this process. So whenever the bus subscribes again, the watchers are brought up to date
(:meth:`Lobby.refresh`: the first page as it is now, with ``more``).
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import msgpack

from playhall import log
from playhall.lobby import Lobby
from playhall.store.bus import RETRY_FIRST, RETRY_LAST, Bus
from playhall.store.outage import failure_of, is_store_error
from playhall.store.redis_store import Store
from playhall.tasks import Tasks, pause

logger = log.get("playhall.lobby")


class LobbyFeed:
    def __init__(self, store: Store, lobby: Lobby, bus: Bus) -> None:
        self.store = store
        self.lobby = lobby
        self.bus = bus
        self.channel = store.keys.lobby_changes.encode()
        #: This process's mark on what it publishes (random each start: two processes given
        #: one instance name by mistake still tell their changes apart).
        self.origin = secrets.token_hex(8)
        #: Messages on the channel that were not changes (dropped; the first is logged).
        self.strangers = 0
        self._publishing: set[asyncio.Future[Any]] = set()
        self._refreshing = Tasks("lobby refresh", logger)
        lobby.publish = self.publish

    # -- out -------------------------------------------------------------------------------------

    def publish(self, room: str, summary: dict[str, Any] | None, game: str) -> None:
        """Publish a change of this process's listing (called by :meth:`Lobby.changed`) on
        the bus, which publishes on the command pipe: it goes out in the same write as the
        commits of the loop pass, and after every command this process sent before it (on a
        Cluster, before it to the node of the lobby's slot). Not waited for: a publish that
        fails is lost to the other processes' watchers (the listing in Redis is right all the
        same; their next ``rooms`` read shows it)."""
        change = msgpack.packb([self.origin, room, game, summary])
        sent = asyncio.ensure_future(self.bus.publish(self.channel, change))
        self._publishing.add(sent)
        sent.add_done_callback(self._published)

    def _published(self, sent: asyncio.Future[Any]) -> None:
        self._publishing.discard(sent)
        failure_of(sent, "lobby publish", logger, self.store.outage)

    # -- in --------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on the channel (the bus is running already)."""
        self.bus.on_reconnect.append(self.resubscribed)
        await self.bus.subscribe(self.channel, self.on_message)

    async def stop(self) -> None:
        await self.bus.unsubscribe(self.channel)

    def resubscribed(self) -> None:
        """The bus subscribed again after a lost connection: changes published meanwhile never
        reached this process, so its watchers get the listing as it is now."""
        logger.warning("lobby_feed_resubscribed", subscriptions=self.bus.subscriptions)
        self._refreshing.spawn(self._refresh())

    async def _refresh(self) -> None:
        """:meth:`Lobby.refresh`, tried again while Redis cannot be read, backing off as the
        bus does between its own attempts."""
        wait = RETRY_FIRST
        while True:
            try:
                await self.lobby.refresh()
                return
            except Exception as exc:
                if not is_store_error(exc):
                    logger.exception("lobby_refresh_failed")
                    return
                self.store.outage.failed(exc, during="lobby refresh")
            await pause(wait)
            wait = min(wait * 2, RETRY_LAST)

    def on_message(self, data: Any) -> None:
        """One change from the channel: another process's goes to the lobby; this process's
        own, already pushed, and anything that is not a change (a stranger publishing on the
        channel), are dropped."""
        change = read_change(data)
        if change is None:
            self.strangers += 1
            if self.strangers == 1:  # logged once: a flood of them must not flood the log
                size = len(data) if isinstance(data, bytes) else None
                logger.warning("lobby_feed_bad_message", size=size)
            return
        origin, room, game, summary = change
        if origin != self.origin:
            self.lobby.heard(room, summary, game)


def read_change(data: Any) -> tuple[str, str, str, dict[str, Any] | None] | None:
    """A change as published (:meth:`LobbyFeed.publish`), or None if ``data`` is not one."""
    if not isinstance(data, bytes):
        return None
    try:
        change = msgpack.unpackb(data)
    except Exception:  # (msgpack raises several kinds for bytes that are not msgpack)
        return None
    if not (isinstance(change, list) and len(change) == 4):
        return None
    origin, room, game, summary = change
    if not (isinstance(origin, str) and isinstance(room, str) and isinstance(game, str)):
        return None
    if summary is not None and not (isinstance(summary, dict) and summary.get("room") == room):
        return None
    return origin, room, game, summary
