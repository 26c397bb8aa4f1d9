"""Quick play's open tables in Redis, and the atomic claim of a seat at one.

Keys (``p`` is the prefix; ``<pool>`` is ``<game>:<digest of the options>``): a pool and its
tables share the pool's hash tag, so a claim reads and writes them in one script, in one slot.

- ``p seek:{<pool>}``: sorted set of the pool's open quick-play tables, room id -> when it
  opened (ms): oldest first. A table leaves it when its last seat is claimed, when its game
  starts, or when a join at it fails.
- ``p seektable:{<pool>}:<room>``: hash of the table: ``seats``, ``taken`` (seats claimed),
  ``rating``, ``lo``, ``hi`` (its opener's rating and accepted range; empty: any), ``bots`` (1
  if its empty seats are filled by bots at ``due``), ``pool``, ``opened`` (ms), ``opener``;
  expires with the wait for players (``waiting_ttl``).
- ``p seekclaim:{<pool>}:<player>``: the room of the pool where the player's claim holds a
  seat: what makes a claim repeated after a crash (before ``seeker`` was written) find the same
  seat instead of another. Deleted with the claim, expires with the table.
- ``p seeker:{<player>}``: ``<pool> <room>``, the seat the player's seek holds; what makes a
  second seek of the same player find the first's seat instead of a second one. Expires with
  the table.
- ``p seek:due``: sorted set, ``<pool> <room>`` -> when (ms) its empty seats are filled by
  bots and its game starts.

A claim is three single-slot steps: the seeker's key is read (a seat held is the answer); a
seat is claimed in the pool (or a table opened there); the seeker's key is set, unless another
seek of the same player set it meanwhile: then the seat is given back and that one's is the
answer. A seat is given back in the pool first, then the seeker's key dropped: each step
repeated after a crash finds its work done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_text
from playhall.store.pipe import CommandPipe

#: Tables a claim looks at, at most (the oldest of its pool): a claim's cost is bounded.
SCAN: Final = 64
#: Rounds one claim makes at most: a script names every key it touches, so a claim reads the
#: pool's tables and then claims among them; a table opened in between is claimed among in
#: the next round (up to this many), rather than a table of the seeker's own opened beside it.
READS: Final = 16

# KEYS: the pool, the seeker's claim in it, the table the seeker's earlier claim in this pool
# holds a seat at (else their own table's), their own table's, then the tables read from the
# pool. ARGV:
# player, fewest seats, most seats, rating ('' none), lowest and highest table rating accepted
# ('' any), '1' if the seeker accepts bots, the keys' ttl (s), their own table's room id, '1'
# if its bots come, now (ms), the pool's name, the earlier claim's room ('' none), '1' to
# answer {'again', '', the pool's tables} rather than open a table while the pool lists
# tables that were not read (opened since: claim again among them), then the rooms read.
# Returns {'mine', room} when the seeker's claim in the pool is not the one read (another seek
# of the same player claimed since: claim again naming its table, which answers that claim);
# else {'seat', room} (a seat claimed at the table that is fullest, then oldest, of those
# that fit) or {'open', room} (nothing fits: the seeker's own table, in the pool at once, so
# that seekers coming while its room is being made sit at it too); the same again for a
# repeated claim whose seat still stands.
_CLAIM = """
local player, ttl = ARGV[1], tonumber(ARGV[8])
local current = redis.call('GET', KEYS[2])
if current and current ~= ARGV[13] then return {'mine', current} end
if ARGV[13] ~= '' and current == ARGV[13] and redis.call('EXISTS', KEYS[3]) == 1 then
  local opener = redis.call('HGET', KEYS[3], 'opener')
  return {opener == player and 'open' or 'seat', ARGV[13]}
end
local low, high = tonumber(ARGV[2]), tonumber(ARGV[3])
local rating, lo, hi = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local bots = ARGV[7] == '1'
local best, best_key, best_free
for i = 15, #ARGV do
  local room, key = ARGV[i], KEYS[i - 10]
  local t = redis.call('HMGET', key, 'seats', 'taken', 'rating', 'lo', 'hi', 'bots')
  local seats, taken = tonumber(t[1]), tonumber(t[2])
  local fits = seats and taken and seats >= low and seats <= high and taken < seats
    and redis.call('ZSCORE', KEYS[1], room)
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
    best, best_key, best_free = room, key, seats - taken
  end
