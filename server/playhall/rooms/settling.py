"""A commit whose reply was lost: asking Redis whether it was stored.

The connection to Redis dropped after the commit script was sent (or the command's deadline
passed), so the change may or may not be in Redis. The room holds it as ``Room.unsettled`` and
answers nothing from memory until Redis says which (docs/operations.md, "Faults: what clients
see").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from playhall.rooms.table import RoomError
from playhall.store.outage import is_store_error
from playhall.store.rooms import Fenced, VersionConflict
from playhall_protocol import errors

if TYPE_CHECKING:
    from playhall.rooms.actor import Room

#: The answer while Redis cannot be asked.
OUTCOME_UNKNOWN: Final = (
    "Redis did not answer whether the change was stored; retry the same request (a move's"
    " mid makes that safe)"
)

#: Seconds the room waits for Redis to say whether a change was stored, before it answers
#: that the outcome is unknown (the room's other commands wait behind it): half for the first
#: read, half for the read again on a fresh connection.
SETTLE_TIMEOUT: Final = 2.0


async def settle_commit(room: Room) -> None:
    """Resolve ``room.unsettled``. Redis's version of the room is the new one (stored: adopt
    and broadcast it, as if the reply had come) or still the old one (not stored); this
    process's lease token still being there proves nobody else wrote the room meanwhile.
    Raises :class:`RoomError` (``store_failed``, outcome unknown) while Redis cannot be asked,
    :class:`Fenced` if the lease is gone, :class:`VersionConflict` if the room holds yet
    another version."""
    assert room.unsettled is not None
    new, adopt = room.unsettled
    version, token = await _read(room)
    room.unsettled = None
    if token != room.lease:
        raise Fenced(f"lease now {token!r}")
    if version == new.version:
        room.log.info("commit_settled", version=version, stored=True)
        adopt()
    elif version != room.record.version:
        raise VersionConflict(f"VERSION {version}")
    else:
        room.log.info("commit_settled", version=version, stored=False)


async def _read(room: Room) -> tuple[int | None, str | None]:
    """Redis's version of the room and its lease token, asked once more on a fresh connection
    if the first read fails: the fault that lost the commit's reply often reset the pool's
    connections too, while Redis itself answers at once. Raises :class:`RoomError`
    (``store_failed``, outcome unknown) if the second read fails too."""
    failed: BaseException | None = None
    for fresh in (False, True):
        try:
            return await asyncio.wait_for(
                room.store.rooms.version_and_lease(room.record.id, fresh), SETTLE_TIMEOUT / 2
            )
        except Exception as exc:
            if not (is_store_error(exc) or isinstance(exc, TimeoutError)):
                raise
            failed = exc
    assert failed is not None
    room.store.outage.failed(failed, room=room.record.id, during="settling a commit")
    raise RoomError(errors.STORE_FAILED, OUTCOME_UNKNOWN)
