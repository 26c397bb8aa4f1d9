"""The per-player and per-address caps on what costs the server something to keep: rooms
made a minute (by ``create`` or ``rematch``, per player and per client address), waiting rooms
a player made and sits in, renames a minute, new players registered a minute from one
address, and the connections one address holds at once. Each is counted in Redis
(windowed counters, the player's set of created rooms, the address's set of connections),
so every server process sharing it allows together exactly what one would.

Connections are counted twice: by the process that holds them, from the moment each is accepted
(HTTP 429, ``net/admission.py``: what guards the process's file descriptors, and needs no round
trip), and on every process together, at ``hello`` (:meth:`Caps.connection`), before which a
connection can do nothing. A process renews its connections' count every third of ``lease_ms``
(``Endpoint.keep_counted``), so those of a process that died lapse within ``lease_ms``.
Join-code tries are counted in Redis too, by ``store/code_tries.py``. What stays per process:
the plain HTTP requests an address may make a second (``http_rate``, ``net/ratelimit.py``),
answered before any round trip to Redis.
"""

from __future__ import annotations

import math
from typing import Any

from playhall.config import Config
from playhall.rooms import table
from playhall.rooms.record import RoomRecord
from playhall.rooms.table import RoomError, retry_after
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
        keys = self.store.keys
        per_minute = [
            (keys.player_counter_key(player, "created"), self.config.rooms_per_minute, "")
        ]
        if address:
            per_minute.append((
                keys.address_counter_key(address, "created"), self.config.address_rooms_per_minute,
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
                    retry_after=retry_after(left),
                )
        return done

    async def rename(self, player: str) -> None:
        """Refuse a rename past ``renames_per_minute`` of ``player``'s (each is a new version of
        every room they sit in)."""
        cap = self.config.renames_per_minute
        if not cap:
            return
        made, left = await self.store.count_in_window(
            self.store.keys.player_counter_key(player, "renamed"), 60
        )
        if made > cap:
            raise RoomError(
                errors.RATE_LIMITED,
                f"at most {cap} renames a minute; try again in {math.ceil(left)} s",
                retry_after=retry_after(left),
            )

    async def connection(self, address: str, member: str) -> bool:
        """Count connection ``member`` (``"<instance>:<connection id>"``) against ``address``
        on every process together; refuse it past ``connections_per_address``. False: not
        counted (no cap, or no address)."""
        cap = self.config.connections_per_address
        if not cap or not address:
            return False
        if await self.store.admit_connection(address, member, cap, self.config.lease_ms):
            return True
        raise RoomError(
            errors.RATE_LIMITED,
            f"at most {cap} connections at once from one address, on every server together; "
            "close one, then say hello again",
            retry_after=retry_after(self.config.lease_ms / 3000),
        )

    async def new_player(self, address: str, log: Any, request: int) -> None:
        """Refuse a new player past ``new_players_per_minute`` from ``address``: a new player
        is a record in Redis for ``unused_player_ttl``, and a fresh set of per-player caps,
        for the price of one frame. ``log``: the connection's, told of a refusal."""
        cap = self.config.new_players_per_minute
        if not cap or not address:
            return
        made, left = await self.store.count_in_window(
            self.store.keys.address_counter_key(address, "players"), 60
        )
        if made > cap:
            log.warning("new_players_refused", req=request, address=address, count=made)
            raise RoomError(
                errors.RATE_LIMITED,
                f"at most {cap} new players a minute from one address; say hello with your "
                f"token, or try again in {math.ceil(left)} s",
                retry_after=retry_after(left),
            )
