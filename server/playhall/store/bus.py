"""Redis pub/sub for the fleet: the channels this process listens on, and publishing.

Pub/sub needs a connection of its own (a subscribed connection takes no other command), so
the bus keeps one redis-py ``PubSub`` and one reader task that hands every message to the
handler of its channel. Publishing goes through the store's command pipe (``store/pipe.py``):
one connection, so what this process publishes to a channel arrives in the order it was
published, and every publish of a loop pass leaves in one write.

Pub/sub delivers at most once: a message published while the subscriber's connection is down
is lost. When the reader's connection fails it connects again, subscribes to every channel
again and then calls ``on_reconnect``, so the users of the bus can repair from what is
durable (the fleet asks for fresh snapshots; see ``playhall.fleet``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis

from playhall import log
from playhall.store.outage import Outage, is_store_error
from playhall.store.pipe import CommandPipe

logger = log.get("playhall.bus")

Handler = Callable[[bytes], None]


class Bus:
    def __init__(self, client: aioredis.Redis, pipe: CommandPipe, outage: Outage) -> None:
        self._client = client
        self._pipe = pipe
        self._outage = outage
        self._handlers: dict[bytes, Handler] = {}
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        #: Called (with no argument) after the reader connected again: messages sent while it
        #: was away are lost.
        self.on_reconnect: Callable[[], None] | None = None
        #: Set once the reader's first connection subscribed to every channel asked so far.
        self.ready = asyncio.Event()

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

    def start(self) -> None:
        """Start reading (after the first :meth:`subscribe`: a subscriber needs a channel)."""
        assert self._handlers, "subscribe to a channel first"
        self._task = asyncio.get_running_loop().create_task(self._read_forever(), name="bus")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self._pubsub is not None:
            try:
                await self._pubsub.aclose()
            except Exception as exc:
                if not is_store_error(exc):
                    raise

    async def _read_forever(self) -> None:
        first = True
        while True:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._handlers)
                # redis-py connects the subscriber again by itself after a short failure and
                # subscribes again: messages may have been lost meanwhile, so say so.
                connection = pubsub.connection
                assert connection is not None  # connected by the subscribe
                connection.register_connect_callback(self._reconnected)
                self._pubsub = pubsub
                if first:
                    self.ready.set()
                else:
                    self._reconnected(None)
                first = False
                await self._read(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_store_error(exc):
                    logger.exception("bus_failed")
                else:
                    self._outage.failed(exc, during="pub/sub")
            self._pubsub = None
            try:
                await pubsub.aclose()
            except Exception:  # a connection already broken
                pass
            if first:
                self.ready.set()  # nothing to wait for: it subscribes once Redis is back
                first = False
            await asyncio.sleep(0.2)

    def _reconnected(self, _connection: Any) -> None:
        logger.warning("bus_reconnected", channels=len(self._handlers))
        if self.on_reconnect is not None:
            self.on_reconnect()

    async def _read(self, pubsub: Any) -> None:
        handlers = self._handlers
        while True:
            message = await pubsub.get_message(timeout=None)
            if message is None or message["type"] != "message":
                continue
            handler = handlers.get(message["channel"])
            if handler is None:
                continue
            try:
                handler(message["data"])
            except Exception:  # one bad message must not stop the reader
                logger.exception("bus_message_failed", channel=message["channel"])
