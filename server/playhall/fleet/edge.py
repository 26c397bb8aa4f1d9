"""The edge's side of the fleet: this process's connections, in rooms another process holds.

A request for a room this process does not hold goes through :class:`RemoteRoom`: it is
published on the room's channel, where the room's owner listens (addressed to the room, never
to a process: there is no table of owners to go stale). The owner's answer comes back in a
batch on this process's channel and is handed to the connection as if the room were here. A
publish that reaches nobody means nobody holds the room: this process takes its lease and
loads it (the first to need a room serves it). A request that gets no answer within
``forward_timeout`` is answered ``store_failed`` (retryable: a move retried with its id is
applied once); it is never carried out here instead.

Frames come the same way, each for one connection, as the owner's room encoded it. The edge
checks each owner's batch numbers: a batch lost (pub/sub delivers at most once), or this
process's subscriber reconnected, and every room of that owner is marked stale on the
connections that watch it (its next frames are dropped) and synced again, which sends a
snapshot. So a connection never sees a gap or a fork: a frame after a lost one is never
passed on. The same sync finds the room where it is after its owner died (checked every
third of ``lease_ms``: nobody on the room's channel) or was drained (the owner says so).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from playhall import log
from playhall.counters import Counters
from playhall.fleet.messages import CLEAR, FRAME, MOVED, REPLY, Forward, edge_id, unpack_batch
from playhall.rooms.audience import Viewer
from playhall.rooms.handle import Replies, ReplyTo, RoomHandle
from playhall.rooms.table import RoomError
from playhall.store.bus import Publisher
from playhall.store.keys import Keys
from playhall.store.outage import Outage, is_store_error
from playhall.tasks import Tasks, pause
from playhall_protocol import errors

logger = log.get("playhall.fleet")

#: Waits between tries while another process holds a room nobody listens for (its owner died
#: and its lease has not run out yet, or it is being loaded there).
_RETRY_WAITS = (0.05, 0.1, 0.2, 0.4)

#: Refusals of a sync the edge asked for by itself that say nothing about it: asked again.
_SYNC_AGAIN = frozenset({errors.STORE_FAILED, errors.OVERLOADED, errors.DRAINING})

#: The owner a connection's room is served by while no frame of it has come from there yet
#: (a request just sent to it, or a sync asked after it moved): whatever owner's batch is lost,
#: that room's first frames may have been in it.
_UNKNOWN = ""

#: The requests after whose answer a connection watches the room (their first frames, a
#: snapshot, come from whichever process holds it).
_ATTACHING = frozenset({"join", "sync"})


class Connections(Replies, Protocol):
    """What the edge needs of this process's connections (``net.replies.ReplyRouter``)."""

    def push(self, connection: int, frame: bytes, room: str | None) -> bool:
        """Send a room's frame to a connection; False if the connection is gone."""
        ...

    def clear_stale(self, connection: int, room: str) -> None: ...

    def mark_stale(self, connection: int, room: str) -> None: ...

    def viewer(self, connection: int) -> Viewer | None: ...


class TakeRoom(Protocol):
    async def __call__(self, room_id: str) -> RoomHandle: ...


class Pending:
    """A forwarded request waiting for its answer."""

    __slots__ = ("kind", "room", "reply_to", "future", "deadline")

    def __init__(
        self, kind: str, room: str, reply_to: ReplyTo | None,
        future: asyncio.Future[dict[str, Any]] | None,
    ) -> None:
        self.kind = kind
        self.room = room
        self.reply_to = reply_to
        self.future = future
        #: When (the loop's clock) it is answered store_failed if no answer came.
        self.deadline = 0.0


class RemoteRoom:
    """A room another process holds (or nobody does yet), with the interface of
    :class:`playhall.rooms.handle.RoomHandle`."""

    __slots__ = ("id", "_edge")

    def __init__(self, room_id: str, edge: Edge) -> None:
        self.id = room_id
        self._edge = edge

    def submit(
        self, kind: str, viewer: Viewer | None, args: dict[str, Any],
        reply_to: ReplyTo | None = None,
    ) -> None:
        self._edge.forward(self.id, kind, viewer, args, reply_to)

    async def ask(
        self, kind: str, viewer: Viewer | None, args: dict[str, Any], request: int | None = None
    ) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._edge.forward(self.id, kind, viewer, args, None, future, request)
        return await future


