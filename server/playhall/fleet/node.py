"""This process as one of a fleet on one Redis: the owner of the rooms it holds
(``fleet.owner``) and the edge of the connections it holds (``fleet.edge``), over one bus
(``store.bus``).

What crosses Redis: a connection's requests for a room held elsewhere (as the client sent
them, with the player's id, name and address), the answers, and the frames of that
connection's own seat, addressed to that connection only (``fleet.messages``). A room's record
and every other seat's view stay in the owner's memory and in Redis' keys.

The room manager hands out :meth:`FleetNode.remote` handles for rooms it does not hold, and
tells the node when it takes a room (:meth:`held`: this process listens on the room's channel
from then) and lets one go (:meth:`released`, :meth:`moved`).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable

from playhall import log
from playhall.counters import Counters
from playhall.fleet.edge import Connections, Edge, RemoteRoom, TakeRoom
from playhall.fleet.owner import HeldRooms, Owner, RemoteViewer
from playhall.rooms.audience import Viewer
from playhall.rooms.handle import EarlyMail, RoomHandle
from playhall.store.bus import Bus
from playhall.store.keys import Keys
from playhall.store.outage import Outage, is_store_error
from playhall.tasks import Tasks, pause

logger = log.get("playhall.fleet")


class FleetNode:
    def __init__(
        self, bus: Bus, keys: Keys, instance: str, *, timeout: float, check_every: float,
        outage: Outage, counters: Counters | None = None,
    ) -> None:
        self.bus = bus
        self.keys = keys
        self.instance = instance
        self.owner = Owner(bus, keys, instance, counters)
        self.edge = Edge(bus, keys, instance, timeout, outage, counters)
        self.outage = outage
        self._check_every = check_every
        self._checker: asyncio.Task[None] | None = None
        self._tasks = Tasks("fleet task", logger)
        bus.on_reconnect.append(self.edge.reconnected)
        bus.fallback = self._unsubscribed_just_now
        # A room's channel is these around its id (see _unsubscribed_just_now).
        head, _, tail = keys.room_channel("\0").partition("\0")
        self._room_channel = (head.encode(), tail.encode())

    def attach(self, rooms: HeldRooms, take: TakeRoom, connections: Connections) -> None:
        """Wire the node to this process's rooms and connections (made after it)."""
        self.owner.rooms = rooms
        self.owner.home = self.edge.id
        self.owner.own = connections.viewer
        self.edge.take = take
        self.edge.holds = lambda room_id: rooms.ready(room_id) is not None
        self.edge.connections = connections

    async def start(self) -> None:
        """Listen on this process's channel, and check every so often that the other ends
        are alive."""
        await self.bus.subscribe(self.keys.edge_channel(self.instance).encode(),
                                 self.edge.received)
        await self.bus.start()
        self._checker = asyncio.get_running_loop().create_task(self._check_forever())

    async def stop(self) -> None:
        self.edge.stopped = True
        if self._checker is not None:
            self._checker.cancel()
        self.owner.mail.flush()
        await self.bus.stop()

    # -- the room manager's side (rooms.handle.Fleet) ------------------------------------------

    def remote(self, room_id: str) -> RoomHandle:
        return RemoteRoom(room_id, self.edge)

    @property
    def early(self) -> EarlyMail | None:
        """The owner's mail, for rooms' commits to publish, when the bus publishes on the
        commits' own connection (one Redis); None on a Cluster, where an edge's channel is not
        in a room's slot."""
        return self.owner.mail if self.bus.on_commit_pipe else None

    def held(self, room_id: str) -> None:
        channel = self.keys.room_channel(room_id).encode()
        handler = functools.partial(self.owner.received, room_id)
        self._tasks.spawn(self.bus.subscribe(channel, handler))

    def released(self, room_id: str) -> None:
        self._tasks.spawn(self.bus.unsubscribe(self.keys.room_channel(room_id).encode()))

    def _unsubscribed_just_now(self, channel: bytes, data: bytes) -> None:
        """A request on the channel of a room let go just now, which Redis delivered before
        the unsubscribe: the owner's side answers it (taking the room back, the first to need
        it) rather than leaving it to time out."""
        head, tail = self._room_channel
        if channel.startswith(head) and channel.endswith(tail):
            self.owner.received(channel[len(head):len(channel) - len(tail)].decode(), data)

    def forget(self, connection: int) -> None:
        self.edge.forget(connection)

    def moved(self, room_id: str, viewers: Iterable[Viewer], closing: bool) -> None:
        """``room_id`` left this process: its other processes' viewers are told ``MOVED``
        through the mail like every frame, behind those already posted to their edge in this
        pass (a draining process's last batches are flushed by :meth:`stop`)."""
        edges = set()
        for viewer in viewers:
            if isinstance(viewer, RemoteViewer):
                edges.add(viewer.edge)
            elif not closing:  # this process's own connection: find the room where it is now
                self.edge.forward(room_id, "sync", viewer, {})
        self.owner.moved(room_id, edges)

    # -- liveness ------------------------------------------------------------------------------

    async def _check_forever(self) -> None:
        while True:
            await pause(self._check_every)
            try:
                await self.edge.check_owners()
                await self._check_edges()
            except Exception as exc:
                if not is_store_error(exc):
                    logger.exception("fleet_check_failed")
                else:
                    self.outage.failed(exc, during="fleet check")

    async def _check_edges(self) -> None:
        """Edges with viewers here whose channel nobody listens on are gone."""
        edges = sorted(self.owner.edges() - {self.instance})
        if not edges:
            return
        asked = time.monotonic()
        counts = await self.bus.numsub([self.keys.edge_channel(e).encode() for e in edges])
        for edge, count in zip(edges, counts[1::2], strict=True):
            if not count:
                self.owner.edge_gone(edge, asked)

