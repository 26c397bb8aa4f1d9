"""The per-player and per-address caps on what costs the server something to keep: rooms
made a minute (by ``create`` or ``rematch``, per player and per client address), waiting rooms
a player made and sits in, renames a minute, and new players registered a minute from one
address. Each is counted in Redis (windowed counters, or the player's set of created rooms), so
every server process sharing it allows together exactly what one would. (Join-code tries are
counted in ``store/code_tries.py``; connections per address in ``net/admission.py``.)
"""

from __future__ import annotations

import math
from typing import Any

from playhall.config import Config
from playhall.rooms import table
from playhall.rooms.record import RoomRecord
from playhall.rooms.table import RoomError
from playhall.store.players import PlayerStore
from playhall_protocol import errors


class Caps:
    def __init__(self, store: PlayerStore, config: Config) -> None:
        self.store = store
        self.config = config

    async def room_quota(self, player: str, address: str, waits: bool) -> list[str]:
        """Refuse a new room made by ``player`` (a ``create``, a ``rematch``) past their caps
        (``waiting_rooms``: rooms they made still waiting with them seated, if the new room is
        one more, ``waits``; ``rooms_per_minute``) or past those of the client ``address``
        (``address_rooms_per_minute``: a new player costs nothing, so the player's caps alone
        do not bound what one client makes); else count it, and answer the rooms they made
        that no longer count (started, left, gone), to be forgotten. A refused room counts
        against no cap. Costs at most ``waiting_rooms`` record reads: the set never holds more
        than the cap and one."""
        done: list[str] = []
        counted = 0
        for room_id, blob in (await self.store.created_rooms(player)).items():
            if blob is not None and table.waits_with(RoomRecord.unpack(blob), player):
                counted += 1
            else:
                done.append(room_id)
        cap = self.config.waiting_rooms
        if waits and cap and counted >= cap:
            raise RoomError(
                errors.TOO_MANY_ROOMS,
                f"you sit in {counted} waiting rooms you created; start or leave one first",
            )
        per_minute = [(f"player:{player}:created", self.config.rooms_per_minute, "")]
        if address:
            per_minute.append((
                f"address:{address}:created", self.config.address_rooms_per_minute,
                " from one address",
            ))
        capped = [(counter, cap, whose) for counter, cap, whose in per_minute if cap]
        if capped:
            full = await self.store.count_under_caps([(c, n) for c, n, _ in capped], 60)
            if full is not None:
                index, left = full
                _, cap, whose = capped[index]
                raise RoomError(
                    errors.TOO_MANY_ROOMS,
                    f"at most {cap} new rooms a minute{whose}; try again in {math.ceil(left)} s",
                    retry_after=round(left, 1),
                )
        return done

    async def rename(self, player: str) -> None:
        """Refuse a rename past ``renames_per_minute`` of ``player``'s (each is a new version of
        every room they sit in)."""
        cap = self.config.renames_per_minute
        if not cap:
            return
        made, left = await self.store.count_in_window(f"player:{player}:renamed", 60)
        if made > cap:
            raise RoomError(
                errors.RATE_LIMITED,
                f"at most {cap} renames a minute; try again in {math.ceil(left)} s",
                retry_after=round(left, 1),
            )

    async def new_player(self, address: str, log: Any, request: int) -> None:
        """Refuse a new player past ``new_players_per_minute`` from ``address``: a new player
        is a record in Redis for ``unused_player_ttl``, and a fresh set of per-player caps,
        for the price of one frame. ``log``: the connection's, told of a refusal."""
        cap = self.config.new_players_per_minute
        if not cap or not address:
            return
        made, left = await self.store.count_in_window(f"address:{address}:players", 60)
        if made > cap:
            log.warning("new_players_refused", req=request, address=address, count=made)
            raise RoomError(
                errors.RATE_LIMITED,
                f"at most {cap} new players a minute from one address; say hello with your "
                f"token, or try again in {math.ceil(left)} s",
                retry_after=round(left, 1),
            )