end
if not best and ARGV[14] == '1' then
  local read = {}
  for i = 15, #ARGV do read[ARGV[i]] = true end
  local listed = redis.call('ZRANGE', KEYS[1], 0, SCAN - 1)
  for _, room in ipairs(listed) do
    if not read[room] then return {'again', '', listed} end
  end
end
local room = best or ARGV[9]
if best then
  local taken = redis.call('HINCRBY', best_key, 'taken', 1)
  if taken >= tonumber(redis.call('HGET', best_key, 'seats')) then
    redis.call('ZREM', KEYS[1], best)
  end
else
  redis.call('HSET', KEYS[4], 'seats', high, 'taken', 1, 'rating', ARGV[4], 'lo', ARGV[5],
    'hi', ARGV[6], 'bots', ARGV[10], 'pool', ARGV[12], 'opened', ARGV[11], 'opener', player)
  redis.call('EXPIRE', KEYS[4], ttl)
  if high > 1 then redis.call('ZADD', KEYS[1], ARGV[11], room) end
end
redis.call('SET', KEYS[2], room, 'EX', ttl)
return {best and 'seat' or 'open', room}
""".replace("SCAN", str(SCAN))

# KEYS: the seeker's key. ARGV: their claim ('<pool> <room>'), the ttl (s). Sets the key unless
# it holds another claim already. Returns what the key holds.
_HOLD = """
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
"""

# KEYS: the table, the pool, the player's claim in it. ARGV: room. The seat the player's claim holds
# at the table is free again, and the table (still open) goes back in its pool. Returns 1 if a
# seat was given back (0: none was held, or it was given back before).
_GIVE_BACK = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[3])
local t = redis.call('HMGET', KEYS[1], 'taken', 'opened', 'seats')
if not t[1] then return 1 end
local taken = redis.call('HINCRBY', KEYS[1], 'taken', -1)
if taken > 0 and taken < tonumber(t[3]) then redis.call('ZADD', KEYS[2], t[2], ARGV[1]) end
return 1
"""

# KEYS: a key. ARGV: the value it must hold to be deleted (the seeker's key and its claim, the
# claim in the pool and its room).
_DROP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""


@dataclass(frozen=True)
class Claim:
    """A seat a seek holds (or a table it opened): the pool and the room."""

    pool: str
    room: str

    def __str__(self) -> str:
        return f"{self.pool} {self.room}"

    @classmethod
    def parse(cls, stored: bytes | str) -> Claim:
        pool, _, room = as_text(stored).rpartition(" ")
        return cls(pool, room)


