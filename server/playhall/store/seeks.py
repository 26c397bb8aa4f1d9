"""Quick play's open tables in Redis, and the atomic claim of a seat at one.

Keys (``p`` is the prefix):

- ``p seek:<pool>``: sorted set of the open quick-play tables of one game and one set of
  options (``<pool>`` is ``<game>:<digest of the options>``), room id -> when it opened (ms):
  oldest first. A table leaves it when its last seat is claimed, when its game starts, or when a
  join at it fails.
- ``p seektable:<room>``: hash of the table: ``seats``, ``taken`` (seats claimed), ``rating``,
  ``lo``, ``hi`` (its opener's rating and accepted range; empty: any), ``bots`` (1 if its empty
  seats are filled by bots at ``due``), ``pool``, ``opened`` (ms); expires with the wait for
  players (``waiting_ttl``).
- ``p seeker:<player>``: the room the player's seek holds a seat at; what makes a second seek
  of the same player find the first's seat instead of a second one. Expires with the table.
- ``p seek:due``: sorted set, room id -> when (ms) its empty seats are filled by bots and its
  game starts.
"""

from __future__ import annotations

from typing import Any, Final

import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_text

#: Tables a claim looks at, at most (the oldest of its pool): a claim's cost is bounded.
SCAN: Final = 64

# KEYS: the pool, the seeker's key, seek:due. ARGV: player, fewest seats, most seats, rating
# ('' none), lowest and highest table rating accepted ('' any), '1' if the seeker accepts bots,
# the key prefix, the keys' ttl (s), then for a table of their own: its room id, when its bots
# come (ms; '' never), now (ms), the pool's name. Returns {'held', room} (the seeker already
# holds a seat), {'seat', room} (a seat claimed at the table that is fullest, then oldest, of
# those that fit) or {'open', room} (nothing fits: the seeker's own table, in the pool at once,
# so that seekers coming while its room is being made sit at it too).
_CLAIM = """
local held = redis.call('GET', KEYS[2])
if held then return {'held', held} end
local low, high = tonumber(ARGV[2]), tonumber(ARGV[3])
local rating, lo, hi = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local bots = ARGV[7] == '1'
local best, best_free
for _, room in ipairs(redis.call('ZRANGE', KEYS[1], 0, SCAN - 1)) do
  local t = redis.call('HMGET', ARGV[8] .. 'seektable:' .. room,
    'seats', 'taken', 'rating', 'lo', 'hi', 'bots')
  local seats, taken = tonumber(t[1]), tonumber(t[2])
  local fits = seats and taken and seats >= low and seats <= high and taken < seats
  if fits and t[6] == '1' and not bots then fits = false end
  local trating, tlo, thi = tonumber(t[3] or ''), tonumber(t[4] or ''), tonumber(t[5] or '')
  if fits and (tlo or thi) then
    fits = rating ~= nil and (not tlo or rating >= tlo) and (not thi or rating <= thi)
  end
  if fits and (lo or hi) then
    fits = trating ~= nil and (not lo or trating >= lo) and (not hi or trating <= hi)
  end
  if not seats then redis.call('ZREM', KEYS[1], room) end
  if fits and (not best or seats - taken < best_free) then
    best, best_free = room, seats - taken
  end
end
local ttl = tonumber(ARGV[9])
if best then
  local key = ARGV[8] .. 'seektable:' .. best
  local taken = redis.call('HINCRBY', key, 'taken', 1)
  if taken >= tonumber(redis.call('HGET', key, 'seats')) then
    redis.call('ZREM', KEYS[1], best)
  end
  redis.call('SET', KEYS[2], best, 'EX', ttl)
  return {'seat', best}
end
local room = ARGV[10]
local key = ARGV[8] .. 'seektable:' .. room
redis.call('HSET', key, 'seats', high, 'taken', 1, 'rating', ARGV[4], 'lo', ARGV[5],
  'hi', ARGV[6], 'bots', ARGV[11] ~= '' and '1' or '0', 'pool', ARGV[13], 'opened', ARGV[12])
redis.call('EXPIRE', key, ttl)
if high > 1 then redis.call('ZADD', KEYS[1], ARGV[12], room) end
if ARGV[11] ~= '' then redis.call('ZADD', KEYS[3], ARGV[11], room) end
redis.call('SET', KEYS[2], room, 'EX', ttl)
return {'open', room}
""".replace("SCAN", str(SCAN))

