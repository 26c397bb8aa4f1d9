"""Finished games in Redis: each player's history, their counts and ratings, the leaderboards,
and the games still to be written.

Keys (``p`` is the prefix):

- ``p game:<room>``: the game's compact record (msgpack), kept ``history_ttl``. Its presence is
  what makes the write once-only: the script that writes it checks it first, in the same
  script as every count and rating it changes.
- ``p history:<player>``: sorted set of the player's games (room ids) by finish time in
  milliseconds; entries older than ``history_ttl`` are dropped as new ones come, and at most
  ``HISTORY_KEEP`` are kept; the set expires ``history_ttl`` after the player's last game.
- ``p stats:<player>``: hash, per game id ``<game>:w``, ``:l``, ``:d`` (counts) and the rating's
  ``:mu``, ``:sigma``, ``:at`` (last rated game, epoch seconds), ``:n`` (rated games); expires
  with the history.
- ``p leaderboard:<game>``: sorted set of players by ``mu``, those whose rating was no longer
  provisional after their last game.
- ``p results:due`` (sorted set of room ids by when the game ended, ms) and
  ``p results:expect`` (hash: room id -> what the finished record alone does not say, i.e. the
  seats a stand-in was playing): written before the commit that ends a game, removed by the
  write; what a process that died in between left undone (playhall.results sweeps it).
"""

from __future__ import annotations

from typing import Any, Final

import msgpack
import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_text

#: Games kept per player's history at most (older ones are dropped first).
HISTORY_KEEP: Final = 1000

# KEYS: game record, results:due, results:expect, the game's leaderboard, then per player their
# history and stats. ARGV: room, record blob, ttl (s; 0 keeps), finish time (ms), game id,
# rated ('1' or '0'), then per player seven: id, result letter ('' none), the rated-game count
# the new rating was made from, mu, sigma, at, and '1' to list them on the leaderboard ('0':
# take them off).
# Returns 0 (written before: nothing done), -1 (a rating moved since it was read: nothing done,
# read it again) or 1 (written).
_RECORD = """
local room, ttl, at, game = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local rated = ARGV[6] == '1'
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('ZREM', KEYS[2], room)
  redis.call('HDEL', KEYS[3], room)
  return 0
end
local players = (#KEYS - 4) / 2
if rated then
  for i = 1, players do
    local n = redis.call('HGET', KEYS[4 + 2 * i], game .. ':n') or '0'
    if n ~= ARGV[6 + (i - 1) * 7 + 3] then return -1 end
  end
end
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[2])
end
for i = 1, players do
  local history, stats = KEYS[3 + 2 * i], KEYS[4 + 2 * i]
  local base = 6 + (i - 1) * 7
  local player = ARGV[base + 1]
  redis.call('ZADD', history, at, room)
  if ttl > 0 then
    redis.call('ZREMRANGEBYSCORE', history, '-inf', '(' .. (at - ttl * 1000))
    redis.call('EXPIRE', history, ttl)
  end
  redis.call('ZREMRANGEBYRANK', history, 0, -KEEP - 1)
  local result = ARGV[base + 2]
  if result ~= '' then redis.call('HINCRBY', stats, game .. ':' .. result, 1) end
  if rated then
    redis.call('HSET', stats, game .. ':mu', ARGV[base + 4], game .. ':sigma', ARGV[base + 5],
      game .. ':at', ARGV[base + 6], game .. ':n', tonumber(ARGV[base + 3]) + 1)
    if ARGV[base + 7] == '1' then
      redis.call('ZADD', KEYS[4], ARGV[base + 4], player)
    else
      redis.call('ZREM', KEYS[4], player)
    end
  end
  if ttl > 0 then redis.call('EXPIRE', stats, ttl) end
end
redis.call('ZREM', KEYS[2], room)
redis.call('HDEL', KEYS[3], room)
return 1
""".replace("KEEP", str(HISTORY_KEEP))


class RatingMoved(Exception):
    """A player's rating changed between its read and the write: read it again."""


