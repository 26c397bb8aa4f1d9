"""Redis pub/sub for the processes sharing one Redis: the channels this process listens on (the
fleet's, ``playhall.fleet``; the lobby's changes, ``playhall.lobby_feed``), and publishing.

Pub/sub needs a connection of its own (a subscribed connection takes no other command), so the
bus keeps one, named ``playhall-bus:<instance>`` in Redis's CLIENT LIST, with one reader task
that hands every message to the handler of its channel. Publishing goes through the store's
command pipe (``store/pipe.py``): one connection, so what this process publishes to a channel
arrives in the order it was published, and every publish of a loop pass leaves in one write.

Pub/sub delivers at most once: a message published while the subscriber's connection is down
is lost. Whenever the subscription is made again (the reader's connection failed and was made
again, or redis-py remade it by itself), every ``on_reconnect`` hook is called, so the users of
the bus repair from what is durable (the fleet syncs its rooms again, the lobby pushes its
watchers the listing as it is now). A connection that goes silent without closing is found by
a PING whenever nothing came for ``quiet`` seconds: no answer within the Redis deadline, and it
is dropped and made again. A lost connection is made again at once, then backing off while
Redis stays away; the loss is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis

from playhall import log
from playhall.store.outage import Outage, is_store_error
from playhall.store.pipe import CommandPipe

logger = log.get("playhall.bus")

Handler = Callable[[bytes], None]

#: Seconds between reconnection attempts, doubling from the first to the last.
RETRY_FIRST, RETRY_LAST = 0.05, 2.0


def client_name(instance: str) -> str:
    """The bus connection's name in Redis's CLIENT LIST for the process ``instance`` (a client
    name takes no spaces: anything but printable ASCII becomes ``_``)."""
    return "playhall-bus:" + re.sub(r"[^!-~]", "_", instance)


class Bus:
    def __init__(
        self, url: str, pipe: CommandPipe, outage: Outage, *, name: str, timeout: float,
        quiet: float = 5.0,
    ) -> None:
        self.url = url
        self._pipe = pipe
        self._outage = outage
        #: The subscribed connection's name in CLIENT LIST (operators, and the tests, find it).
        self.name = name
        #: Seconds Redis may take to answer the PING, and to (re)connect.
        self.timeout = timeout
        #: Seconds without any message before the connection is asked whether it is alive.
        self.quiet = quiet
        self._handlers: dict[bytes, Handler] = {}
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        #: Called (with no argument) after the subscription was made again: messages sent
        #: while it was away are lost.
        self.on_reconnect: list[Callable[[], None]] = []
        #: Set once the first connection subscribed to every channel asked so far.
        self.ready = asyncio.Event()
        #: Subscriptions made so far (the first at start; each one after is a recovery).
        self.subscriptions = 0
        #: Gets (channel, message) of a channel no handler is left for: one unsubscribed
        #: just now, whose message Redis delivered before it had the UNSUBSCRIBE (so the
        #: publisher counted this process as a listener, and must get an answer).
        self.fallback: Callable[[bytes, bytes], None] | None = None
        #: redis-py made the subscribed connection again by itself (see _remade).
        self._remade_unseen = False

    def publish(self, channel: bytes, payload: bytes) -> Awaitable[Any]:
        """Publish ``payload``; awaited, the number of subscribers that got it (0: nobody
        listens on ``channel``)."""
        return self._pipe.call(b"PUBLISH", channel, payload)

    def numsub(self, channels: list[bytes]) -> Awaitable[Any]:
        """``PUBSUB NUMSUB``: awaited, a flat list of channel, subscriber count, ..."""
        return self._pipe.call(b"PUBSUB", b"NUMSUB", *channels)

    async def subscribe(self, channel: bytes, handler: Handler) -> None:
        """Hand every message of ``channel`` to ``handler`` from now on (in the reader's task:
        the handler must not block)."""
        self._handlers[channel] = handler
        if self._pubsub is not None:
            try:
                await self._pubsub.subscribe(channel)
            except Exception as exc:  # the reader reconnects and subscribes to it then
                if not is_store_error(exc):
                    raise
                self._outage.failed(exc, during="subscribe")

    async def unsubscribe(self, channel: bytes) -> None:
        if self._handlers.pop(channel, None) is None or self._pubsub is None:
            return
        try:
            await self._pubsub.unsubscribe(channel)
        except Exception as exc:  # gone with the connection anyway
            if not is_store_error(exc):
                raise

    def listening(self, channel: bytes) -> bool:
        return channel in self._handlers

    async def start(self) -> None:
        """Start reading (after the first :meth:`subscribe`: a subscriber needs a channel),
        waiting up to the Redis deadline for the first subscription (then the process starts
        all the same: the subscription keeps being tried)."""
        assert self._handlers, "subscribe to a channel first"
        self._task = asyncio.get_running_loop().create_task(self._run(), name="bus")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), self.timeout)

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
                self.url, client_name=self.name,
                socket_connect_timeout=self.timeout, socket_timeout=self.timeout,
            )
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._handlers)
                connection = pubsub.connection
                assert connection is not None  # connected by the subscribe
                # redis-py connects the subscriber again by itself after a short failure and
                # subscribes again: messages may have been lost meanwhile, so that is told too.
                connection.register_connect_callback(self._remade)
                self._pubsub = pubsub
                self._remade_unseen = False
                self._subscribed()
                await self._listen(pubsub)  # returns only by raising
            except Exception as exc:
                if self.subscriptions > made:  # it worked for a while: a fresh outage
                    failing, wait = False, RETRY_FIRST
                if not failing:  # (told once, until a subscription is made again)
                    if is_store_error(exc) or isinstance(exc, TimeoutError):
                        self._outage.failed(exc, during="pub/sub")
                    else:
                        logger.exception("bus_failed")
                failing = True
            finally:
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_LAST)

    def _remade(self, _connection: Any) -> None:
        # Told once the reader reads on (redis-py may still raise the failure after making the
        # connection again, and then the next subscription, made anew, is the one told).
        self._remade_unseen = True

    def _subscribed(self) -> None:
        """A subscription was made: the first, or again after a lost connection (then every
        ``on_reconnect`` hook is told)."""
        self.subscriptions += 1
        if self.subscriptions == 1:
            self.ready.set()
            return
        logger.warning("bus_reconnected", channels=len(self._handlers),
                       subscriptions=self.subscriptions)
        for hook in list(self.on_reconnect):
            try:
                hook()
            except Exception:  # one user's bug must not keep the others from repairing
                logger.exception("bus_reconnect_hook_failed")

    async def _listen(self, pubsub: Any) -> None:
        """Hand every message to its channel's handler until the connection fails (raises)."""
        loop = asyncio.get_running_loop()
        handlers = self._handlers
        heard_at = loop.time()
        asked_at: float | None = None  # when the PING that is not answered yet went
        while True:
            message = await pubsub.get_message(timeout=self.quiet)
            if self._remade_unseen:
                self._remade_unseen = False
                self._subscribed()
            now = loop.time()
            if message is None:
                if asked_at is None and now - heard_at >= self.quiet:
                    await pubsub.ping()
                    asked_at = now
                elif asked_at is not None and now - asked_at >= self.timeout:
                    raise TimeoutError("the bus's connection did not answer a PING")
                continue
            heard_at, asked_at = now, None
            if message.get("type") != "message":
                continue  # a PING's answer
            channel = message["channel"]
            handler = handlers.get(channel)
            try:
                if handler is not None:
                    handler(message["data"])
                elif self.fallback is not None:
                    self.fallback(channel, message["data"])
            except Exception:  # one bad message must not stop the reader
                logger.exception("bus_message_failed", channel=message["channel"])
