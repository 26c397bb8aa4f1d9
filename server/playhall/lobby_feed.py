"""One lobby across processes: every change of the listing, made by whichever process holds the
room, reaches the ``lobby.watch``ers of every process sharing the Redis.

Out: each change this process makes (a room listed, changed or unlisted, once stored) is
published on the channel ``<prefix>lobby:changes`` (``store.lobby.LobbyStore.publish``: the
command pipe, in the same write as the commits of the loop pass) as a msgpack array ``[origin,
room, game, summary or nil]``; ``origin`` is a token drawn at start, so a process knows its own
changes when they come back and does not push them twice (it pushed them already).

In: one connection of its own (a subscribed connection can do nothing else), redis-py's
asyncio ``PubSub``, subscribed to the channel; each change from another process goes to
:meth:`Lobby.heard`, which pushes it exactly as a change of this process's own rooms.

Pub/sub delivers a message only to the subscribers connected when it is published: a change
published while the subscription is down is lost to this process. So whenever the subscription
is (re)made, and redis-py may remake it by itself after a dropped connection, which shows as a
new subscribe confirmation, the watchers are brought up to date (:meth:`Lobby.refresh`: the
first page as it is now, with ``more``). A connection that goes silent without closing is found
by a PING whenever nothing came for a while: no answer within the Redis deadline, and it is
dropped and made again.

The connection is the feed's own for now; on a subscriber shared with other channels,
:meth:`LobbyFeed.on_message` is the channel's handler and :meth:`LobbyFeed.on_subscribed` what
runs after each (re)subscription, and :meth:`LobbyFeed.publish` stays as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from typing import Any

import msgpack
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub

from playhall import log
from playhall.lobby import Lobby
from playhall.store.outage import is_store_error
from playhall.store.redis_store import Store

logger = log.get("playhall.lobby")

#: Seconds between reconnection attempts, doubling from the first to the last.
RETRY_FIRST, RETRY_LAST = 0.05, 2.0


class LobbyFeed:
    def __init__(
        self, url: str, store: Store, lobby: Lobby, *, name: str, timeout: float,
        quiet: float = 5.0,
    ) -> None:
        self.url = url
        self.store = store
        self.lobby = lobby
        self.channel = store.keys.lobby_changes.encode()
        #: This process's mark on what it publishes (random each start: two processes given
        #: one instance name by mistake still tell their changes apart).
        self.origin = secrets.token_hex(8)
        #: The subscribed connection's name in CLIENT LIST (operators, and the tests, find it).
        self.name = name
        #: Seconds Redis may take to answer the PING, and to (re)connect.
        self.timeout = timeout
        #: Seconds without any message before the connection is asked whether it is alive.
        self.quiet = quiet
        #: Subscriptions made so far (the first at start; each one after is a recovery).
        self.subscriptions = 0
        #: Set once subscribed (and the watchers brought up to date): ``start`` waits for it.
        self.subscribed = asyncio.Event()
        #: Messages on the channel that were not changes (dropped; the first is logged).
        self.strangers = 0
        self._task: asyncio.Task[None] | None = None
        self._publishing: set[asyncio.Future[Any]] = set()
        lobby.publish = self.publish

    # -- out -------------------------------------------------------------------------------------

    def publish(self, room: str, summary: dict[str, Any] | None, game: str) -> None:
        """Publish a change of this process's listing (called by :meth:`Lobby.changed`). Not
        waited for: a publish that fails is lost to the other processes' watchers (the listing
        in Redis is right all the same; their next ``rooms`` read shows it)."""
        change = msgpack.packb([self.origin, room, game, summary])
        sent = asyncio.ensure_future(self.store.lobby.publish(change))
        self._publishing.add(sent)
        sent.add_done_callback(self._published)

    def _published(self, sent: asyncio.Future[Any]) -> None:
        self._publishing.discard(sent)
        if sent.cancelled():
            return
        exc = sent.exception()
        if exc is None:
            return
        if is_store_error(exc):
            self.store.outage.failed(exc, during="lobby publish")
        else:
            logger.error("lobby_publish_failed", error=repr(exc))

    # -- in --------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Subscribe, waiting up to the Redis deadline for the first subscription (then the
        process starts all the same: the subscription keeps being tried)."""
        self._task = asyncio.create_task(self._run(), name="lobby-feed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.subscribed.wait(), self.timeout)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        """Keep a subscription, remaking it whenever it is lost, for the life of the process:
        at once, then backing off while Redis stays away (an outage is logged once)."""
        wait = RETRY_FIRST
        failing = False
        while True:
            made = self.subscriptions
            client = aioredis.Redis.from_url(
                self.url,
                client_name=self.name,
                socket_connect_timeout=self.timeout,
                socket_timeout=self.timeout,
            )
            pubsub = client.pubsub(ignore_subscribe_messages=False)
            try:
                await pubsub.subscribe(self.channel)
                await self._listen(pubsub)  # returns only by raising
            except Exception as exc:
                if self.subscriptions > made:  # it worked for a while: a fresh outage
                    failing, wait = False, RETRY_FIRST
                if not failing:  # (told once, until a subscription is made again)
                    if is_store_error(exc) or isinstance(exc, TimeoutError):
                        logger.warning("lobby_feed_lost", error=repr(exc))
                    else:
                        logger.exception("lobby_feed_failed")
                failing = True
            finally:
                self.subscribed.clear()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_LAST)

    async def _listen(self, pubsub: PubSub) -> None:
        """Hand every message to the lobby until the connection fails (raises)."""
        loop = asyncio.get_running_loop()
        heard_at = loop.time()
        asked_at: float | None = None  # when the PING that is not answered yet went
        while True:
            message = await pubsub.get_message(timeout=self.quiet)
            now = loop.time()
            if message is None:
                if asked_at is None and now - heard_at >= self.quiet:
                    await pubsub.ping()
                    asked_at = now
                elif asked_at is not None and now - asked_at >= self.timeout:
                    raise TimeoutError("the lobby feed's connection did not answer a PING")
                continue
            heard_at, asked_at = now, None
            kind = message.get("type")
            if kind == "message":
                self.on_message(message.get("data"))
            elif kind == "subscribe":
                await self.on_subscribed()

    async def on_subscribed(self) -> None:
        """A subscription was made (at start, or again after a lost connection): changes
        published meanwhile never reach this process, so its watchers get the listing as it is
        now. Raises if Redis cannot be read (then the connection is made again, and so is
        this)."""
        self.subscriptions += 1
        if self.subscriptions > 1:
            logger.warning("lobby_feed_resubscribed", subscriptions=self.subscriptions)
        await self.lobby.refresh()
        self.subscribed.set()

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


def client_name(instance: str) -> str:
    """The feed connection's name in Redis's CLIENT LIST for the process ``instance`` (a
    client name takes no spaces: anything but printable ASCII becomes ``_``)."""
    return "playhall-lobby-feed:" + re.sub(r"[^!-~]", "_", instance)


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
