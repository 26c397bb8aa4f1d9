"""Redis pub/sub for the processes sharing one Redis or one Redis Cluster: the channels this
process listens on (the fleet's, ``playhall.fleet``; the lobby's changes,
``playhall.lobby_feed``), and publishing.

Pub/sub needs a connection of its own (a subscribed connection takes no other command), so the
bus keeps one, named ``playhall-bus:<instance>`` in Redis's CLIENT LIST, read in an asyncio
protocol (``store/subscriber.py``) that hands every message to the handler of its channel from
the read callback, in the order Redis sent them; a task per connection makes it, subscribes and
watches it. Publishing goes through the store's command pipe (``store/pipe.py``): one
connection, so what this process publishes to a channel arrives in the order it was published,
and the publishes of a loop pass leave in one write, except those another process waits on
(the fleet's requests and answers: ``publish_then``'s ``at_once`` and ``now``), which are
written by the call that makes them, on one Redis as on a Cluster.

On a Cluster the bus speaks sharded pub/sub: a channel lives in the hash slot of its name
(``SSUBSCRIBE``, ``SPUBLISH``, ``PUBSUB SHARDNUMSUB``, each sent to the primary of the
channel's slot), so a room's requests travel through the node that stores the room, not through
every node of the Cluster. The bus keeps one subscribed connection per primary that serves a
channel of this process's, and a publish's count is that node's subscribers only: 0 means
nobody listens on the channel there (the fleet then takes the room's lease, which a process
that does hold the room refuses: ``playhall.fleet.edge``). When a slot leaves its node (a
failover made the node a replica, which then drops its shard channels; or the node died), the
slot map is read again and the channels are subscribed on their new node.

Pub/sub delivers at most once: a message published while the subscriber's connection is down
(or, on a Cluster, before its channel was subscribed on the slot's new node) is lost. Whenever
a subscription is made again (its connection failed and was made again, or channels moved to
another node), every ``on_reconnect`` hook is called, so the users of the bus repair from what
is durable (the fleet syncs its rooms again, the lobby pushes its watchers the listing as it is
now). A connection that goes silent without closing is found by a PING whenever nothing came
for ``quiet`` seconds: no answer within the Redis deadline, and it is dropped and made again. A
lost connection is made again at once, then backing off while Redis stays away; the loss is
logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, Protocol

from redis.exceptions import RedisError

from playhall import log
from playhall.store.cluster_pipe import ClusterPipe, node_url
from playhall.store.dial import Dial
from playhall.store.outage import Outage, is_store_error
from playhall.store.pipe import Callback, CommandPipe, RedisPipe, then_of
from playhall.store.subscriber import Subscriber
from playhall.tasks import cancel_and_wait, pause

logger = log.get("playhall.bus")

Handler = Callable[[bytes], None]

#: Seconds between reconnection attempts, doubling from the first to the last.
RETRY_FIRST, RETRY_LAST = 0.05, 2.0


def client_name(instance: str) -> str:
    """The bus connection's name in Redis's CLIENT LIST for the process ``instance`` (a client
    name takes no spaces: anything but printable ASCII becomes ``_``)."""
    return "playhall-bus:" + re.sub(r"[^!-~]", "_", instance)


Address = tuple[str, int] | None
"""Where a subscribed connection goes: a Cluster node's host and port, None for the single
Redis."""


class _ChannelsMoved(Exception):
    """The node dropped channels this process still listens on: their slot is served
    elsewhere now (a failover made it a replica, or the slot was moved)."""


class _NotPrimary(Exception):
    """The node is a replica now (the slot map read was older than a failover). A replica
    takes SSUBSCRIBE and hands on its primary's messages, but neither SPUBLISH's count nor
    SHARDNUMSUB asked of the primary counts its subscribers: a subscription there would look
    like nobody listening."""


class Publisher(Protocol):
    """What a fleet's edge and owner use of a :class:`Bus`. They take it as this protocol so
    that, compiled, they accept any object that has these (the tests' stand-in buses): mypyc
    checks a parameter typed as a class with ``isinstance``."""

    def publish(self, channel: bytes, payload: bytes) -> Awaitable[Any]: ...

    def publish_then(
        self, channel: bytes, payload: bytes, then: Callback, at_once: bool = False,
        now: bool = False,
    ) -> None: ...

    def numsub(self, channels: list[bytes]) -> Awaitable[Any]: ...


class Bus:
    def __init__(
        self, url: str, pipe: CommandPipe, outage: Outage, *, name: str, timeout: float,
        quiet: float = 5.0,
    ) -> None:
        self.url = url
        self._pipe = pipe
        #: On a Cluster, its command pipe: its slot map names the node of each channel, and
        #: the bus speaks sharded pub/sub. None on a single Redis.
        self._cluster = pipe if isinstance(pipe, ClusterPipe) else None
        #: A single Redis's pipe, which answers ``publish_then`` from its read callback.
        self._single = pipe if isinstance(pipe, RedisPipe) else None
        if self._cluster is not None:
            self._cluster.on_map.append(self._follow_map)
        self._outage = outage
        #: The subscribed connections' name in CLIENT LIST (operators, and the tests, find it).
        self.name = name
        #: Seconds Redis may take to answer the PING, and to (re)connect.
        self.timeout = timeout
        #: Seconds without any message before the connection is asked whether it is alive.
        self.quiet = quiet
        self._handlers: dict[bytes, Handler] = {}
        #: The subscribed connections: one on a single Redis, one per node of a Cluster that
        #: serves a channel of this process's.
        self.links: dict[Address, _Link] = {}
        #: The link each channel is subscribed on (every channel with a handler, once started).
        self._holder: dict[bytes, _Link] = {}
        self._started = False
        #: Called (with no argument) after a subscription was made again: messages sent
        #: while it was away are lost.
        self.on_reconnect: list[Callable[[], None]] = []
        #: Set once the first connections subscribed to every channel asked so far.
        self.ready = asyncio.Event()
        #: Subscriptions made so far (the first at start; each one after is a recovery).
        self.subscriptions = 0
        #: Gets (channel, message) of a channel no handler is left for: one unsubscribed
        #: just now, whose message Redis delivered before it had the UNSUBSCRIBE (so the
        #: publisher counted this process as a listener, and must get an answer).
        self.fallback: Callable[[bytes, bytes], None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def on_commit_pipe(self) -> bool:
        """Whether the bus publishes on one Redis's command pipe, the one rooms commit on, so
        a publish and a commit keep the order they were made in (and a commit script's own
        PUBLISH reaches the bus's subscribers)."""
        return self._single is not None

    @property
    def sharded(self) -> bool:
        """Whether the bus speaks sharded pub/sub (SSUBSCRIBE, SPUBLISH): on a Cluster."""
        return self._cluster is not None

    def publish(self, channel: bytes, payload: bytes) -> Awaitable[Any]:
        """Publish ``payload``; awaited, the number of subscribers that got it (0: nobody
        listens on ``channel``; on a Cluster, nobody subscribed on the node of its slot)."""
        return self._pipe.call(b"SPUBLISH" if self.sharded else b"PUBLISH", channel, payload)

    def publish_then(
        self, channel: bytes, payload: bytes, then: Callback, at_once: bool = False,
        now: bool = False,
    ) -> None:
        """Publish ``payload``, and give ``then`` the number of subscribers that got it (or
        the error the publish failed with) as soon as Redis's answer is read (on a single
        Redis from the pipe's read callback: ``RedisPipe.call_then``; ``then`` must not block).
        ``at_once``, ``now``: the publish starts a path another process waits on, and is
        written as ``RedisPipe.call_then`` says (on a Cluster, to its channel's node; its
        answer, which only the publisher waits on, reaches ``then`` a loop pass after it is
        read)."""
        if self._single is not None:
            self._single.call_then(then, b"PUBLISH", channel, payload, at_once=at_once, now=now)
        elif self._cluster is not None:
            then_of(self._cluster.call_early(at_once, now, b"SPUBLISH", channel, payload), then)
        else:  # a stand-in pipe (the tests')
            then_of(self.publish(channel, payload), then)

    def numsub(self, channels: list[bytes]) -> Awaitable[Any]:
        """``PUBSUB NUMSUB``: awaited, a flat list of channel, subscriber count, ... (on a
        Cluster ``PUBSUB SHARDNUMSUB``, asked of the node of each channel's slot)."""
        if self._cluster is None:
            return self._pipe.call(b"PUBSUB", b"NUMSUB", *channels)
        return self._shard_numsub(channels)

    async def _shard_numsub(self, channels: list[bytes]) -> list[Any]:
        # One channel per call, each routed by its slot (all pipelined: one write per node).
        replies = await asyncio.gather(
            *(self._pipe.call(b"PUBSUB", b"SHARDNUMSUB", channel) for channel in channels)
        )
        return [word for reply in replies for word in reply]

    async def subscribe(self, channel: bytes, handler: Handler) -> None:
        """Hand every message of ``channel`` to ``handler`` from now on (from the connection's
        read callback: the handler must not block)."""
        self._handlers[channel] = handler
        if self._started and channel not in self._holder:
            await self._hold(channel).add(channel)

    async def unsubscribe(self, channel: bytes) -> None:
        if self._handlers.pop(channel, None) is None:
            return
        link = self._holder.pop(channel, None)
        if link is not None:
            link.remove(channel)

    def listening(self, channel: bytes) -> bool:
        return channel in self._handlers

    def handler(self, channel: bytes) -> Handler | None:
        return self._handlers.get(channel)

    async def start(self) -> None:
        """Start reading (after the first :meth:`subscribe`: a subscriber needs a channel),
        waiting up to the Redis deadline for the first subscriptions (then the process starts
        all the same: the subscriptions keep being tried)."""
        assert self._handlers, "subscribe to a channel first"
        self._started = True
        for channel in self._handlers:
            self._hold(channel).channels.add(channel)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), self.timeout)

    async def stop(self) -> None:
        self._started = False
        for task in list(self._tasks):
            task.cancel()
        for link in list(self.links.values()):
            await link.stop()
        self.links.clear()
        self._holder.clear()

    def _hold(self, channel: bytes) -> _Link:
        """The link ``channel`` goes on (its slot's node's on a Cluster), made and started if
        there is none yet; the channel is noted as held by it."""
        address = None if self._cluster is None else self._cluster.node_of(channel)
        link = self.links.get(address)
        if link is None:
            link = self.links[address] = _Link(self, address)
            link.start()
        self._holder[channel] = link
        return link

    def slot_groups(self, channels: Iterable[bytes]) -> list[list[bytes]]:
        """``channels`` in groups one SSUBSCRIBE can take (one slot each); all in one group on a
        single Redis."""
        if self._cluster is None:
            return [list(channels)]
        groups: dict[int, list[bytes]] = {}
        for channel in channels:
            groups.setdefault(self._cluster.slot(channel), []).append(channel)
        return list(groups.values())

    def _subscribed(self, link: _Link, recovered: bool) -> None:
        """A link subscribed: the first time at start, or again (then every ``on_reconnect``
        hook is told: messages may have been lost meanwhile)."""
        if not self.ready.is_set():
            if all(other.made for other in self.links.values()):
                self.subscriptions += 1
                self.ready.set()
            return
        if recovered:
            self._recovered()

    def _recovered(self) -> None:
        self.subscriptions += 1
        logger.warning("bus_reconnected", channels=len(self._handlers),
                       subscriptions=self.subscriptions)
        log.call_each(self.on_reconnect, logger, "bus_reconnect_hook_failed")

    # -- a Cluster's slots moving --------------------------------------------------------------

    def _follow_map(self) -> None:
        """The slot map was read again: every channel whose slot is on another node now is
        subscribed there (messages published meanwhile went to a node it was not subscribed
        on: the hooks are told once it is), and links left with no channel are stopped."""
        if not self._started or self._cluster is None:
            return
        moved: dict[_Link, list[bytes]] = {}
        for channel, link in list(self._holder.items()):
            if link.address == self._cluster.node_of(channel):
                continue
            link.channels.discard(channel)
            link.leave(channel)  # if subscribed there still: a message must come once
            target = self._hold(channel)
            target.channels.add(channel)
            if target.made:  # subscribed already: add the channel now
                moved.setdefault(target, []).append(channel)
            else:
                target.inherited = True  # its first subscription is a recovery
        for address, link in list(self.links.items()):
            if not link.channels:
                del self.links[address]
                self._spawn(link.stop())
        if moved:
            logger.warning("bus_channels_moved", channels=sum(map(len, moved.values())))
            self._spawn(self._move(moved))

    async def _move(self, moved: dict[_Link, list[bytes]]) -> None:
        for link, channels in moved.items():
            await link.subscribe_more(channels)
        self._recovered()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class _Link:
    """One subscribed connection (to the single Redis, or to one node of a Cluster) and its
    task, which makes the connection and its subscriptions, again whenever they are lost, and
    watches it; the connection hands every message to the handler of its channel itself
    (``store.subscriber``)."""

    def __init__(self, bus: Bus, address: Address) -> None:
        self.bus = bus
        self.address = address
        cluster = bus._cluster
        url = bus.url if address is None or cluster is None else node_url(cluster.seed, *address)
        self.dial = Dial(url, timeout=bus.timeout)
        #: The channels this link is to listen on.
        self.channels: set[bytes] = set()
        #: The subscribed connection, once it subscribed to the link's channels; None while
        #: there is none.
        self.connection: Subscriber | None = None
        self._task: asyncio.Task[None] | None = None
        #: Subscriptions this link made so far.
        self.made = 0
        #: Its channels were moved here from a node that dropped them: its first subscription
        #: is a recovery.
        self.inherited = False

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="bus")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def add(self, channel: bytes) -> None:
        self.channels.add(channel)
        await self.subscribe_more([channel])

    async def subscribe_more(self, channels: list[bytes]) -> None:
        """Subscribe to ``channels`` on the connection, if there is one (if not, the task
        subscribes to them when it has one). A failure fails the connection, which the task
        reports and makes again, these channels with the others."""
        connection = self.connection
        if connection is None:
            return
        with contextlib.suppress(RedisError):
            for group in self.bus.slot_groups(channels):
                await connection.subscribe(group)

    def remove(self, channel: bytes) -> None:
        self.channels.discard(channel)
        self.leave(channel)

    def leave(self, channel: bytes) -> None:
        """Unsubscribe from ``channel`` on this link's connection, if it has one."""
        if self.connection is not None:
            with contextlib.suppress(RedisError):  # gone with the connection anyway
                self.connection.unsubscribe(channel)

    async def _subscribe_all(self, connection: Subscriber) -> None:
        """Subscribe to every channel of the link, those added meanwhile too."""
        done: set[bytes] = set()
        while wanted := self.channels - done:
            for group in self.bus.slot_groups(wanted):
                await connection.subscribe(group)
            done |= wanted

    async def _run(self) -> None:
        """Keep a subscription, remaking it whenever it is lost, for the life of the link:
        at once, then backing off while Redis stays away (an outage is logged once). On a
        Cluster, a lost connection has the slot map read again first: channels served
        elsewhere now go to their node's link, and a link left with none ends."""
        bus = self.bus
        wait = RETRY_FIRST
        failing = False
        while True:
            made = self.made
            connection: Subscriber | None = None
            try:
                connection = await Subscriber.open(
                    self.dial, bus.name, sharded=bus.sharded, deliver=self._deliver,
                    dropped=self._dropped,
                )
                if bus.sharded:
                    await self._check_primary(connection)
                await self._subscribe_all(connection)
                self.connection = connection
                recovered = self.made > 0 or self.inherited
                self.made += 1
                self.inherited = False
                bus._subscribed(self, recovered)
                await self._watch(connection)  # returns only by raising
            except Exception as exc:
                # The connection's own reason when it failed (a command waiting on it gets
                # only "connection failed"): a node dropping channels is not an outage.
                why = connection.reason if connection and connection.reason else exc
                if isinstance(why, _ChannelsMoved):
                    logger.warning("bus_channels_dropped", node=_name(self.address),
                                   channel=str(why))
                    failing, wait = False, RETRY_FIRST
                elif not isinstance(why, _NotPrimary):  # (the slot map is read again below)
                    if self.made > made:  # it worked for a while: a fresh outage
                        failing, wait = False, RETRY_FIRST
                    if not failing:  # (told once, until a subscription is made again)
                        if is_store_error(why) or isinstance(why, TimeoutError):
                            bus._outage.failed(why, during="pub/sub")
                        else:
                            logger.exception("bus_failed", exc_info=why)
                    failing = True
            finally:
                self.connection = None
                if connection is not None:
                    connection.close()
            if bus._cluster is not None:
                self.inherited = True  # whatever it subscribes to next was away meanwhile
                await bus._cluster.refresh()
                bus._follow_map()  # channels served elsewhere now go to their node's link
                if bus.links.get(self.address) is not self:
                    return  # no channel left here: stopped by the bus
            await pause(wait)
            wait = min(wait * 2, RETRY_LAST)

    async def _check_primary(self, connection: Subscriber) -> None:
        role = await connection.call(b"ROLE")
        if role[0] != b"master":
            raise _NotPrimary()

    async def _watch(self, connection: Subscriber) -> None:
        """Until the connection fails (raises why): a PING whenever nothing came for ``quiet``
        seconds, and no answer within the Redis deadline fails it."""
        bus = self.bus
        loop = asyncio.get_running_loop()
        while True:
            silent = loop.time() - connection.heard_at
            if silent >= bus.quiet:
                await connection.call(b"PING")
                continue
            await asyncio.wait([connection.closed], timeout=bus.quiet - silent)
            if connection.closed.done():
                raise connection.closed.result()

    def _deliver(self, channel: bytes, data: bytes) -> None:
        """Hand a message to its channel's handler (or the bus's fallback)."""
        bus = self.bus
        handler = bus.handler(channel)
        try:
            if handler is not None:
                handler(data)
            elif bus.fallback is not None:
                bus.fallback(channel, data)
        except Exception:  # one bad message must not stop the others
            logger.exception("bus_message_failed", channel=channel)

    def _dropped(self, channel: bytes) -> None:
        """The node unsubscribed the connection from ``channel`` by itself: if this process
        still listens on it, its slot went to another node (raises, failing the connection)."""
        if channel in self.channels:
            raise _ChannelsMoved(channel.decode(errors="replace"))


def _name(address: Address) -> str:
    return "redis" if address is None else f"{address[0]}:{address[1]}"