class ResultsStore:
    def __init__(self, redis: aioredis.Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._record = redis.register_script(_RECORD)
        self.game_key = keys.game_key
        self.history_key = keys.history_key
        self.stats_key = keys.stats_key
        self.leaderboard_key = keys.leaderboard_key
        self.due_key = keys.results_due_key()
        self.expect_key = keys.results_expect_key()

    # -- the games still to write ----------------------------------------------------------------

    async def expect(self, room: str, at_ms: int, note: dict[str, Any]) -> None:
        """Note that ``room``'s game is about to end (before the commit that ends it)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(self.due_key, {room: at_ms})
            pipe.hset(self.expect_key, room, msgpack.packb(note))
            await pipe.execute()

    async def due(self, before_ms: int, limit: int) -> list[tuple[str, int, dict[str, Any]]]:
        """Up to ``limit`` games noted before ``before_ms``: room, when, the note."""
        rooms: list[Any] = await self.redis.zrangebyscore(
            self.due_key, "-inf", before_ms, start=0, num=limit, withscores=True
        )
        if not rooms:
            return []
        notes = await self.redis.hmget(self.expect_key, [room for room, _ in rooms])
        return [
            (as_text(room), int(at), msgpack.unpackb(note) if note else {})
            for (room, at), note in zip(rooms, notes, strict=True)
        ]

    async def note(self, room: str) -> tuple[int, dict[str, Any]] | None:
        """When ``room``'s game was noted as due, and the note; None if it is not."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zscore(self.due_key, room)
            pipe.hget(self.expect_key, room)
            at, note = await pipe.execute()
        if at is None:
            return None
        return int(at), msgpack.unpackb(note) if note else {}

    async def forget(self, room: str) -> None:
        """Drop a noted game that did not end after all (its commit was not made)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self.due_key, room)
            pipe.hdel(self.expect_key, room)
            await pipe.execute()

    async def recorded(self, room: str) -> bool:
        return bool(await self.redis.exists(self.game_key(room)))

    # -- the once-only write ---------------------------------------------------------------------

    async def ratings(self, game: str, players: list[str]) -> list[list[Any]]:
        """Each player's stored ``mu``, ``sigma``, ``at``, ``n`` for ``game`` (None: none)."""
        fields = [f"{game}:mu", f"{game}:sigma", f"{game}:at", f"{game}:n"]
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hmget(self.stats_key(player), fields)
            return list(await pipe.execute())

    async def write(
        self, room: str, blob: bytes, ttl: int, at_ms: int, game: str, rated: bool,
        people: list[tuple[str, str, int, float, float, float, bool]],
    ) -> bool:
        """Write a finished game once: the record, each person's history entry and count and,
        if ``rated``, their new rating (``people``: player, result letter, the rated-game count
        the rating was made from, mu, sigma, at, listed on the leaderboard). False if it was
        written before; :class:`RatingMoved` if a rating changed since it was read."""
        keys = [self.game_key(room), self.due_key, self.expect_key, self.leaderboard_key(game)]
        args: list[Any] = [room, blob, ttl, at_ms, game, "1" if rated else "0"]
        for player, result, n, mu, sigma, when, listed in people:
            keys += [self.history_key(player), self.stats_key(player)]
            args += [player, result, str(n), repr(mu), repr(sigma), repr(when)]
            args.append("1" if listed else "0")
        answer = int(await self._record(keys=keys, args=args))
        if answer < 0:
            raise RatingMoved(room)
        return answer == 1

    # -- reads -----------------------------------------------------------------------------------

    async def history(
        self, player: str, before: tuple[int, str] | None, limit: int
    ) -> list[tuple[str, int]]:
        """The player's games (room, finish ms), newest first, ``limit`` at most, from just
        after ``before`` (the last one of the previous page; games that ended in the same
        millisecond are ordered by room id, highest first)."""
        top: int | str = "+inf" if before is None else before[0]
        # Ties at ``before``'s millisecond that were on the previous page come first; fetching
        # that many more keeps the page full (they are few: one player's games in one ms).
        rows: list[Any] = await self.redis.zrevrangebyscore(
            self.history_key(player), top, "-inf", start=0, num=limit + 8, withscores=True
        )
        page = []
        for member, score in rows:
            room, at = as_text(member), int(score)
            if before is not None and at == before[0] and room >= before[1]:
                continue
            page.append((room, at))
            if len(page) == limit:
                break
        return page

    async def games(self, rooms: list[str]) -> list[dict[str, Any] | None]:
        """The stored records of these games (None where one has expired)."""
        if not rooms:
            return []
        blobs = await self.redis.mget([self.game_key(room) for room in rooms])
        return [msgpack.unpackb(blob) if blob else None for blob in blobs]

    async def stats(self, player: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self.stats_key(player))
        return {as_text(k): as_text(v) for k, v in raw.items()}

    async def leaders(self, game: str, start: int, count: int) -> list[str]:
        """Players on ``game``'s leaderboard, best first, from place ``start`` (0-based)."""
        key = self.leaderboard_key(game)
        rows: list[Any] = await self.redis.zrevrange(key, start, start + count - 1)
        return [as_text(row) for row in rows]

    async def unlist(self, game: str, players: list[str]) -> None:
        """Take players whose stats have expired off ``game``'s leaderboard."""
        if players:
            await self.redis.zrem(self.leaderboard_key(game), *players)