class Edge:
    def __init__(
        self, bus: Publisher, keys: Keys, instance: str, timeout: float, outage: Outage,
        counters: Counters | None = None,
    ) -> None:
        self.bus = bus
        self.counters = counters if counters is not None else Counters()
        self.keys = keys
        self.instance = instance
        #: This process as the owners know it: its name and a token of this run.
        self.id = edge_id(instance, secrets.token_hex(4))
        self.timeout = timeout
        self.outage = outage
        self.connections: Connections | None = None
        #: Takes a room nobody holds into this process (``RoomManager.get``).
        self.take: TakeRoom | None = None
        #: Whether this process holds a room (then its frames come from here, not a batch).
        self.holds: Callable[[str], bool] = lambda room_id: False
        self._corr = itertools.count(1)
        #: The requests waiting for their answers, in the order they were sent.
        self._pending: dict[int, Pending] = {}
        #: Fires at the oldest waiting request's deadline (one timer, not one per request: it
        #: is moved on when it fires, never cancelled).
        self._watchdog: asyncio.TimerHandle | None = None
        #: Owner boot name -> the number of the last batch it sent here.
        self._seq: dict[str, int] = {}
        #: Connection -> room -> the owner whose frames it gets there.
        self._watching: dict[int, dict[str, str]] = {}
        self._tasks = Tasks("fleet task", logger)
        #: (connection, room) synced again now -> the number of its answer (see _sync_again).
        self._syncing: dict[tuple[int, str], int] = {}
        #: Set as the process stops: nothing more is forwarded.
        self.stopped = False

    # -- requests out --------------------------------------------------------------------------

    def forward(
        self, room_id: str, kind: str, viewer: Viewer | None, args: dict[str, Any],
        reply_to: ReplyTo | None = None, future: asyncio.Future[dict[str, Any]] | None = None,
        request: int | None = None, as_edge: str | None = None,
    ) -> int:
        """Send a request to ``room_id``'s owner; its answer goes to ``reply_to`` or
        ``future`` (neither: nobody waits for one). Returns the number the answer will carry
        (0: none). ``as_edge``: sent for a previous run of this process (see ``received``)."""
        if self.stopped:
            closing = RoomError(errors.DRAINING, "the server is restarting; reconnect shortly")
            if future is not None:
                future.set_exception(closing)
            elif reply_to is not None and self.connections is not None:
                self.connections.deliver(reply_to, kind, room_id, None, closing)
            return 0
        waits = reply_to is not None or future is not None
        corr = next(self._corr) if waits else 0
        if viewer is not None and kind in _ATTACHING:
            # The connection watches the room from its answer on: if a batch is lost before
            # one of its frames reached here, the room is synced again (see _lost).
            self._watching.setdefault(viewer.id, {}).setdefault(room_id, _UNKNOWN)
        if reply_to is not None:
            request = reply_to.request
        message = Forward(
            as_edge or self.id,
            viewer.id if viewer is not None else 0,
            corr,
            request,
            kind,
            viewer.player if viewer is not None else "",
            viewer.name if viewer is not None else "",
            viewer.address if viewer is not None else "",
            args,
        )
        channel = self.keys.room_channel(room_id).encode()
        data = message.pack()  # (first: a request that cannot be sent is not waited for)
        if waits:
            pending = Pending(kind, room_id, reply_to, future)
            loop = asyncio.get_running_loop()
            pending.deadline = loop.time() + self.timeout
            if self._watchdog is None:
                self._watchdog = loop.call_at(pending.deadline, self._check_deadlines)
            self._pending[corr] = pending
        self.counters.forwarded += 1
        # The usual case: the owner listens and has it (the publish's answer, read in the
        # pipe's read callback, is a count of one); its answer, or its deadline, settles the
        # request. No task of its own, and no future. At once: the owner waits on it (the
        # pass's later commands wait for one write).
        self.bus.publish_then(channel, data, functools.partial(
            self._published, room_id, message, viewer, reply_to, future, channel, data
        ), at_once=True)
        return corr

    def _published(
        self, room_id: str, message: Forward, viewer: Viewer | None,
        reply_to: ReplyTo | None, future: asyncio.Future[dict[str, Any]] | None,
        channel: bytes, data: bytes, listeners: Any, failure: BaseException | None,
    ) -> None:
        """A forward's publish was answered: nothing to do if the owner got it, else the rest
        of :meth:`_send` (nobody listened, or Redis failed) in a task."""
        if failure is None and listeners:
            return
        sent: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if failure is None:
            sent.set_result(listeners)
        else:
            sent.set_exception(failure)
        self._tasks.spawn(
            self._send(room_id, message, viewer, reply_to, future, channel, data, sent)
        )

    async def _send(
        self, room_id: str, message: Forward, viewer: Viewer | None,
        reply_to: ReplyTo | None, future: asyncio.Future[dict[str, Any]] | None,
        channel: bytes, data: bytes, sent: Awaitable[Any],
    ) -> None:
        """Publish the forward (``sent``: its first publish) until its owner has it, taking
        the room here if nobody holds it."""
        deadline = time.monotonic() + self.timeout
        for attempt in itertools.count():
            room: RoomHandle | None
            try:
                if await sent:
                    return  # the owner has it; its answer (or its deadline) settles the request
                assert self.take is not None
                room = await self.take(room_id)
            except RoomError as exc:
                if exc.code != errors.STORE_FAILED or time.monotonic() > deadline:
                    self._settle(message.corr, None, exc)
                    return
                room = None  # (the wait is outside the handler: the compiled build's rule)
            except Exception as failure:  # not `exc`: compiled, one name has one type
                if not is_store_error(failure):
                    raise
                self.outage.failed(failure, during="forward", room=room_id)
                self._settle(
                    message.corr, None, RoomError(errors.STORE_FAILED, "Redis is unreachable; "
                                                  "retry shortly")
                )
                return
            if room is None:
                # Held elsewhere by a process that does not listen (yet): dead, its lease
                # running out, or loading it now. Ask again shortly (unless it was answered
                # meanwhile: its time ran out).
                await pause(_RETRY_WAITS[min(attempt, len(_RETRY_WAITS) - 1)])
                if message.corr and message.corr not in self._pending:
                    return
                sent = self.bus.publish(channel, data)
                continue
            # Nobody held it: it is here now. The request goes to it as any local one, unless
            # it was answered already (its time ran out while the room was loading): then it
            # is not carried out at all, and its retry finds the room here.
            self.counters.rooms_taken += 1
            if message.corr:
                pending = self._pending.pop(message.corr, None)
                if pending is None:
                    return
            try:
                if future is not None:
                    result = await room.ask(message.kind, viewer, message.args, message.request)
                    if not future.done():
                        future.set_result(result)
                else:
                    room.submit(message.kind, viewer, message.args, reply_to)
            except RoomError as exc:
                if future is not None:
                    if not future.done():
                        future.set_exception(exc)
                elif reply_to is not None and self.connections is not None:
                    self.connections.deliver(reply_to, message.kind, room_id, None, exc)
            return

    def _check_deadlines(self) -> None:
        """Answer every request whose time ran out, oldest first (they wait in the order they
        were sent, which is the order of their deadlines), then wait for the next one's."""
        self._watchdog = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        pending = self._pending
        try:
            while pending:
                corr, first = next(iter(pending.items()))
                if first.deadline > now:
                    return
                self._expired(corr)
        finally:  # (also after a failure answering one: the others still get theirs)
            if pending:
                first = next(iter(pending.values()))
                self._watchdog = loop.call_at(first.deadline, self._check_deadlines)

    def _expired(self, corr: int) -> None:
        pending = self._pending.get(corr)
        if pending is not None:
            logger.warning("forward_timeout", room=pending.room, kind=pending.kind)
            self.counters.forward_timeouts += 1
            late = RoomError(
                errors.STORE_FAILED,
                "the server holding this room did not answer in time; retry (a move retried "
                "with its id is applied once)",
            )
            self._settle(corr, None, late)

    def _settle(self, corr: int, result: dict[str, Any] | None, error: RoomError | None) -> None:
        """Give a forwarded request its answer (once; later ones are dropped)."""
        pending = self._pending.pop(corr, None)
        if pending is None:
            return
        if pending.future is not None:
            if not pending.future.done():
                if error is not None:
                    pending.future.set_exception(error)
                else:
                    pending.future.set_result(result or {})
        elif pending.reply_to is not None and self.connections is not None:
            self.connections.deliver(pending.reply_to, pending.kind, pending.room, result, error)

    # -- batches in ----------------------------------------------------------------------------

    def received(self, data: bytes) -> None:
        """A batch from an owner (called by the bus's reader)."""
        owner, seq, items, to = unpack_batch(data)
        if to != self.id:
            self._not_mine(to, items)
            return
        last = self._seq.get(owner, 0)
        if seq <= last:
            # Seen already (a Cluster may deliver a shard channel's message twice while it moves
            # the channel to a new primary), or older than one seen (overtaken on its way: the
            # later one found the gap): what it said was passed on, or its rooms are being
            # synced again and the requests it answered were answered store_failed.
            logger.warning("fleet_batch_again", owner=owner, last=last, got=seq)
            return
        self._seq[owner] = seq
        connections = self.connections
        assert connections is not None
        watching = self._watching
        lost = seq != last + 1
        if lost:
            logger.warning("fleet_batch_lost", owner=owner, expected=last + 1, got=seq)
            self.counters.batches_lost += 1
            for item in items:  # this batch's rooms too: its frames may follow the lost ones
                if item[0] == FRAME and item[2] is not None:
                    watching.setdefault(item[1], {})[item[2]] = owner
            self._lost(owner)
        for item in items:
            what = item[0]
            if what == FRAME:
                connection: int = item[1]
                room: str | None = item[2]
                frame: bytes = item[3]
                if room is None:  # presence and chat: no version to keep
                    connections.push(connection, frame, room)
                    continue
                rooms = watching.get(connection)
                if rooms is None:
                    rooms = watching[connection] = {}
                rooms[room] = owner
                if not connections.push(connection, frame, room):
                    # Closed here (its detach may have been lost): the owner stops sending.
                    watching.pop(connection, None)
                    self.forward(room, "detach", _Gone(connection), {})
            elif what == REPLY:
                _, corr, result, error = item
                refusal = None if error is None else RoomError(error[0], error[1], **error[2])
                self._settle(corr, result, refusal)
            elif what == CLEAR:
                connections.clear_stale(item[1], item[2])
            elif what == MOVED:
                self._moved(item[1])
        if lost:  # (after this batch's own answers)
            self._give_up(lambda served_by: served_by in (owner, _UNKNOWN))

    def _not_mine(self, to: str, items: list[list[Any]]) -> None:
        """A batch for a previous run of this process (it restarted under the same name): its
        connections are gone; the owner is told, as for a connection closed here."""
        for item in items:
            if item[0] == FRAME and item[2] is not None:
                self.forward(item[2], "detach", _Gone(item[1]), {}, as_edge=to)

    def _moved(self, moved: str) -> None:
        """The owner of ``moved`` let it go: its viewers here find it where it is now. That
        may be here: taken for another request (a move of theirs, retried) before this word
        came, the room does not know them, and nothing else would tell them."""
        self._resync(lambda room, owner: room == moved, again=True, here_too=True)

    def _lost(self, owner: str) -> None:
        """A batch of ``owner`` was lost: what it said is unknown, so its rooms start over, and
        so do the rooms no frame has come from yet, wherever they are served (a sync already
        asked for may have been answered in it: asked again). (The requests it may have
        answered are given up by ``received``, once the batch that found it gave its own
        answers.)"""
        self._resync(lambda room, served_by: served_by in (owner, _UNKNOWN), again=True)

    def reconnected(self) -> None:
        """This process's subscriber was away: any batch may have been lost."""
        self._give_up(lambda served_by: True)
        self._resync(lambda room, owner: True, again=True)

    def _give_up(self, which: Callable[[str], bool]) -> None:
        """Answer ``store_failed`` (retryable) the requests waiting here whose room's owner, as
        known here (``_UNKNOWN`` if none is), ``which`` picks: their answers may have been
        in a batch that was lost, and waiting out ``forward_timeout`` would stall their rooms
        (a Cluster failover loses one whenever an edge's channel moves under a batch). The
        syncs the edge asked for by itself are left to :meth:`_resync`."""
        syncs = set(self._syncing.values())
        for corr, pending in list(self._pending.items()):
            if corr in syncs:
                continue
            served_by = _UNKNOWN
            if pending.reply_to is not None:
                served_by = self._watching.get(pending.reply_to.connection, {}).get(
                    pending.room, _UNKNOWN
                )
            if which(served_by):
                self.counters.forwards_given_up += 1
                self._settle(corr, None, RoomError(
                    errors.STORE_FAILED,
                    "the answer may have been lost on its way from the server holding this "
                    "room; retry (a move retried with its id is applied once)",
                ))

    def _resync(
        self, which: Callable[[str, str], bool], again: bool = False, here_too: bool = False
    ) -> None:
        """Sync again every connection's view of the rooms ``which`` picks: its frames are
        dropped until the owner (wherever the room is now) sends a snapshot. ``again``: a sync
        already waiting for its answer is given up and asked anew. A room this process holds
        is passed over (its connections here see it first hand) unless ``here_too``: its sync
        then reaches the owner's side here, which gives the room the connection itself."""
        connections = self.connections
        assert connections is not None
        for connection, rooms in list(self._watching.items()):
            if connections.viewer(connection) is None:
                self._watching.pop(connection, None)
                continue
            for room, owner in list(rooms.items()):
                if which(room, owner) and (here_too or not self.holds(room)):
                    self._sync_again(connection, room, again)

    def _sync_again(self, connection: int, room: str, again: bool = False) -> None:
        """Drop the room's frames on ``connection`` until a snapshot comes, and ask for one:
        once at a time (a room whose owner died is found so at every check until its lease
        runs out), and until it is answered (a sync that failed for no fault of its own, such
        as its answer lost, is asked again)."""
        key = (connection, room)
        waiting = self._syncing.get(key)
        if waiting is not None:
            if again:  # _synced asks anew
                self._settle(waiting, None, RoomError(errors.STORE_FAILED, "asked again"))
            return
        assert self.connections is not None
        viewer = self.connections.viewer(connection)
        if viewer is None:
            return
        self.connections.mark_stale(connection, room)
        # Served by whoever answers the sync: until a frame of it comes, any owner's lost
        # batch may have held the snapshot.
        self._watching.setdefault(connection, {})[room] = _UNKNOWN
        self.counters.resyncs += 1
        done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        done.add_done_callback(lambda answer: self._synced(key, answer))
        self._syncing[key] = self.forward(room, "sync", viewer, {}, future=done)

    def _synced(self, key: tuple[int, str], answer: asyncio.Future[dict[str, Any]]) -> None:
        self._syncing.pop(key, None)
        if answer.cancelled():
            return
        failure = answer.exception()
        if failure is None:
            return
        if isinstance(failure, RoomError) and failure.code in _SYNC_AGAIN and not self.stopped:
            asyncio.get_running_loop().call_later(_RETRY_WAITS[-1], self._sync_again, *key)
        else:  # e.g. the room is gone: nothing to sync
            logger.info("resync_failed", conn=key[0], room=key[1], error=str(failure))

    def forget(self, connection: int) -> None:
        """The connection is closed."""
        self._watching.pop(connection, None)

    # -- owners that are gone ------------------------------------------------------------------

    async def check_owners(self) -> None:
        """Sync again the rooms watched here whose channel nobody listens on any more: their
        owner died (another process, or this one, takes them at lease expiry)."""
        rooms = sorted({room for rooms in self._watching.values() for room in rooms})
        rooms = [room for room in rooms if not self.holds(room)]
        if not rooms:
            return
        counts = await self.bus.numsub([self.keys.room_channel(r).encode() for r in rooms])
        orphaned = {room for room, count in zip(rooms, counts[1::2], strict=True) if not count}
        fresh = orphaned - {room for _, room in self._syncing}
        if fresh:
            logger.warning("owner_gone", rooms=sorted(fresh))
        if orphaned:
            self._resync(lambda room, owner: room in orphaned)



class _Gone:
    """A connection this process no longer holds, as named in the ``detach`` that tells its
    room's owner so."""

    __slots__ = ("id",)

    player = ""
    name = ""
    address = ""

    def __init__(self, connection: int) -> None:
        self.id = connection

    def push(self, frame: bytes, room: str | None = None) -> None:
        pass

    def is_stale(self, room: str) -> bool:
        return True

    def clear_stale(self, room: str) -> None:
        pass
