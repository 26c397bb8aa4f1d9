"""Everything Playhall keeps in Redis, one object per key family (the key layout is
``keys``; the Lua scripts and how they run, ``scripts``):

- ``rooms`` (:class:`RoomStore`): a room's record, log, chat, lease, fence and join code, and
  the fenced commit that changes it;
- ``lobby`` (:class:`LobbyStore`): the listing, read a page at a time;
- ``players`` (:class:`PlayerStore`): players, the rooms they sit in or created, and the
  windowed counters behind the per-player and per-address caps;
- ``expiry`` (:class:`ExpiryStore`): when each unfinished room is next checked for expiry;
- ``fleet`` (:class:`FleetStore`): the server processes alive on this Redis;
- ``refused`` (:class:`RefusedAddresses`): the client addresses an operator refuses for a time.

(Join-code tries are kept apart, by ``code_tries``.)

:class:`Store` holds them over one redis-py client (reads and small writes) and one command
pipe (commits and every per-move command: group commit, see ``pipe``), and tells /healthz when
Redis last answered and the outage log whether it is away.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from playhall.store.expiry import ExpiryStore
from playhall.store.fleet import FleetStore
from playhall.store.keys import Keys
from playhall.store.lobby import LobbyStore
from playhall.store.outage import Outage
from playhall.store.pipe import CommandPipe
from playhall.store.players import PlayerStore
from playhall.store.refused import RefusedAddresses
from playhall.store.rooms import RoomStore
from playhall.store.scripts import SCRIPT_LOADS


class Store:
    def __init__(
        self, client: aioredis.Redis, pipe: CommandPipe, prefix: str = "ph:", player_ttl: int = 0
    ) -> None:
        self.redis = client
        self.pipe = pipe
        pipe.on_answer = self._answered
        pipe.preamble = list(SCRIPT_LOADS)
        self.keys = Keys(prefix)
        self.rooms = RoomStore(client, pipe, self.keys)
        self.lobby = LobbyStore(client, pipe, self.keys)
        self.players = PlayerStore(client, pipe, self.keys, player_ttl)
        self.expiry = ExpiryStore(client, pipe, self.keys)
        self.fleet = FleetStore(pipe, self.keys)
        self.refused = RefusedAddresses(client, self.keys)
        #: When Redis last answered (monotonic seconds), for /healthz.
        self.answered_at = time.monotonic()
        #: Whether Redis is away now, for logging an outage once (see ``outage``).
        self.outage = Outage()
        self.rooms.outage = self.outage

    def _answered(self) -> None:
        self.answered_at = time.monotonic()
        if self.outage.since is not None:
            self.outage.answered()

    def close(self) -> None:
        self.pipe.close()
