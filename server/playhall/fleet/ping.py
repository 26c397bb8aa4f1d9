"""Round trips between this process and the other processes of the fleet, timed over the bus:
what a hop through Redis costs the fleet as it runs, measured by its own busy processes.

Every ``fleet_ping_every`` seconds this process publishes an ask to the ping channel of other
live processes of the registry (``<prefix>ping:{<instance>}``), as msgpack
``[0, asker, number]``: to each of them in a fleet of up to :data:`PEERS_PER_ROUND` others, and
to the next :data:`PEERS_PER_ROUND` of them in turn in a bigger one (so what a fleet publishes
for its pings grows with its size, not with its square). A process that hears an ask
publishes ``[1, itself, number]`` on the asker's ping channel at once, from the bus's read
callback. The asker times each answer, from just before its publish to the answer read, into
``playhall_fleet_round_trip_seconds``: two publishes through Redis, each read by a process that
is also serving its rooms, as a forwarded request and its answer are (``fleet.edge``,
``fleet.owner``), without the request's own work. So it is the floor under what forwarding
adds to a move, and an operator's view of the bus.

A round that finds Redis failing is skipped, and not told to the outage log. An ask nobody
listened to (the process went) is forgotten; one heard but not answered within
``timeout`` counts as lost (``playhall_fleet_pings_lost_total``). Messages on the channel that
are not a ping are dropped, the first logged.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgpack

from playhall import log
from playhall.counters import Counters
from playhall.store.bus import Bus
from playhall.store.fleet import Member
from playhall.store.keys import Keys
from playhall.store.outage import is_store_error
from playhall.tasks import cancel_and_wait, pause
from playhall_protocol.codec import pack

logger = log.get("playhall.fleet")

ASK: Final = 0
ANSWER: Final = 1

#: The most other processes one round asks. In a fleet of more, each pair is timed every
#: ⌈(N − 1) / PEERS_PER_ROUND⌉ rounds.
PEERS_PER_ROUND: Final = 8


class Pings:
    def __init__(
        self, bus: Bus, keys: Keys, instance: str,
        members: Callable[[], Awaitable[list[Member]]], *, every: float, timeout: float,
        refresh: float, counters: Counters,
    ) -> None:
        self.bus = bus
        self.keys = keys
        self.instance = instance
        #: The live processes of the registry (``FleetStore.members``), read every ``refresh``
        #: seconds (not per round of asks).
        self.members = members
        self.every = every
        self.timeout = timeout
        self.refresh = refresh
        self.counters = counters
        self.channel = keys.ping_channel(instance).encode()
        #: Ask number -> when it was published (``time.perf_counter``), until answered or lost.
        self.pending: dict[int, float] = {}
        #: Messages on the channel that were not a ping (dropped; the first is logged).
        self.strangers = 0
        self._numbers = itertools.count(1)
        #: Where the next round starts in the list of peers (a fleet of more than
        #: PEERS_PER_ROUND others).
        self._turn = 0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Answer asks from now; ask every ``every`` seconds (0: never)."""
        await self.bus.subscribe(self.channel, self.heard)
        if self.every > 0:
            self._task = asyncio.get_running_loop().create_task(self._ask_forever())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    def ask_round(self, peers: list[str]) -> None:
        """One round: ask each of ``peers`` (instance names, in an order that stays put from
        round to round), or the next :data:`PEERS_PER_ROUND` of them in turn."""
        if len(peers) <= PEERS_PER_ROUND:
            self.ask(peers)
            return
        start = self._turn % len(peers)
        self._turn = (start + PEERS_PER_ROUND) % len(peers)
        self.ask([peers[(start + i) % len(peers)] for i in range(PEERS_PER_ROUND)])

    def ask(self, peers: list[str]) -> None:
        """Publish one ask to each of ``peers`` (instance names), written at once."""
        for peer in peers:
            number = next(self._numbers)
            self.pending[number] = time.perf_counter()
            self.bus.publish_then(
                self.keys.ping_channel(peer).encode(), pack([ASK, self.instance, number]),
                functools.partial(self._published, number), at_once=True,
            )

    def heard(self, data: bytes) -> None:
        message = _decode(data)
        if message is None:
            self.strangers += 1
            if self.strangers == 1:
                logger.warning("ping_not_understood", size=len(data))
            return
        kind, sender, number = message
        if kind == ASK:
            self.bus.publish_then(
                self.keys.ping_channel(sender).encode(), pack([ANSWER, self.instance, number]),
                _ignore, at_once=True,
            )
            return
        sent = self.pending.pop(number, None)
        if sent is not None:
            self.counters.round_trip(time.perf_counter() - sent)

    def _published(self, number: int, listeners: Any, failure: BaseException | None) -> None:
        if failure is not None or not listeners:
            # Not sent, or nobody listened (the process went): no answer will come, and no
            # round trip was lost on the way.
            self.pending.pop(number, None)

    def expire(self, now: float) -> None:
        """Count as lost the asks published before ``now - timeout`` and still unanswered."""
        late = [n for n, sent in self.pending.items() if now - sent > self.timeout]
        for number in late:
            del self.pending[number]
        self.counters.pings_lost += len(late)

    async def _ask_forever(self) -> None:
        peers: list[str] = []
        read = -self.refresh
        while True:
            await pause(self.every)
            now = time.perf_counter()
            self.expire(now)
            try:
                if now - read >= self.refresh:
                    read = now
                    peers = sorted(member.instance for member in await self.members()
                                   if member.instance != self.instance)
                self.ask_round(peers)
            except Exception as exc:
                # Redis failing: the round is skipped, and the outage is told by the parts
                # that serve players (a ping only measures; were it told first, the outage's
                # one log line would name the ping, not what players met).
                if not is_store_error(exc):  # a bug: logged, and the next round asks again
                    logger.exception("fleet_ping_failed")


def _ignore(listeners: Any, failure: BaseException | None) -> None:
    """An answer is not followed up: an asker that is gone, or a Redis that failed, loses it,
    and the asker counts it lost."""


def _decode(data: bytes) -> tuple[int, str, int] | None:
    """A ping's kind, sender and number, or None if ``data`` is not one."""
    try:
        message: Any = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError):  # not msgpack; a map with a key Python cannot hash
        return None
    if not (isinstance(message, list) and len(message) == 3):
        return None
    kind, sender, number = message
    if kind not in (ASK, ANSWER) or not isinstance(sender, str) or type(number) is not int:
        return None
    return kind, sender, number
