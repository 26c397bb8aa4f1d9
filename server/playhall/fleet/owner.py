"""The owner's side of the fleet: the requests other processes forward to the rooms this one
holds, and what goes back to them.

A connection held by another process (an *edge*) is, in the room it watches here, a
:class:`RemoteViewer`: the room's audience treats it as any viewer, sends it the frames of its
own seat and nothing else, and its ``push`` hands the frame to :class:`EdgeMail`. Answers to
forwarded requests go the same way (``ReplyRouter.deliver`` passes an answer addressed to
another process here). EdgeMail sends each edge what it is due in order, in batches numbered
per edge (``fleet.messages``), so the edge can tell when one was lost: an answer at once, with
what its edge was due before it; everything else of a pass of the event loop in one publish; and
on one Redis, what is due when a room commits a change (its frames for the edges' viewers among
it) as arguments of that commit, whose script publishes them once the change is stored
(:meth:`EdgeMail.claim`, ``rooms.actor.Room.commit``).

An edge that no longer listens (two of its batches, sent a moment apart, reached nobody; or its
channel has no subscriber at the periodic check) is gone: its viewers are detached from every
room here, as a closed connection's would be.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
import weakref
from collections.abc import Callable
from typing import Any, Final, Protocol

from mypy_extensions import mypyc_attr

from playhall import log
from playhall.counters import Counters
from playhall.fleet.messages import (
    CLEAR,
    FRAME,
    MOVED,
    REPLY,
    Forward,
    instance_of,
    pack_batch,
)
from playhall.rooms.audience import Viewer
from playhall.rooms.commands import HANDLERS
from playhall.rooms.handle import Claimed, ReplyTo, RoomHandle
from playhall.rooms.table import RoomError
from playhall.store.bus import Publisher
from playhall.store.keys import Keys
from playhall.store.outage import is_store_error, report
from playhall.tasks import Tasks
from playhall_protocol import errors

logger = log.get("playhall.fleet")


#: Seconds after a batch was lost on its way to Redis before the edge is sent the next one.
RESEND_AFTER: Final = 0.2


def reply_item(corr: int, result: dict[str, Any] | None, error: RoomError | None) -> list[Any]:
    """A batch's answer to forwarded request ``corr`` (``fleet.messages``)."""
    wire = None if error is None else [error.code, error.reason, error.extra]
    return [REPLY, corr, result, wire]


class HeldRooms(Protocol):
    """What the owner's side needs of the room manager."""

    closing: bool

    def ready(self, room_id: str) -> RoomHandle | None: ...

    async def get(self, room_id: str) -> Any: ...

    def viewers(self) -> list[tuple[RoomHandle, Viewer]]: ...


# A plain Python class in the compiled build too: the owner finds a connection's viewer by a
# weak reference (its rooms' audiences hold it), which mypyc's native classes cannot take.
@mypyc_attr(native_class=False)
class RemoteViewer:
    """A connection another process holds, as the rooms here see it."""

    __slots__ = ("edge", "id", "player", "name", "address", "_mail", "__weakref__")

    def __init__(
        self, edge: str, connection: int, player: str, name: str, address: str, mail: EdgeMail
    ) -> None:
        self.edge = edge
        self.id = connection
        self.player = player
        self.name = name
        self.address = address
        self._mail = mail

    def push(self, frame: bytes, room: str | None = None) -> None:
        self._mail.post(self.edge, [FRAME, self.id, room, frame])

    def is_stale(self, room: str) -> bool:
        # The edge's own session drops what its outbox cannot take and asks again: see
        # net/session.py. The owner sends everything.
        return False

    def clear_stale(self, room: str) -> None:
        self._mail.post(self.edge, [CLEAR, self.id, room])