# KEYS: the table, the seeker's key. ARGV: room, the key prefix. The seeker gives their claimed
# seat back (cancelled, or the join failed): if the key names this room, the seat is free again
# and the table (still open) goes back in its pool. Returns 1 if a seat was given back.
_RELEASE = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
local t = redis.call('HMGET', KEYS[1], 'taken', 'pool', 'opened', 'seats')
if not t[1] then return 1 end
local taken = redis.call('HINCRBY', KEYS[1], 'taken', -1)
if taken > 0 and taken < tonumber(t[4]) then
  redis.call('ZADD', ARGV[2] .. 'seek:' .. t[2], t[3], ARGV[1])
end
return 1
"""

# KEYS: the seeker's key. ARGV: the room it must name to be deleted.
_DROP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""


class SeekStore:
    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.p = keys.p  # (the claim script names the tables' keys from it)
        self._claim = redis.register_script(_CLAIM)
        self._release = redis.register_script(_RELEASE)
        self._drop = redis.register_script(_DROP)
        self.pool_key = keys.seek_pool_key
        self.table_key = keys.seek_table_key
        self.seeker_key = keys.seeker_key
        self.due_key = keys.seek_due_key()

    async def claim(
        self, pool: str, player: str, seats: tuple[int, int], rating: int | None,
        accepted: tuple[int | None, int | None], bots_at: int | None, new_room: str,
        now_ms: int, ttl: int,
    ) -> tuple[str, str]:
        """``('held', room)``, ``('seat', room)`` or ``('open', new_room)`` (see ``_CLAIM``);
        ``bots_at``: when the bots of a table of the seeker's own come (ms), None: never (and
        the seeker is not seated at tables that have them)."""
        args: list[str | int] = [
            player, seats[0], seats[1], _or_empty(rating), _or_empty(accepted[0]),
            _or_empty(accepted[1]), "0" if bots_at is None else "1", self.p, ttl,
            new_room, _or_empty(bots_at), now_ms, pool,
        ]
        keys = [self.pool_key(pool), self.seeker_key(player), self.due_key]
        reply: list[Any] = await self._claim(keys=keys, args=args)
        return as_text(reply[0]), as_text(reply[1])

    async def exists(self, room: str) -> bool:
        """Whether ``room`` is still a quick-play table (being opened, or open)."""
        return bool(await self.redis.exists(self.table_key(room)))

    async def release(self, room: str, player: str) -> bool:
        """Give back ``player``'s claimed seat at ``room``; False if they held none there."""
        keys = [self.table_key(room), self.seeker_key(player)]
        return bool(await self._release(keys=keys, args=[room, self.p]))

    async def holding(self, player: str) -> str | None:
        held = await self.redis.get(self.seeker_key(player))
        return None if held is None else as_text(held)

    async def drop_holder(self, player: str, room: str) -> None:
        """Forget that ``player`` holds a seat at ``room`` (its game started, or it is gone),
        unless they hold another now."""
        await self._drop(keys=[self.seeker_key(player)], args=[room])

    async def close(self, room: str) -> None:
        """Take ``room`` out of quick play: its game started, or a join at it failed."""
        pool = await self.redis.hget(self.table_key(room), "pool")
        async with self.redis.pipeline(transaction=True) as pipe:
            if pool is not None:
                pipe.zrem(self.pool_key(as_text(pool)), room)
            pipe.zrem(self.due_key, room)
            pipe.delete(self.table_key(room))
            await pipe.execute()

    async def due(self, now_ms: int, limit: int) -> list[str]:
        rows: list[Any] = await self.redis.zrangebyscore(
            self.due_key, "-inf", now_ms, start=0, num=limit
        )
        return [as_text(row) for row in rows]

    async def take_due(self, room: str) -> bool:
        """Whether this caller is the one to fill ``room`` with bots (one process wins)."""
        return bool(await self.redis.zrem(self.due_key, room))

    async def retry_due(self, room: str, when_ms: int) -> None:
        await self.redis.zadd(self.due_key, {room: when_ms})


def _or_empty(value: int | None) -> str:
    return "" if value is None else str(value)

