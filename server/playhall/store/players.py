"""Players in Redis: their records, the rooms each holds a seat in, the rooms each created, and
the windowed counters that cap what one player or one client address may do a minute. Every
counter is a key in Redis, so every server process sharing it counts the same events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, Final, NamedTuple

import redis.asyncio as aioredis

from playhall.store import scripts
from playhall.store.keys import Keys, as_text
from playhall.store.pipe import CommandPipe

# Count one event under the counter KEYS[1], kept for a window of ARGV[1] ms from its first
# event, unless it already holds its cap (ARGV[2]). Returns {1, when its window ends (Unix ms,
# by Redis' clock)} or, refused, {0, the ms left of its window}.
COUNT_UNDER_CAP: Final = scripts.Script.of("""
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[2]) then return {0, redis.call('PTTL', KEYS[1])} end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local now = redis.call('TIME')
local ends = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  + redis.call('PTTL', KEYS[1])
return {1, tostring(ends)}
""")

# Count back down an event COUNT_UNDER_CAP counted in the window ending at ARGV[1] (Unix ms),
# if that window is still the counter's: one that ended took its count with it, and a later
# window's events are not this one's to take. (Windows of one counter end at least a window
# apart; the ms of slack covers the clock's reading.)
UNCOUNT: Final = scripts.Script.of("""
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
local now = redis.call('TIME')
local ends = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + ttl
if math.abs(ends - tonumber(ARGV[1])) > 1000 then return 0 end
if tonumber(redis.call('GET', KEYS[1])) <= 0 then return 0 end
redis.call('DECR', KEYS[1])
return 1
""")

# ARGV[1], a room, added to the set KEYS[1] of the rooms a player made, and ARGV[3...] taken out
# of it (they no longer count); the set kept ARGV[2] seconds (0: forever).
NOTE_CREATED: Final = scripts.Script.of("""
if #ARGV > 2 then redis.call('SREM', KEYS[1], unpack(ARGV, 3)) end
redis.call('SADD', KEYS[1], ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1
""")


class StoredPlayer(NamedTuple):
    name: str
    token_hash: str
    #: Whether the player has sat down, created a room or chatted.
    used: bool


class PlayerStore:
    def __init__(
        self, client: aioredis.Redis, pipe: CommandPipe, keys: Keys, player_ttl: int = 0
    ) -> None:
        self.redis = client
        self.pipe = pipe
        self.keys = keys
        #: Seconds a player is kept after their last hello (0: forever): for their room set.
        self.player_ttl = player_ttl

    # -- the player's record -----------------------------------------------------------------

    async def create_player(self, player: str, name: str, token_hash: str, ttl: int) -> None:
        """Store a new player, marked unused (``n``) and kept ``ttl`` seconds (0: forever),
        in one transaction: a record is never left without its expiry."""
        key = self.keys.player_key(player)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(key, mapping={"name": name, "th": token_hash, "n": 1})
        if ttl > 0:
            pipe.expire(key, ttl)
        await pipe.execute()

    async def player_used(self, player: str, ttl: int) -> None:
        """The player sat down, created a room or chatted: no longer unused, kept ``ttl``
        seconds from now (0: forever)."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hdel(self.keys.player_key(player), "n")
        for key in (self.keys.player_key(player), self.keys.player_rooms_key(player)):
            if ttl > 0:  # the room set too: see hello
                pipe.expire(key, ttl)
            else:
                pipe.persist(key)
        await pipe.execute()

    async def touch_player(self, player: str, ttl: int) -> None:
        """Keep a player (and their room list) for ``ttl`` more seconds; 0: forever."""
        if ttl > 0:
            pipe = self.redis.pipeline(transaction=False)
            pipe.expire(self.keys.player_key(player), ttl)
            pipe.expire(self.keys.player_rooms_key(player), ttl)
            await pipe.execute()

    async def player(self, player: str) -> StoredPlayer | None:
        name, token_hash, unused = await self.redis.hmget(
            self.keys.player_key(player), ["name", "th", "n"]
        )
        if name is None or token_hash is None:
            return None
        return StoredPlayer(as_text(name), as_text(token_hash), unused is None)

    async def rename_player(self, player: str, name: str) -> None:
        await self.redis.hset(self.keys.player_key(player), "name", name)

    # -- the rooms a player sits in ----------------------------------------------------------
    # A player joining or leaving is on the path of every game (a rematch joins a new room and
    # leaves the old one), so it goes on the command pipe: a plain command there costs a tenth
    # of one through redis-py's client.

    async def add_player_room(self, player: str, room: str) -> None:
        """Add to the player's room set, which expires with the player's record."""
        keys = [self.keys.player_rooms_key(player), self.keys.player_key(player)]
        args = [room, str(self.player_ttl * 1000)]
        await scripts.call(self.pipe, scripts.ADD_PLAYER_ROOM, keys, args)

    async def remove_player_room(self, player: str, room: str) -> None:
        key = self.keys.player_rooms_key(player).encode()
        await self.pipe.call(b"SREM", key, room.encode())

    async def player_rooms(self, player: str) -> list[str]:
        """The rooms the player holds a seat in; rooms that have expired are forgotten here."""
        key = self.keys.player_rooms_key(player)
        rooms = sorted(as_text(m) for m in await self.redis.smembers(key))
        if not rooms:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for room in rooms:
            pipe.exists(self.keys.room_key(room))
        alive = await pipe.execute()
        gone = [room for room, exists in zip(rooms, alive, strict=True) if not exists]
        if gone:
            await self.redis.srem(key, *gone)
        return [room for room, exists in zip(rooms, alive, strict=True) if exists]

    # -- connections per client address -----------------------------------------------------
    # Counted on the command pipe: while it is connected, a connection's release and the
    # renewals are queued as they are called, in that order, so a renewal never brings back a
    # connection released before it (across a reconnection, one may: it lapses in ttl_ms).

    async def admit_connection(self, address: str, member: str, cap: int, ttl_ms: int) -> bool:
        """Count connection ``member`` against ``address`` if the address holds fewer than
        ``cap`` connections on every process together (False: it holds that many). The count
        lapses ``ttl_ms`` after the last renewal (:meth:`renew_connections`)."""
        keys = [self.keys.connections_key(address)]
        args = [member, str(int(time.time() * 1000)), str(ttl_ms), str(cap)]
        return bool(await scripts.call(self.pipe, scripts.ADMIT, keys, args))

    def renew_connections(self, held: dict[str, list[str]], ttl_ms: int) -> list[Awaitable[Any]]:
        """Keep the connections ``held`` (address -> members) counted ``ttl_ms`` more, each
        address two commands in one write; their replies, to await."""
        lapses = str(int(time.time() * 1000) + ttl_ms).encode()
        ttl = str(ttl_ms).encode()
        calls = []
        for address, members in held.items():
            key = self.keys.connections_key(address).encode()
            words = [b"ZADD", key]
            for member in members:
                words += [lapses, member.encode()]
            calls.append(self.pipe.call(*words))
            calls.append(self.pipe.call(b"PEXPIRE", key, ttl))
        return calls

    def release_connection(self, address: str, member: str) -> Awaitable[Any]:
        """Stop counting ``member`` against ``address``; its reply, to await."""
        key = self.keys.connections_key(address).encode()
        return self.pipe.call(b"ZREM", key, member.encode())

    # -- the rooms a player created, and the caps --------------------------------------------

    async def count_in_window(self, key: str, window: int) -> tuple[int, float]:
        """Count one event under the counter ``key`` (e.g. ``Keys.player_counter_key``): how
        many in its current ``window`` seconds, and the seconds left of that window. The
        counter is one key that expires with its window, so it is shared by every server
        process and costs nothing once quiet."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(key, 0, ex=window, nx=True)
        pipe.incr(key)
        pipe.pttl(key)
        _, count, left_ms = await pipe.execute()
        return int(count), max(0, int(left_ms)) / 1000

    async def count_under_caps(
        self, counters: list[tuple[str, int]], window: int
    ) -> tuple[int, float] | None:
        """Count one event under each ``(counter key, cap)`` (as :meth:`count_in_window`
        does), all or none: if a counter already holds ``cap`` events in its current
        ``window`` seconds, none is counted and the answer is that counter's place in
        ``counters`` and the seconds left of its window; else None.

        The counters are in different hash slots (a player's, an address's), so each is
        counted by a script of its own, in turn, and those counted before a full one are
        counted back down. Each count is atomic under its cap, so concurrent events of several
        server processes never count past a cap, and a refused event leaves nothing counted
        (unless this process dies between a count and its undoing: then that one event stays
        counted until its window ends). Meanwhile a concurrent event may see a count that is
        about to be undone, and be refused: a race can refuse one event too many, never admit
        one."""
        counted: list[tuple[str, bytes]] = []
        try:
            for place, (key, cap) in enumerate(counters):
                ok, value = await scripts.call(
                    self.pipe, COUNT_UNDER_CAP, [key], [str(window * 1000), str(cap)]
                )
                if not ok:
                    return place, max(0, int(value)) / 1000
                counted.append((key, value))
            counted.clear()
            return None
        finally:
            for key, ends in counted:  # (a refusal, or a failure midway)
                await scripts.call(self.pipe, UNCOUNT, [key], [as_text(ends)])

    async def created_rooms(self, player: str) -> dict[str, bytes | None]:
        """The rooms ``player`` created and noted with :meth:`note_created`: id -> the stored
        record (None once the room is gone)."""
        key = self.keys.player_made_key(player).encode()
        rooms = sorted(as_text(m) for m in await self.pipe.call(b"SMEMBERS", key))
        if not rooms:
            return {}
        blobs = await asyncio.gather(
            *(self.pipe.call(b"HGET", self.keys.room_key(room).encode(), b"d") for room in rooms)
        )
        return {room: blob for room, blob in zip(rooms, blobs, strict=True)}

    async def note_created(
        self, player: str, room: str, forget: list[str], ttl: int
    ) -> None:
        """Add ``room`` to the rooms ``player`` created, ``forget`` others (they no longer
        count), keep the set ``ttl`` seconds (0: forever)."""
        key = self.keys.player_made_key(player)
        await scripts.call(self.pipe, NOTE_CREATED, [key], [room, str(ttl), *forget])
