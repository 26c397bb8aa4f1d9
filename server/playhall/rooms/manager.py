"""The rooms this process holds in memory: loading them from Redis on demand (taking the
room's lease first), creating new ones, and letting idle rooms go. Keeping their leases alive,
restoring rooms that need a server and sweeping for expiry run in the background, in
``keeper``.

A process holds a room only as a cache of what Redis has; evicting it, or losing the process,
loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from typing import Any

from playhall import log
from playhall.caps import Caps
from playhall.catalog import get_game
from playhall.config import Config
from playhall.counters import Counters
from playhall.lobby import Lobby
from playhall.rooms import table, views
from playhall.rooms.actor import Room
from playhall.rooms.audience import Viewer
from playhall.rooms.handle import Fleet, Replies, RoomHandle
from playhall.rooms.ids import is_room_id, new_room_id
from playhall.rooms.listing import Listing
from playhall.rooms.record import RoomRecord
from playhall.rooms.replay import replay, step_entry
from playhall.rooms.table import RoomError, needs_server, no_such_room
from playhall.store.outage import is_store_error, outcome_unknown
from playhall.store.redis_store import Store
from playhall.store.rooms import Commit, LogGap, NoRoom
from playhall.tasks import Tasks, pause
from playhall_protocol import errors

logger = log.get("playhall.rooms")

#: The answer to a create whose first write's reply was lost.
_CREATE_UNKNOWN = (
    "Redis did not answer whether the room was made; if it was, it is the room named here, "
    "made whole (you seated in it unless you asked not to sit), and in your rooms at your next "
    "hello: join it to find out (no_such_room: it was not made; create again)"
)


class LeaseHeld(RoomError):
    """Another process holds the room's lease (it may be a dead one whose lease is running
    out)."""

    def __init__(self) -> None:
        super().__init__(errors.STORE_FAILED, "another server process holds this room")


class RoomManager:
    def __init__(
        self, store: Store, config: Config, lobby: Lobby, replies: Replies,
        counters: Counters | None = None, fleet: Fleet | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.lobby = lobby
        #: Where the rooms' answers to requests go (``rooms.handle``).
        self.replies = replies
        self.caps = Caps(store.players, config)
        self.rooms: dict[str, Room] = {}
        self._loading: dict[str, asyncio.Task[Room]] = {}
        #: Rooms being stored for the first time here: in the active set before they exist (see
        #: ``RoomStore.commit``), which the restore pass must not take for one to load.
        self._creating: set[str] = set()
        self._stopping = Tasks("room stop", logger)
        self.closing = False
        #: Rooms let go while closing that need a server even with no client (timers, bots):
        #: a draining process tells the others to take them at once (``fleet.handover``).
        self.handed_over: list[str] = []
        #: What this process counts (playhall.counters), shared by its rooms and its endpoint.
        self.counters = counters if counters is not None else Counters()
        #: The other processes on the same Redis (``playhall.fleet``); None: this process
        #: alone, refusing rooms another holds (:class:`LeaseHeld`).
        self.fleet = fleet

    def ready(self, room_id: str) -> RoomHandle | None:
        """The handle of a room that takes a request at once, with no wait: one this process
        holds; None otherwise (then :meth:`handle`)."""
        return self.rooms.get(room_id)

    def seated(self, player: str) -> list[RoomHandle]:
        """The handles of the rooms this process holds in which ``player`` has a seat."""
        return [r for r in self.rooms.values() if r.record.seat_of(player) is not None]

    async def handle(self, room_id: str) -> RoomHandle:
        """The handle the network talks to ``room_id`` through: the room's actor if this
        process holds it (or is loading it), else one that forwards to the process that
        does, or takes the room here if none does (``playhall.fleet``). Without a fleet the
        room is loaded here; raises :class:`RoomError`: no such room, or :class:`LeaseHeld`
        when another process holds it."""
        room = self.rooms.get(room_id)
        if room is not None:
            return room
        if self.fleet is None or room_id in self._loading:
            return await self.get(room_id)
        if not is_room_id(room_id):
            raise no_such_room(room_id)
        return self.fleet.remote(room_id)

    def at_once(self, room_id: str) -> RoomHandle | None:
        """The handle of a room that takes a request with no wait: the room's actor if this
        process holds it, else (in a fleet, unless this process is loading it) one that
        forwards to the process that does; None otherwise (then :meth:`handle`)."""
        room = self.rooms.get(room_id)
        if room is not None:
            return room
        if self.fleet is None or room_id in self._loading:
            return None
        return self.fleet.remote(room_id)

    def elsewhere(self, room_id: str) -> RoomHandle | None:
        """A handle that forwards to whichever process holds ``room_id`` (for a request
        nobody waits on); None without a fleet."""
        return None if self.fleet is None else self.fleet.remote(room_id)

    def viewers(self) -> list[tuple[RoomHandle, Viewer]]:
        """Every viewer of every room this process holds, with its room."""
        return [(room, viewer) for room in self.rooms.values()
                for viewer in list(room.audience.viewers)]

    async def get(self, room_id: str) -> Room:
        """The room's actor in this process, loaded from Redis (its lease taken) if need be."""
        room = self.rooms.get(room_id)
        if room is not None:
            return room
        if not is_room_id(room_id):
            raise no_such_room(room_id)
        task = self._loading.get(room_id)
        if task is None:
            task = asyncio.create_task(self._load(room_id))
            self._loading[room_id] = task
            task.add_done_callback(lambda _: self._loading.pop(room_id, None))
        return await asyncio.shield(task)

    async def _load(self, room_id: str) -> Room:
        try:
            lease = await self.store.rooms.acquire(
                room_id, self.config.instance, self.config.lease_ms, existing=True
            )
        except NoRoom:
            raise no_such_room(room_id) from None
        if lease is None:
            raise LeaseHeld()
        try:
            stored = await self.store.rooms.load(room_id)
        except LogGap:
            logger.exception("room_log_gap", room=room_id)
            gap = "its stored log has a gap"
            raise await self._let_go(room_id, lease, errors.STORE_FAILED, gap) from None
        if stored is None:
            missing = no_such_room(room_id)
            raise await self._let_go(room_id, lease, missing.code, missing.reason)
        record = RoomRecord.unpack(stored.record)
        game = get_game(record.game)
        if game is None:
            offered = f"this server does not offer {record.game!r}"
            raise await self._let_go(room_id, lease, errors.NO_SUCH_GAME, offered)
        try:
            record = replay(record, game, stored.since)
        except Exception:
            logger.exception("room_replay_failed", room=room_id, checkpoint=stored.checkpoint)
            reason = "its stored log does not replay"
            raise await self._let_go(room_id, lease, errors.STORE_FAILED, reason) from None
        room = self._adopt(record, lease, stored.checkpoint)
        room.reindex()
        logger.info(
            "room_loaded",
            room=room_id,
            version=record.version,
            status=record.status,
            replayed=len(stored.since),
        )
        return room

    async def _let_go(self, room_id: str, lease: str, code: str, reason: str) -> RoomError:
        """Release the lease of a room that cannot be loaded; the error to raise."""
        await self.store.rooms.release(room_id, lease)
        return RoomError(code, reason)

    def _adopt(self, record: RoomRecord, lease: str, checkpoint: int | None = None) -> Room:
        game = get_game(record.game)
        assert game is not None
        room = Room(
            record,
            game,
            store=self.store,
            config=self.config,
            lobby=self.lobby,
            lease=lease,
            replies=self.replies,
            create_room=self._make_room,
            on_idle=self.evict,
            checkpoint=checkpoint,
            counters=self.counters,
            early=None if self.fleet is None else self.fleet.early,
        )
        self.rooms[record.id] = room
        room.start()
        if self.fleet is not None:
            self.fleet.held(record.id)
        return room

    async def open(
        self,
        game: str,
        options: dict[str, Any],
        seats: int,
        creator: str,
        *,
        private: bool,
        sitting: str | None = None,
        address: str = "",
        request: int | None = None,
        rated: bool | None = None,
        room_id: str | None = None,
    ) -> tuple[RoomHandle, str | None]:
        """A new room of ``game`` (refused by the table's rules if the game, its options or the
        seat count are wrong, and past the creator's caps and those of the client ``address``
        it connects from), stored with its creator in seat 0 under the name ``sitting`` (None:
        they only watch), its actor started: its handle, and its join code if it is private.
        ``request``: the creating request's id, for the log."""
        record = table.create(
            game, options, seats, creator, private=private, room_id=room_id or new_room_id(),
            secret=table.new_secret(), created=time.time(), sitting=sitting, rated=rated,
        )
        finished_with = await self.caps.room_quota(
            creator, address, table.waits_with(record, creator)
        )
        # Listed for its creator before it exists: if Redis then loses the reply to the room's
        # first write, the room (if it was made) is in the creator's "hello" rooms, not an
        # orphan nobody can find. (A set entry for a room that was never made is forgotten
        # the next time the set is read.)
        await self.store.players.add_player_room(creator, record.id)
        if private:
            record = replace(record, code=await self.store.rooms.claim_code(record.id))
        try:
            room = await self.create(record)
        except Exception as exc:
            if not outcome_unknown(exc):
                raise
            self.store.outage.failed(exc, req=request, player=creator)
            unknown = RoomError(errors.STORE_FAILED, _CREATE_UNKNOWN, room=record.id)
            if record.code is not None:  # what the create's reply would have said
                unknown.extra["join_code"] = record.code
            raise unknown from None
        ttl = self.config.player_ttl
        await self.store.players.note_created(creator, record.id, finished_with, ttl)
        return room, record.code

    async def _make_room(self, record: RoomRecord, maker: str, address: str) -> None:
        """Store a room a room's command made (a rematch), asked by ``maker`` from the client
        ``address``: under the same caps as a ``create``, and counted as theirs."""
        finished_with = await self.caps.room_quota(
            maker, address, table.waits_with(record, maker)
        )
        if record.private:
            record = replace(record, code=await self.store.rooms.claim_code(record.id))
        await self._create_stored(record)
        ttl = self.config.player_ttl
        await self.store.players.note_created(maker, record.id, finished_with, ttl)

    async def create(self, record: RoomRecord) -> Room:
        """Store a new room (version 1) and start its actor."""
        await self._create_stored(record)
        return await self.get(record.id)

    async def _create_stored(self, record: RoomRecord) -> None:
        config = self.config
        lease = await self.store.rooms.acquire(record.id, config.instance, config.lease_ms)
        if lease is None:  # pragma: no cover - a fresh random id nobody can hold
            raise RoomError(errors.STORE_FAILED, "could not take the new room's lease")
        first = record.evolve()
        game = get_game(record.game)
        assert game is not None  # table.create and rematches make rooms of offered games
        # Listed for its players first: if the reply to the room's first write is lost, the
        # room (if it was made) is still in their "hello" rooms, never an orphan.
        for seat in first.seats:
            if seat.player is not None:
                await self.store.players.add_player_room(seat.player, record.id)
        # In the lobby from its first write, if it lists (people sit in a public room).
        summary = views.lobby_entry(first, game.title)
        lobby, _, order = Listing(game.title, self.store, self.lobby).commit_fields(summary)
        ttl = table.expiry_ttl(first, self.config.waiting_ttl, self.config.abandoned_ttl)
        self._creating.add(record.id)
        try:
            await self.store.rooms.commit(
                Commit(
                    room=record.id,
                    lease=lease,
                    prev_version=-1,
                    version=first.version,
                    record=first.pack(),
                    log=step_entry(first, "create", None, record.creator, None, None),
                    lobby=lobby,
                    unlist=lobby is None,
                    active=needs_server(first, game),
                    game=record.game,
                    order=order,
                    due=None if ttl is None else time.time() + ttl,
                )
            )
        finally:
            self._creating.discard(record.id)
        self._adopt(first, lease).listing.adopt(first, summary)

    def evict(self, room: Room) -> None:
        """Let an idle (or fenced) room go; safe to call from a timer callback."""
        if self.rooms.get(room.record.id) is room:
            del self.rooms[room.record.id]
            self._stopping.spawn(self._stop(room))

    async def _stop(self, room: Room) -> None:
        await room.stop()
        with contextlib.suppress(Exception):
            await room.listing.unlist(room.record, room.lease)
        with contextlib.suppress(Exception):
            await self.store.rooms.release(room.record.id, room.lease)
            if self.closing and needs_server(room.record, room.game):
                self.handed_over.append(room.record.id)
            ttl = room.expiry_ttl()
            if ttl is not None and room.active_at and not room.discarded:
                # Left alone since then: the expiry check comes a whole ttl after that.
                await self.store.expiry.set_due(room.record.id, room.active_at + ttl)
        if self.fleet is not None and self.rooms.get(room.record.id) is None:
            self.fleet.released(room.record.id)
        logger.info("room_evicted", room=room.record.id, version=room.record.version)
        # A room let go while people watch it, or while it has timers or bots to run, was not
        # idle: its lease was lost. Take it back (unless this process is shutting down); a
        # draining process tells the other processes' viewers to find it where it goes next.
        if self.closing:
            if self.fleet is not None and room.audience.viewers:
                self.fleet.moved(room.record.id, list(room.audience.viewers), closing=True)
        elif room.audience.viewers or needs_server(room.record, room.game):
            await self._reattach(room)

    async def _reattach(self, old: Room) -> None:
        """Load a room again from Redis after its lease was lost (e.g. Redis was away longer
        than the lease) and give every viewer a fresh snapshot, so nobody is left waiting for
        updates, timers or bot moves that would never come. While Redis fails the load (still
        away, or flapping as it comes back) it is tried again every third of the lease time,
        for as long as the room has viewers or work of its own: its viewers are attached to
        the stopped room, and only this brings them to the new one (a client's move would
        load the room, but nobody else would see it)."""
        room_id = old.record.id
        told = False
        while not self.closing:
            try:
                room = await self.get(room_id)
            except RoomError as exc:
                logger.warning(
                    "room_reattach_failed", room=room_id, code=exc.code, reason=exc.reason
                )
                if self.fleet is not None:  # another process has it now: the viewers go there
                    self.fleet.moved(room_id, list(old.audience.viewers), closing=False)
                return
            except Exception as exc:
                if not is_store_error(exc):
                    raise
                self.store.outage.failed(exc, during="reattach", room=room_id)
                if not told:
                    told = True
                    logger.warning("room_reattach_failed", room=room_id, code=errors.STORE_FAILED)
                if not (old.audience.viewers or needs_server(old.record, old.game)):
                    return  # nobody waits on it: it is loaded when next asked for
                await pause(self.config.lease_ms / 3000)
                continue
            if told:  # at the level of the failure it ends, as redis_available is
                logger.warning("room_reattached", room=room_id)
            for viewer in list(old.audience.viewers):
                with contextlib.suppress(RoomError):
                    await room.ask("sync", viewer, {})
            return

    def holds(self, room_id: str) -> bool:
        """Whether this process holds ``room_id`` or is loading it."""
        return room_id in self.rooms or room_id in self._loading or room_id in self._creating

    async def close(self) -> None:
        """Stop every room (each finishes its command in hand) and release the leases."""
        self.closing = True
        for room in list(self.rooms.values()):
            self.evict(room)
        await self._stopping.wait()