class EdgeMail:
    """What goes to each edge, gathered over a pass of the event loop and published once: at
    the pass's end, or before the pass's frames are written to this process's own clients
    when it has any (``WriteBatch.first``, wired in ``playhall.app``); or at once, by
    :meth:`send_now`."""

    def __init__(self, bus: Publisher, keys: Keys, on_gone: Callable[[str, float], None]) -> None:
        self.bus = bus
        self.keys = keys
        #: This process's name for this run: an edge's sequence numbers start again with it.
        self.boot = secrets.token_hex(6)
        self._on_gone = on_gone
        self._pending: dict[str, list[Any]] = {}
        self._seq: dict[str, int] = {}
        self._scheduled = False
        #: Edge -> when (monotonic) the first of its batches that reached nobody was sent, while
        #: no later one reached it, and the number of the batch that then checks (see _unheard).
        self._silent: dict[str, tuple[float, int | None]] = {}
        #: The viewers whose frames are this mail (``rooms.handle.EarlyMail``).
        self.kinds: tuple[type, ...] = (RemoteViewer,)

    def post(self, edge: str, item: list[Any]) -> None:
        self._batch(edge).append(item)

    def _nudge(self, edge: str) -> None:
        """Send ``edge`` a batch now, empty if nothing is due (it carries the next number)."""
        self._batch(edge)

    def _batch(self, edge: str) -> list[Any]:
        """The items going to ``edge`` in this pass's batch (which is then sent)."""
        items = self._pending.get(edge)
        if items is None:
            items = self._pending[edge] = []
            if not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self.flush)
        return items

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:  # (called in every pass that writes to a client: see app)
            return
        pending, self._pending = self._pending, {}
        for edge, items in pending.items():
            self._publish(edge, items, now=False)

    def send_now(self, edge: str, item: list[Any]) -> None:
        """Publish ``item`` to ``edge`` now, behind what ``edge`` was due, written to Redis by
        this call rather than at the pass's end: a forwarded request's answer, whose player
        waits for it (with the frames posted before it, the mover's update among them), need
        not wait for every other room's work of the pass. Costs a write more in a pass that
        has others due, once a pass: the answers after the first of a pass are written with
        the pass's write (``RedisPipe.call_then``). (Not through :meth:`post`: that would
        schedule a flush for nothing.)"""
        items = self._pending.pop(edge, [])
        items.append(item)
        self._publish(edge, items, now=True)

    def answer(self, to: ReplyTo, result: dict[str, Any]) -> None:
        assert to.edge is not None
        self.post(to.edge, reply_item(to.corr, result, None))

    def claim(self) -> Claimed:
        """Every edge's batch due now, numbered, for a room's commit to publish
        (``rooms.handle.EarlyMail``): on one Redis the commit goes on the connection these
        batches would have, so it keeps their order with the batches before and after."""
        pending, self._pending = self._pending, {}
        words: list[bytes] = []
        for edge, items in pending.items():
            channel, batch, _ = self._numbered(edge, items)
            words.append(channel)
            words.append(batch)
        return words, list(pending)

    def lost(self, claimed: Claimed) -> None:
        """The commit that was to publish ``claimed`` did not: each of its edges gets its next
        batch at once (empty if nothing else is due), sees the gap in the numbers and syncs."""
        for edge in claimed[1]:
            self._nudge(edge)

    def _numbered(self, edge: str, items: list[Any]) -> tuple[bytes, bytes, int]:
        """``items`` as ``edge``'s next batch: its channel, the batch, and its number."""
        seq = self._seq.get(edge, 0) + 1
        self._seq[edge] = seq
        channel = self.keys.edge_channel(instance_of(edge)).encode()
        return channel, pack_batch(self.boot, seq, items, edge), seq

    def _publish(self, edge: str, items: list[Any], now: bool) -> None:
        # At once: a batch is the end of its pass's work for the edge (or an answer), and
        # would otherwise wait a loop pass more for the pipe's write.
        channel, batch, seq = self._numbered(edge, items)
        self.bus.publish_then(
            channel, batch, functools.partial(self._sent, edge, seq, time.monotonic()),
            at_once=True, now=now,
        )

    def _sent(
        self, edge: str, seq: int, at: float, listeners: Any, failure: BaseException | None
    ) -> None:
        """Redis's answer to batch ``seq`` for ``edge``, sent at ``at``: how many listened,
        or why it failed."""
        if failure is not None:
            if isinstance(failure, asyncio.CancelledError):
                return
            report(failure, "edge publish", logger, edge=edge)
            # Lost. The edge notices by the gap in the numbers and syncs its rooms again, but
            # only when a later batch comes: one comes shortly, empty if nothing else is due.
            asyncio.get_running_loop().call_later(RESEND_AFTER, self._nudge, edge)
            return
        if listeners == 0:
            self._unheard(edge, seq, at)
        else:
            self._silent.pop(edge, None)

    def _unheard(self, edge: str, seq: int, at: float) -> None:
        """Batch ``seq``, sent at ``at``, reached nobody on ``edge``'s channel. The edge may
        only be moving: on a Cluster, a channel whose slot goes to a new primary loses what is
        published to it until the edge subscribes there, and a primary turned replica counts
        0 for a channel subscribed on the new one. So another batch is sent
        :data:`RESEND_AFTER` later (empty if nothing else is due): if that one, or any after
        it, reaches nobody too, the edge is gone; if it reaches the edge, the edge sees the
        gap in the numbers and syncs its rooms again."""
        silent = self._silent.get(edge)
        if silent is None:
            self._silent[edge] = (at, None)
            asyncio.get_running_loop().call_later(RESEND_AFTER, self._probe, edge)
        elif silent[1] is not None and seq >= silent[1]:
            del self._silent[edge]
            self._on_gone(instance_of(edge), silent[0])

    def _probe(self, edge: str) -> None:
        silent = self._silent.get(edge)
        if silent is not None:  # (else a batch reached it meanwhile)
            self._silent[edge] = (silent[0], self._seq.get(edge, 0) + 1)
            self._nudge(edge)


