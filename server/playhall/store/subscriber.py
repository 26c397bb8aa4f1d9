"""One subscribed connection to Redis (each of the bus's: ``store.bus``), read in an asyncio
protocol: what Redis sends is parsed by hiredis in ``data_received``, and each message is handed
on from there as it comes, with no task woken for it.

Why not redis-py's ``PubSub``: its read path (a stream reader, a timeout context and several
coroutines awaited per message, the reader's task woken for each) cost some 100,000 to 150,000
instructions per message received, more than the handler that then unpacks and acts on it
(``bench/fleet_path.py``; the command pipe, ``store/pipe.py``, reads its replies the same way for
the same reason).

Before it subscribes a connection is a plain one: ``AUTH`` and ``SELECT`` as the URL asks
(``store.dial``), ``CLIENT SETNAME``, and whatever the bus asks (``ROLE``) are answered in
order. Subscribed, Redis still answers each command in the order it got them (a ``SUBSCRIBE``,
``SSUBSCRIBE``, ``UNSUBSCRIBE`` or ``SUNSUBSCRIBE`` with one confirmation per channel, a
``PING`` with ``pong``, a refused command with its error), and messages come in between: a
message is told from an answer by its first word. On a Cluster a node also sends an
``sunsubscribe`` of its own when a channel's slot leaves it; one this connection did not ask
for is handed to ``dropped``.

A connection fails as a whole: lost, a command unanswered within the deadline, an error reply
to a command nobody waits for, or ``dropped`` raising. Every command waiting then fails
(``ConnectionError``, or :class:`~playhall.store.dial.CommandTimeout` for the late one), and
:attr:`Subscriber.closed` is set to the reason, so the one owner of the connection (the bus's
link) decides what follows.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, cast

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from playhall.eventloop import Transport
from playhall.store.dial import CommandTimeout, Dial
from playhall.store.pipe import encode_command

#: Gets a message's channel and payload, in the read callback: must not raise or block.
Deliver = Callable[[bytes, bytes], None]


class _Asked:
    """A command sent: the replies it is owed, and who waits for them (None: nobody, and an
    error reply fails the connection)."""

    __slots__ = ("future", "owed", "replies")

    def __init__(self, future: asyncio.Future[Any] | None, owed: int) -> None:
        self.future = future
        self.owed = owed
        self.replies: list[Any] = []


class Subscriber(asyncio.Protocol):
    """A connection that subscribes to channels and hands their messages to ``deliver``."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, name: str, *, sharded: bool, deliver: Deliver,
        dropped: Callable[[bytes], None], timeout: float,
    ) -> None:
        self.loop = loop
        #: Its name in Redis's CLIENT LIST.
        self.name = name
        self.sharded = sharded
        #: The first word of a message: ``smessage`` for sharded pub/sub.
        self.kind = b"smessage" if sharded else b"message"
        self.deliver = deliver
        #: Called with a channel the node unsubscribed this connection from by itself; raising
        #: fails the connection with what it raised.
        self.dropped = dropped
        #: Seconds Redis may take to answer a command.
        self.timeout = timeout
        self.reader = hiredis.Reader(replyError=ResponseError)
        self.transport: Transport | None = None
        self._asked: deque[_Asked] = deque()
        #: SUNSUBSCRIBEs sent whose confirmation has not come yet, by channel (one that comes
        #: when none is owed is the node's own).
        self._leaving: Counter[bytes] = Counter()
        #: When Redis last sent anything (the loop's clock).
        self.heard_at = loop.time()
        #: Why the connection failed, once it did.
        self.reason: Exception | None = None
        #: Set to the reason once the connection is closed.
        self.closed: asyncio.Future[Exception] = loop.create_future()

    @classmethod
    async def open(
        cls, dial: Dial, name: str, *, sharded: bool, deliver: Deliver,
        dropped: Callable[[bytes], None],
    ) -> Subscriber:
        """A connection to the Redis ``dial`` names, logged in and named ``name``."""
        loop = asyncio.get_running_loop()
        connection = await dial.connect(lambda: cls(
            loop, name, sharded=sharded, deliver=deliver, dropped=dropped, timeout=dial.timeout,
        ))
        try:
            await asyncio.gather(*(connection.call(*command) for command in [
                *dial.login(), [b"CLIENT", b"SETNAME", name.encode()],
            ]))
        except BaseException:
            connection.close()
            raise
        return connection

    # -- commands ----------------------------------------------------------------------------

    async def call(self, *args: bytes, replies: int = 1) -> Any:
        """Send a command and wait for its reply (its ``replies`` replies, as a list, when it
        is owed more than one); the ``ResponseError`` Redis answers with is raised. Unanswered
        within the deadline: :class:`CommandTimeout`, and the connection is failed (a reply
        that comes after could no longer be told from the next command's)."""
        future = self.loop.create_future()
        self._send(args, _Asked(future, replies))
        try:
            async with asyncio.timeout(self.timeout):
                return await future
        except TimeoutError:
            late = CommandTimeout(f"Redis did not answer within {self.timeout:g} s")
            self.close(late)
            raise late from None

    async def subscribe(self, channels: list[bytes]) -> None:
        """Subscribe to ``channels`` (of one hash slot on a Cluster), confirmed. Refused (a
        node that does not serve their slot answers ``MOVED``): the connection is failed, and
        the error raised."""
        try:
            await self.call(b"SSUBSCRIBE" if self.sharded else b"SUBSCRIBE", *channels,
                            replies=len(channels))
        except ResponseError as refused:
            self.close(refused)
            raise

    def unsubscribe(self, channel: bytes) -> None:
        """Unsubscribe from ``channel``, its confirmation not waited for (messages Redis sent
        before it had the command still come)."""
        if self.sharded:
            self._send((b"SUNSUBSCRIBE", channel), _Asked(None, 1))
            self._leaving[channel] += 1
        else:
            self._send((b"UNSUBSCRIBE", channel), _Asked(None, 1))

    def _send(self, args: tuple[bytes, ...], asked: _Asked) -> None:
        transport = self.transport
        if self.reason is not None or transport is None or transport.is_closing():
            raise RedisConnectionError(f"the subscribed connection is closed: {self.reason}")
        self._asked.append(asked)
        transport.write(encode_command(list(args)))

    def close(self, reason: Exception | None = None) -> None:
        """Drop the connection (for ``reason``: otherwise, closed on purpose)."""
        if self.reason is None:
            self.reason = reason or RedisConnectionError("the subscribed connection was closed")
        if self.transport is not None:
            self.transport.abort()  # a Redis that stopped reading would keep close() waiting

    # -- the protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self.reason is not None:
            return  # failed: what is left is not read
        reader = self.reader
        reader.feed(data)
        kind = self.kind
        deliver = self.deliver
        while (reply := reader.gets()) is not False:
            if type(reply) is list and reply[0] == kind:
                deliver(reply[1], reply[2])
                continue
            self._answer(reply)
            if self.reason is not None:
                return
        self.heard_at = self.loop.time()

    def _answer(self, reply: Any) -> None:
        """A reply that is not a message: the next answer owed, or the node's own
        unsubscribe."""
        if type(reply) is list and reply[0] == b"sunsubscribe" and not self._left(reply[1]):
            try:
                self.dropped(reply[1])
            except Exception as exc:
                self.close(exc)
            return
        if not self._asked:
            return  # (nothing was asked: nothing such is sent, and it is not anybody's)
        asked = self._asked[0]
        future = asked.future
        if isinstance(reply, ResponseError):
            self._asked.popleft()  # an error is a command's only reply
            if future is None:
                self.close(reply)
            elif not future.done():
                future.set_exception(reply)
            return
        asked.replies.append(reply)
        if len(asked.replies) < asked.owed:
            return
        self._asked.popleft()
        if future is not None and not future.done():  # (done: given up at its deadline)
            future.set_result(reply if asked.owed == 1 else asked.replies)

    def _left(self, channel: bytes) -> bool:
        """Whether an ``sunsubscribe`` of ``channel`` confirms one this connection sent."""
        owed = self._leaving.get(channel, 0)
        if owed > 1:
            self._leaving[channel] = owed - 1
        elif owed:
            del self._leaving[channel]
        return owed > 0

    def connection_lost(self, exc: Exception | None) -> None:
        if self.reason is None:
            self.reason = RedisConnectionError(f"connection to Redis lost: {exc}")
        lost = RedisConnectionError(f"the subscribed connection failed: {self.reason}")
        asked, self._asked = self._asked, deque()
        for each in asked:
            if each.future is not None and not each.future.done():
                each.future.set_exception(lost)
        if not self.closed.done():
            self.closed.set_result(self.reason)
