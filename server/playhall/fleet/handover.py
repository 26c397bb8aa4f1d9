"""A draining process's rooms with timers or bots, handed to the other processes at once.

At a drain a process stops its rooms and releases their leases (``rooms.manager``). A room
that someone views elsewhere comes back by itself: its viewers' edges are told ``MOVED`` and
sync, and the first sync makes its process take the room (``fleet.edge``). A room nobody views
whose clock runs, or whose bot or stand-in is to move, has nobody to ask for it: without this
it would wait for another process's restore pass (``rooms.keeper``, every ``lease_ms/3``),
its clock's time-out and its bot's move late by as much.

So once its rooms are stopped the draining process publishes the ids of those that need a
server (``RoomManager.handed_over``) on the channel ``<prefix>{fleet}:handover``, as msgpack
``[instance, [room id, ...]]``. Each process that hears it takes its share at once: the rooms
whose choice among the live processes that are not draining (the registry, ``store.fleet``) is
itself, by highest random weight (:func:`chosen`), so the rooms spread evenly over the fleet
and no two processes race for one. A room whose chosen process does not take it (it died or
is draining meanwhile, or lost Redis) is loaded by a restore pass, as without a handover.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import msgpack

from playhall import log
from playhall.store.bus import Bus
from playhall.store.fleet import Member
from playhall.store.keys import Keys
from playhall.store.outage import Outage, is_store_error
from playhall.tasks import Tasks
from playhall_protocol.codec import pack

logger = log.get("playhall.fleet")

#: Room ids per message: a drain of many rooms is told in several, none of them large.
CHUNK: Final = 500


def chosen(room_id: str, instances: Sequence[str]) -> str | None:
    """The process of ``instances`` that takes ``room_id`` (None if there is none): the one
    whose hash with the room is highest. Every process computes the same from the same list,
    and a process that joins or leaves moves only the rooms it wins or had won."""
    if not instances:
        return None
    return max(instances, key=lambda instance: _weight(room_id, instance))


def _weight(room_id: str, instance: str) -> bytes:
    # A hash every process computes alike (Python's own hash() is salted per process).
    return hashlib.blake2b(f"{instance}\0{room_id}".encode(), digest_size=8).digest()


class Handover:
    def __init__(
        self, bus: Bus, keys: Keys, instance: str,
        members: Callable[[], Awaitable[list[Member]]],
        take: Callable[[list[str]], Awaitable[int]], outage: Outage,
    ) -> None:
        self.bus = bus
        self.instance = instance
        #: The live processes of the registry (``FleetStore.members``).
        self.members = members
        #: Loads the given rooms now; the number loaded (``Keeper.take_over``).
        self.take = take
        self.outage = outage
        self.channel = keys.handover.encode()
        #: Messages on the channel that were not a handover (dropped; the first is logged).
        self.strangers = 0
        self._taking = Tasks("handover", logger)

    async def start(self) -> None:
        await self.bus.subscribe(self.channel, self._heard)

    async def tell(self, room_ids: list[str]) -> None:
        """Publish ``room_ids`` (rooms this draining process let go that need a server) for
        the other processes to take."""
        if not room_ids:
            return
        try:
            for start in range(0, len(room_ids), CHUNK):
                await self.bus.publish(
                    self.channel, pack([self.instance, room_ids[start:start + CHUNK]])
                )
        except Exception as exc:
            if not is_store_error(exc):
                raise
            # Not told: the others' restore passes load them, within lease_ms/3.
            self.outage.failed(exc, during="handover")
            return
        logger.info("rooms_handed_over", rooms=len(room_ids))

    def _heard(self, data: bytes) -> None:
        told = _decode(data)
        if told is None:
            self.strangers += 1
            if self.strangers == 1:
                logger.warning("handover_not_understood", size=len(data))
            return
        origin, room_ids = told
        if origin != self.instance:
            self._taking.spawn(self._take_share(origin, room_ids))

    async def _take_share(self, origin: str, room_ids: list[str]) -> None:
        try:
            members = await self.members()
        except Exception as exc:
            if not is_store_error(exc):
                raise
            self.outage.failed(exc, during="handover")
            return
        live = [member.instance for member in members if not member.draining]
        mine = [room_id for room_id in room_ids if chosen(room_id, live) == self.instance]
        if mine:
            taken = await self.take(mine)
            logger.info("rooms_taken_over", origin=origin, rooms=len(mine), loaded=taken)


def _decode(data: bytes) -> tuple[str, list[str]] | None:
    """A handover's sender and room ids, or None if ``data`` is not one."""
    try:
        told: Any = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError):  # not msgpack; a map with a key Python cannot hash
        return None
    if not (isinstance(told, list) and len(told) == 2):
        return None
    origin, room_ids = told
    if not (isinstance(origin, str) and isinstance(room_ids, list)
            and all(isinstance(room_id, str) for room_id in room_ids)):
        return None
    return origin, room_ids