class SeekStore:
    def __init__(self, redis: aioredis.Redis, pipe: CommandPipe, keys: Keys) -> None:
        self.redis = redis
        #: For :meth:`holding`, asked as every player leaves a room (every game's end).
        self.pipe = pipe
        self._claim = redis.register_script(_CLAIM)
        self._hold = redis.register_script(_HOLD)
        self._give_back = redis.register_script(_GIVE_BACK)
        self._drop = redis.register_script(_DROP)
        self.pool_key = keys.seek_pool_key
        self.table_key = keys.seek_table_key
        self.claim_key = keys.seek_claim_key
        self.seeker_key = keys.seeker_key
        self.due_key = keys.seek_due_key()

    async def claim(
        self, pool: str, player: str, seats: tuple[int, int], rating: int | None,
        accepted: tuple[int | None, int | None], bots_at: int | None, new_room: str,
        now_ms: int, ttl: int,
    ) -> tuple[str, Claim]:
        """``('held', claim)`` (the seeker holds a seat already, maybe in another pool),
        ``('seat', claim)`` or ``('open', claim of new_room)`` (see ``_CLAIM``);
        ``bots_at``: when the bots of a table of the seeker's own come (ms), None: never (and
        the seeker is not seated at tables that have them)."""
        held = await self.holding(player)
        if held is not None:
            return "held", held
        listed, before = await self._read_pool(pool, player)
        rounds = 0
        while True:
            rooms = [as_text(room) for room in listed]
            keys = [
                self.pool_key(pool), self.claim_key(pool, player),
                self.table_key(pool, before or new_room), self.table_key(pool, new_room),
                *(self.table_key(pool, room) for room in rooms),
            ]
            args: list[str | int] = [
                player, seats[0], seats[1], _or_empty(rating), _or_empty(accepted[0]),
                _or_empty(accepted[1]), "0" if bots_at is None else "1", ttl,
                new_room, "0" if bots_at is None else "1", now_ms, pool, before,
                "1" if rounds < READS - 1 else "0", *rooms,
            ]
            reply: list[Any] = await self._claim(keys=keys, args=args)
            what = as_text(reply[0])
            if what == "again":
                listed = reply[2]
            elif what == "mine":  # a concurrent seek of this player claimed: that claim stands
                before = as_text(reply[1])
            else:
                break
            rounds += 1
        claim = Claim(pool, as_text(reply[1]))
        holds = Claim.parse(
            await self._hold(keys=[self.seeker_key(player)], args=[str(claim), ttl])
        )
        if holds != claim:  # another seek of this player was quicker: theirs stands
            await self._give_seat_back(claim, player)
            if what == "open":
                await self.close(claim)
            return "held", holds
        if what == "open" and bots_at is not None:
            await self.redis.zadd(self.due_key, {str(claim): bots_at})
        return what, claim

    async def _read_pool(self, pool: str, player: str) -> tuple[list[Any], str]:
        """The pool's oldest tables, and the room of ``player``'s claim in it ("" none): read
        before the claim, which may find both changed by then."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrange(self.pool_key(pool), 0, SCAN - 1)
            pipe.get(self.claim_key(pool, player))
            listed, earlier = await pipe.execute()
        return listed, "" if earlier is None else as_text(earlier)

    async def exists(self, claim: Claim) -> bool:
        """Whether ``claim``'s room is still a quick-play table (being opened, or open)."""
        return bool(await self.redis.exists(self.table_key(claim.pool, claim.room)))

    async def release(self, claim: Claim, player: str) -> bool:
        """Give back ``player``'s claimed seat at ``claim``'s table; False if they held none
        there. The seat first, then the seeker's key: cut short between the two, a release
        run again finds the seat given back and drops the key."""
        if await self.holding(player) != claim:
            return False
        await self._give_seat_back(claim, player)
        await self.drop_holder(player, claim)
        return True

    async def _give_seat_back(self, claim: Claim, player: str) -> None:
        keys = [
            self.table_key(claim.pool, claim.room), self.pool_key(claim.pool),
            self.claim_key(claim.pool, player),
        ]
        await self._give_back(keys=keys, args=[claim.room])

    async def holding(self, player: str) -> Claim | None:
        held = await self.pipe.call(b"GET", self.seeker_key(player).encode())
        return None if held is None else Claim.parse(held)

    async def drop_holder(self, player: str, claim: Claim) -> None:
        """Forget that ``player`` holds a seat at ``claim`` (its game started, or it is gone),
        unless they hold another now."""
        await self._drop(keys=[self.seeker_key(player)], args=[str(claim)])
        await self._drop(keys=[self.claim_key(claim.pool, player)], args=[claim.room])

    async def close(self, claim: Claim) -> None:
        """Take ``claim``'s room out of quick play: its game started, or a join at it failed."""
        async with self.redis.pipeline(transaction=True) as pipe:  # (the pool's slot)
            pipe.zrem(self.pool_key(claim.pool), claim.room)
            pipe.delete(self.table_key(claim.pool, claim.room))
            await pipe.execute()
        await self.redis.zrem(self.due_key, str(claim))

    async def due(self, now_ms: int, limit: int) -> list[Claim]:
        rows: list[Any] = await self.redis.zrangebyscore(
            self.due_key, "-inf", now_ms, start=0, num=limit
        )
        return [Claim.parse(row) for row in rows]

    async def take_due(self, claim: Claim) -> bool:
        """Whether this caller is the one to fill ``claim``'s room with bots (one process
        wins)."""
        return bool(await self.redis.zrem(self.due_key, str(claim)))

    async def retry_due(self, claim: Claim, when_ms: int) -> None:
        await self.redis.zadd(self.due_key, {str(claim): when_ms})


def _or_empty(value: int | None) -> str:
    return "" if value is None else str(value)