class Owner:
    """Takes the requests forwarded to this process's rooms and answers them."""

    def __init__(
        self, bus: Publisher, keys: Keys, instance: str, counters: Counters | None = None
    ) -> None:
        self.bus = bus
        self.counters = counters if counters is not None else Counters()
        self.keys = keys
        self.instance = instance
        self.mail = EdgeMail(bus, keys, self.edge_gone)
        self.rooms: HeldRooms | None = None
        #: (edge, connection) -> its viewer, while some room here holds it.
        self._viewers: weakref.WeakValueDictionary[tuple[str, int], RemoteViewer] = (
            weakref.WeakValueDictionary()
        )
        self._tasks = Tasks("fleet task", logger)
        #: Instance -> when (monotonic) a request of it last came: an edge heard from after
        #: it was found silent is back (its subscriber reconnected), not gone.
        self._heard: dict[str, float] = {}
        #: Instance -> the edge (this run of it) it last forwarded from.
        self._runs: dict[str, str] = {}
        #: This process's own edge (``Edge.id``) and its connections (``FleetNode.attach``).
        #: A request of one of them reaches a room here over Redis when the room was taken here
        #: after the request (or the sync its edge asked for) was sent: the room gets the
        #: connection itself, as from a request made here, never a RemoteViewer of it beside
        #: it (which would get every frame a second time, through Redis).
        self.home: str | None = None
        self.own: Callable[[int], Viewer | None] = lambda connection: None

    # -- requests in ---------------------------------------------------------------------------

    def received(self, room_id: str, data: bytes) -> None:
        """A request forwarded to ``room_id`` (called by the bus's reader)."""
        forward = Forward.unpack(data)
        instance = instance_of(forward.edge)
        self._heard[instance] = time.monotonic()
        if self._runs.get(instance, forward.edge) != forward.edge and forward.kind != "detach":
            self._restarted(self._runs[instance])
        if forward.kind != "detach":
            self._runs[instance] = forward.edge
        assert self.rooms is not None
        room = self.rooms.ready(room_id)
        if room is not None:
            self._submit(room, forward)
        elif not self.rooms.closing:  # let go just now: take it back, the first to need it
            self._tasks.spawn(self._load_and_submit(room_id, forward))
        else:  # let go as this process drains: asked again, it finds the room's next owner
            self._refuse(forward, RoomError(errors.DRAINING, "the room is moving to another "
                                            "server process; retry"))

    async def _load_and_submit(self, room_id: str, forward: Forward) -> None:
        assert self.rooms is not None
        try:
            room = await self.rooms.get(room_id)
        except RoomError as exc:
            self._refuse(forward, exc)
            return
        except Exception as failure:  # not `exc`: compiled, one name has one type
            if not is_store_error(failure):
                raise
            self._refuse(forward, RoomError(errors.STORE_FAILED, "Redis is unreachable; retry"))
            return
        self._submit(room, forward)

    def _submit(self, room: RoomHandle, forward: Forward) -> None:
        if forward.kind not in HANDLERS:  # e.g. from a newer release during a rolling upgrade
            self._refuse(forward, RoomError(errors.BAD_MESSAGE,
                                            f"this server has no {forward.kind!r} request"))
            return
        viewer = self.viewer(forward) if forward.connection else None
        reply_to = None
        if forward.corr:
            reply_to = ReplyTo(forward.connection, forward.request or 0, forward.edge,
                               forward.corr)
        try:
            room.submit(forward.kind, viewer, forward.args, reply_to)
        except RoomError as exc:
            self._refuse(forward, exc)

    def _refuse(self, forward: Forward, error: RoomError) -> None:
        if forward.corr:
            self.mail.post(forward.edge, reply_item(forward.corr, None, error))

    def viewer(self, forward: Forward) -> Viewer:
        """The viewer standing for the forwarding connection: the connection itself if it is
        one of this process's (see ``home``), else a RemoteViewer (the same object while any
        room here holds it, so a room knows it again)."""
        if forward.edge == self.home:
            here = self.own(forward.connection)
            if here is not None:
                return here
        key = (forward.edge, forward.connection)
        viewer = self._viewers.get(key)
        if viewer is None:
            viewer = RemoteViewer(
                forward.edge, forward.connection, forward.player, forward.name, forward.address,
                self.mail,
            )
            self._viewers[key] = viewer
        elif forward.kind != "detach":  # (a detach may come from an edge that no longer holds
            viewer.name = forward.name  # the connection, and knows no name): renamed since
        return viewer

    # -- answers and moves out -----------------------------------------------------------------

    def reply(
        self, to: ReplyTo, result: dict[str, Any] | None, error: RoomError | None
    ) -> None:
        """Send the answer to a forwarded request back to the edge that asked, at once."""
        assert to.edge is not None
        self.mail.send_now(to.edge, reply_item(to.corr, result, error))

    def moved(self, room_id: str, edges: set[str]) -> None:
        """Tell ``edges`` (which had viewers in it) that ``room_id`` is no longer here."""
        for edge in edges:
            self.mail.post(edge, [MOVED, room_id])

    # -- edges that are gone -------------------------------------------------------------------

    def edge_gone(self, instance: str, since: float) -> None:
        """Nobody listened on ``instance``'s channel at monotonic time ``since``: its process
        is gone, unless it has asked something since (its subscriber was reconnecting: it
        syncs its rooms again by itself). Detach its viewers from every room here (their
        players count as away; stand-ins and presence follow). A viewer it syncs again after
        this is attached after the detach: the room's inbox keeps the order."""
        if self.rooms is None or self._heard.get(instance, 0.0) > since:
            return
        logger.warning("edge_gone", edge=instance)
        self.counters.edges_gone += 1
        self._detach(lambda edge: instance_of(edge) == instance)
        self._heard.pop(instance, None)

    def _restarted(self, previous: str) -> None:
        """A process forwards under a new run of its name: the connections of its previous
        run (``previous``) are gone."""
        logger.warning("edge_restarted", edge=previous)
        self.counters.edges_gone += 1
        self._detach(lambda edge: edge == previous)

    def _detach(self, which: Callable[[str], bool]) -> None:
        assert self.rooms is not None
        for room, viewer in self.rooms.viewers():
            if isinstance(viewer, RemoteViewer) and which(viewer.edge):
                try:
                    room.submit("detach", viewer, {})
                except RoomError:  # closing: nobody to detach from
                    pass

    def edges(self) -> set[str]:
        """The instances with viewers in the rooms here now."""
        return {instance_of(edge) for edge, _ in self._viewers.keys()}

