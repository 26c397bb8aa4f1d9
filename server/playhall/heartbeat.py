"""This process's entry in the fleet registry (``playhall.store.fleet``): written once at start,
renewed every third of ``lease_ms`` (so one lost heartbeat does not drop a live process), said
to be draining as soon as the drain starts, and deleted at the end of a clean shutdown.

The process counts as registered until the time to live of its last heartbeat that Redis
answered runs out (timed from before it was sent, so never later than Redis' own expiry):
``/healthz`` answers 503 while it is not, and at start until the first heartbeat is stored.
"""

from __future__ import annotations

import asyncio
import time

from playhall import __version__, log
from playhall.store.fleet import FleetStore, Member
from playhall.store.outage import Outage, is_store_error
from playhall.tasks import cancel_and_wait, pause

logger = log.get("playhall.fleet")


class Heartbeat:
    def __init__(self, fleet: FleetStore, outage: Outage, instance: str, lease_ms: int) -> None:
        self.fleet = fleet
        self.outage = outage
        self.instance = instance
        self.lease_ms = lease_ms
        self.started = time.time()
        self.draining = False
        #: Until when (monotonic seconds) the last stored heartbeat keeps this process listed.
        self._until = 0.0
        self._task: asyncio.Task[None] | None = None

    def member(self) -> Member:
        return Member(self.instance, self.started, __version__, self.draining)

    def listed(self) -> bool:
        """Whether the registry lists this process now (as far as this process can know)."""
        return time.monotonic() < self._until

    async def beat(self) -> bool:
        """Renew the entry once; whether Redis stored it (a failure counts in the outage log:
        the next beat tries again)."""
        sent = time.monotonic()
        try:
            await self.fleet.beat(self.member(), self.lease_ms)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            self.outage.failed(exc, during="fleet heartbeat")
            return False
        self._until = sent + self.lease_ms / 1000
        return True

    async def start(self) -> None:
        """Register (once, now) and keep the entry renewed until :meth:`leave`."""
        await self.beat()
        self._task = asyncio.create_task(self._beat_forever())

    async def _beat_forever(self) -> None:
        while True:
            await pause(self.lease_ms / 3000)
            try:
                await self.beat()
            except Exception:  # a bug: logged, and the next beat tries again
                logger.exception("fleet_heartbeat_failed")

    async def drain(self) -> None:
        """Say at once that this process is draining (the renewals go on saying it)."""
        self.draining = True
        await self.beat()

    async def leave(self) -> None:
        """Stop renewing and delete the entry (else it expires after ``lease_ms``)."""
        await cancel_and_wait(self._task)
        self._until = 0.0
        try:
            await self.fleet.leave(self.instance)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            self.outage.failed(exc, during="fleet leave")
