"""The background work that keeps a process's rooms served, apart from any client: renewing the
leases of the rooms it holds (letting go of those it lost) and, with each renewal, making sure
Redis has the rooms it holds in the shared indexes (lobby, active set, expiry index) as they
are (an entry lost in a fault, or between a commit and its index write, is written again by
its owner); the restore pass (loading every room that needs a server, timers or bots, and has
none); and the expiry sweeper (handing rooms due for their expiry check to their actors). Each
is a loop of its own over the room manager (:class:`playhall.rooms.manager.RoomManager`), which
it drives only through its public methods.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Final

import msgpack

from playhall import log
from playhall.lobby import lobby_order
from playhall.rooms import views
from playhall.rooms.manager import LeaseHeld, RoomManager
from playhall.rooms.table import RoomError
from playhall.store.outage import is_store_error
from playhall.tasks import cancel_and_wait, pause
from playhall_protocol import errors

logger = log.get("playhall.rooms")

#: Seconds to the next renewal after one Redis failed, wholly or for some slots.
RENEW_AGAIN_AFTER: Final = 0.25
#: Rooms the restore pass (and a drain's handover) loads at once: their round trips to Redis
#: overlap, and the command pipe sends what they ask in one write.
LOADS_AT_ONCE: Final = 16


class Keeper:
    def __init__(self, rooms: RoomManager) -> None:
        self.rooms = rooms
        self.store = rooms.store
        self.config = rooms.config
        self._tasks: list[asyncio.Task[None]] = []
        #: Rooms of the active set whose loading failed (logged once each).
        self._restore_failed: set[str] = set()

    def start(self) -> None:
        """Start the three loops (after :meth:`restore_active`, at start)."""
        self._tasks = [
            asyncio.create_task(self._renew_forever()),
            asyncio.create_task(self._restore_forever()),
            asyncio.create_task(self._sweep_forever()),
        ]

    async def stop(self) -> None:
        """Cancel the three loops and wait until each has ended: one inside a Redis call ends
        there, or, where redis-py lost the cancel, when the call returns (bounded by the Redis
        timeout) at its next ``pause``."""
        await cancel_and_wait(*self._tasks)

    def _failed(self, exc: Exception, during: str, bug: str) -> None:
        """A background pass raised (called in its ``except``): Redis failing counts in the
        outage log, anything else is a bug, logged as ``bug`` with its traceback. Either way
        the next pass comes as usual."""
        if is_store_error(exc):
            self.store.outage.failed(exc, during=during)
        else:
            logger.exception(bug)

    # -- leases --------------------------------------------------------------------------------

    async def _renew_forever(self) -> None:
        interval = self.config.lease_ms / 3000
        wait = interval
        while True:
            await pause(wait)
            held = self.rooms.rooms
            # After a failed renewal, the next comes soon, not a third of the lease later: a
            # Cluster's primary replaced while its rooms' leases ran on would otherwise leave
            # them one try (by then too late) between the promotion and their expiry.
            wait = min(interval, RENEW_AGAIN_AFTER)
            try:
                renewal = await self.store.rooms.renew(
                    {rid: room.lease for rid, room in held.items()}, self.config.lease_ms
                )
            except Exception as exc:
                self._failed(exc, "lease renewal", "lease_renew_failed")
                continue
            if not renewal.unrenewed:
                wait = interval
            for room_id in renewal.lost:
                room = held.get(room_id)
                if room is not None:
                    logger.warning("lease_lost", room=room_id)
                    self.rooms.evict(room)
            await self._reassert_indexes()

    async def _reassert_indexes(self) -> None:
        """Put right each room this process holds whose entries in the shared indexes Redis has
        otherwise than the room says: its listing (summary and index member, or none), its
        place in the active set and the expiry index, its join code's expiry. These are
        written after (or before) the room's commit by writes of their own, in other hash
        slots than the room's (``store.rooms.RoomStore.commit``): one lost to a fault or to a
        hand edit, or a stale one, comes back here, within one renewal of the lease (one left
        by a process that died, when the room is next loaded: a load reindexes). Reads only
        (a few commands per :data:`RENEW_BATCH` rooms), and a write (the room's own
        ``reindex``, after the commands before it) only where something is wrong: a room whose
        entries are right is left alone and nobody is told."""
        held = dict(self.rooms.rooms)
        if not held:
            return
        listings = {rid: room.listing.summary for rid, room in held.items()}
        placed = {rid: room.placed() for rid, room in held.items()}
        listed = []
        for rid, room in held.items():
            summary = listings[rid]
            entry = summary if summary is not None else views.lobby_summary(room.record, "")
            blob = msgpack.packb(summary) if summary is not None else b""
            listed.append((rid, room.record.game, lobby_order(entry), blob))
        try:
            listing, indexes = await asyncio.gather(
                self.store.lobby.drift(listed), self.store.rooms.index_drift(list(placed.values()))
            )
        except Exception as exc:
            self._failed(exc, "index check", "index_check_failed")
            return
        for room_id in listing | indexes:
            checked = held[room_id]
            # (A room that changed meanwhile was checked against its old entries: the next
            # renewal checks it again.)
            if (
                self.rooms.rooms.get(room_id) is checked
                and checked.listing.summary is listings[room_id]
                and checked.placed() == placed[room_id]
            ):  # fmt: skip
                logger.warning("indexes_restored", room=room_id)
                checked.reindex()

    # -- restoring rooms that need a server ------------------------------------------------------

    async def restore_active(self) -> int:
        """Load every room that needs a server even with no client (timers, bots to move) and
        is held by no other live process; the number loaded. Rooms whose lease another
        process still holds (perhaps a dead one, until its lease runs out) are left to
        :meth:`_restore_forever`."""
        count, _ = await self._restore_pass()
        return count

    async def _restore_forever(self) -> None:
        """Keep loading the rooms that need a server and have none: those a dead process held,
        as soon as its lease runs out, and any that lost their lease here while nobody was
        attached (a Redis outage longer than the lease)."""
        while not self.rooms.closing:
            try:
                _, wait = await self._restore_pass()
            except Exception:  # a bug: logged, and the next pass tries again
                logger.exception("restore_pass_failed")
                wait = self.config.lease_ms / 3000
            await pause(wait)

    async def _restore_pass(self) -> tuple[int, float]:
        """Try once every room of the active set this process does not hold; the number
        loaded, and the seconds until the next pass is worth making: a third of the lease
        time, or sooner when a lease that kept a room from us runs out sooner."""
        wait = self.config.lease_ms / 3000
        try:
            active = await self.store.rooms.active_rooms()
        except Exception as exc:
            if not is_store_error(exc):
                raise
            self.store.outage.failed(exc, during="restore")
            return 0, wait
        count, held = await self._load_each(active, during="restore")
        for room_id, refusal in held:
            self._note_restore_failed(room_id, refusal.code, refusal.reason)
        try:
            ttls = await asyncio.gather(*(self.store.rooms.lease_ttl(r) for r, _ in held))
        except Exception as exc:
            if not is_store_error(exc):
                raise
            self.store.outage.failed(exc, during="restore")
            return count, wait
        return count, min([wait, *(max(ttl_ms, 0) / 1000 + 0.02 for ttl_ms in ttls)])

    async def take_over(self, room_ids: list[str]) -> int:
        """Load now the rooms a draining process handed to this one (``fleet.handover``),
        rather than at the next restore pass; the number loaded. A room another process took
        first (a viewer of it asked there) is left to it."""
        count, _ = await self._load_each(room_ids, during="handover")
        return count

    async def _load_each(
        self, room_ids: Iterable[str], during: str
    ) -> tuple[int, list[tuple[str, LeaseHeld]]]:
        """Load each of ``room_ids`` that this process does not hold, for its timers or bots,
        :data:`LOADS_AT_ONCE` at a time; the number loaded, and the rooms another process
        holds (with its refusal). A room gone from Redis is taken out of the active set; one
        that cannot be loaded is logged (once). Redis failing ends the pass (counted once in
        the outage log as ``during``): the next one tries the rest."""
        loaded = 0
        held: list[tuple[str, LeaseHeld]] = []
        pending = iter(room_ids)  # shared: each loader takes the next room not taken yet
        failed = False

        async def load_next() -> None:
            nonlocal loaded, failed
            for room_id in pending:
                if failed or self.rooms.closing:
                    return
                if self.rooms.holds(room_id):
                    continue
                try:
                    try:
                        await self.rooms.get(room_id)
                    except LeaseHeld as exc:
                        held.append((room_id, exc))
                        continue
                    except RoomError as exc:
                        if exc.code == errors.NO_SUCH_ROOM:  # gone (deleted, expired)
                            await self.store.rooms.forget(room_id)
                        else:
                            self._note_restore_failed(room_id, exc.code, exc.reason)
                        continue
                except Exception as exc:
                    if not is_store_error(exc):
                        raise
                    if not failed:
                        failed = True
                        self.store.outage.failed(exc, during=during, room=room_id)
                    return
                self._restore_failed.discard(room_id)
                loaded += 1

        async with asyncio.TaskGroup() as loaders:
            for _ in range(LOADS_AT_ONCE):
                loaders.create_task(load_next())
        return loaded, held

    def _note_restore_failed(self, room_id: str, code: str, reason: str) -> None:
        """Log a room of the active set that could not be loaded, the first time only (it is
        tried again every pass)."""
        if room_id not in self._restore_failed:
            self._restore_failed.add(room_id)
            logger.warning("room_restore_failed", room=room_id, code=code, reason=reason)

    # -- expiry --------------------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        """Sweep (:meth:`_sweep`) every so often, for the life of the process: Redis failing
        a sweep (away, stalled, a connection reset) counts in the outage log, a bug is logged,
        and either way the next sweep comes as usual (the rooms still due wait for it)."""
        ttls = [t for t in (self.config.waiting_ttl, self.config.abandoned_ttl) if t > 0]
        if not ttls:
            return
        interval = min(30.0, max(0.05, min(ttls) / 2))
        while True:
            await pause(interval)
            try:
                await self._sweep()
            except Exception as exc:
                self._failed(exc, "expiry sweep", "expiry_sweep_failed")

    async def _sweep(self) -> None:
        """Hand each room due for its expiry check (``ExpiryStore.due``) to its actor, loading
        it if need be (``rooms.commands.expire`` decides)."""
        for room_id, when in await self.store.expiry.due(time.time(), 200):
            try:
                room = await self.rooms.get(room_id)
            except RoomError as exc:
                if exc.code == errors.NO_SUCH_ROOM:  # gone already (e.g. by hand)
                    await self.store.expiry.drop_due(room_id)
                continue  # another process holds it: that one checks it
            room.post_expiry(when)
