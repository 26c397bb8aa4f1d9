"""Finished games in Redis: each player's history, their counts and ratings, the leaderboards,
and the games still to be written.

Keys (``p`` is the prefix):

- ``p game:{<room>}``: the game's compact record (msgpack), kept ``history_ttl``. Its presence is
  what makes the write once-only: the first step of the write sets it if it is not there.
- ``p stats:{<player>}:holds``: hash, game id -> ``<room>|<until>``: the write of a rated game
  of the player's that holds their rating for the game (ms at most ``HOLD_MS``).
- ``p game:{<room>}:rows``: what the write decided for each player (msgpack), from its first
  step until its last, so a write finished after a crash applies what was decided.
- ``p history:{<player>}``: sorted set of the player's games (room ids) by finish time in
  milliseconds; entries older than ``history_ttl`` are dropped as new ones come, and at most
  ``HISTORY_KEEP`` are kept; the set expires ``history_ttl`` after the player's last game.
- ``p stats:{<player>}``: hash, per game id ``<game>:w``, ``:l``, ``:d`` (counts) and the rating's
  ``:mu``, ``:sigma``, ``:at`` (last rated game, epoch seconds), ``:n`` (rated games); expires
  with the history.
- ``p leaderboard:<game>``: sorted set of players by ``mu``, those whose rating was no longer
  provisional after their last game.
- ``p {results}:due`` (sorted set of room ids by when the game ended, ms) and
  ``p {results}:expect`` (hash: room id -> what the finished record alone does not say, i.e. the
  seats a stand-in was playing): written before the commit that ends a game, removed by the
  write's last step; what a process that died in between left undone (playhall.results sweeps it).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import msgpack
import redis.asyncio as aioredis

from playhall.store import scripts
from playhall.store.keys import Keys, as_text
from playhall.store.pipe import CommandPipe

#: Games kept per player's history at most (older ones are dropped first).
HISTORY_KEEP: Final = 1000

#: Seconds the decided rows of a game are kept for a write to be finished after a crash (the
#: sweep finishes it within seconds; they are deleted as soon as the write is done).
ROWS_TTL: Final = 7 * 24 * 3600

# The once-only step, in the room's slot. KEYS: the game's record, its decided rows. ARGV: the
# record blob, the rows (msgpack), the record's ttl (s; 0 keeps). Returns {1} (decided now) or
# {0, the rows decided before} (a repeat: nil if they are gone, i.e. the write was finished).
_DECIDE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('GET', KEYS[2])} end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ROWS_TTL)
return {1, false}
""".replace("ROWS_TTL", str(ROWS_TTL))

#: Milliseconds a write of a rated game holds each of its players' rating for the game (it lets
#: go as soon as it has written it; a holder that died is waited for this long).
HOLD_MS: Final = 30_000

# Hold a player's rating for a game while a rated game of theirs is written, if no other game's
# write holds it and their rated-game count is still the one the new rating was made from: so
# no two games' writes make new ratings of one player from the same old one. KEYS: their stats,
# their holds (hash: game -> '<room>|<until, Unix ms>'). ARGV: game, room, the rated-game count,
# the hold's ms. Returns 1 (held: again, for a write of the same room), 0 (another game's write
# holds it) or -1 (the rating moved since it was read).
_HOLD = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held then
  local room, ends = string.match(held, '^(.*)|(%d+)$')
  if room ~= ARGV[2] and tonumber(ends) > now then return 0 end
end
if (redis.call('HGET', KEYS[1], ARGV[1] .. ':n') or '0') ~= ARGV[3] then return -1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. '|' .. (now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
"""

# Let go of a hold (_HOLD) if this room's write has it. KEYS: the holds. ARGV: game, room.
_LET_GO = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and string.sub(held, 1, #ARGV[2] + 1) == ARGV[2] .. '|' then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
"""

# One player's part, in the player's slot. KEYS: their history, their stats, their holds.
# ARGV: room, finish time (ms), ttl (s; 0 keeps), game id, result letter ('' none), '1' if
# rated, mu, sigma, at. The history entry says whether this room was counted for the player
# already (a repeat after a crash): only a new one moves the counts and the rating. The write's
# hold is let go. Returns 1 if the player's rating for the game is now this game's (so the
# leaderboard may be set from it), else 0.
_PLAYER = """
local room, at, ttl, game = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local rated = ARGV[6] == '1'
if redis.call('ZADD', KEYS[1], 'NX', at, room) == 1 then
  if ttl > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (at - ttl * 1000))
    redis.call('EXPIRE', KEYS[1], ttl)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -KEEP - 1)
  if ARGV[5] ~= '' then redis.call('HINCRBY', KEYS[2], game .. ':' .. ARGV[5], 1) end
  if rated then
    redis.call('HSET', KEYS[2], game .. ':mu', ARGV[7], game .. ':sigma', ARGV[8],
      game .. ':at', ARGV[9])
    redis.call('HINCRBY', KEYS[2], game .. ':n', 1)
  end
  if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
end
local held = redis.call('HGET', KEYS[3], game)
if held and string.sub(held, 1, #room + 1) == room .. '|' then
  redis.call('HDEL', KEYS[3], game)
end
if rated and redis.call('HGET', KEYS[2], game .. ':mu') == ARGV[7] then return 1 end
return 0
""".replace("KEEP", str(HISTORY_KEEP))


# A game noted as due, in ``{results}``. KEYS: the due set, the notes. ARGV: room, ms, note.
_EXPECT = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""
# When a game was noted as due, and its note (nil, nil: it is not). KEYS, ARGV[1] as _EXPECT's.
_NOTE = """
return {redis.call('ZSCORE', KEYS[1], ARGV[1]), redis.call('HGET', KEYS[2], ARGV[1])}
"""
# A noted game forgotten. KEYS, ARGV[1] as _EXPECT's.
_FORGET = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""

DECIDE: Final = scripts.Script.of(_DECIDE)
HOLD: Final = scripts.Script.of(_HOLD)
LET_GO: Final = scripts.Script.of(_LET_GO)
PLAYER: Final = scripts.Script.of(_PLAYER)
EXPECT: Final = scripts.Script.of(_EXPECT)
NOTE: Final = scripts.Script.of(_NOTE)
FORGET: Final = scripts.Script.of(_FORGET)


class RatingMoved(Exception):
    """A player's rating changed since it was read, or another game's write holds it: read it
    again."""


class ResultsStore:
    """The writes of a finished game go through the command pipe, each a script or a command
    of one slot (redis-py's asyncio client cost some 0.45M instructions a command, some sixteen
    a game with its rematch: docs/benchmarks.md, "The work per move since 46b0b1e"); the reads
    of requests (history, profile, leaderboard) through redis-py."""

    def __init__(self, redis: aioredis.Redis, pipe: CommandPipe, keys: Keys) -> None:
        self.redis = redis
        self.pipe = pipe
        self.keys = keys
        self.holds_key = keys.rating_holds_key
        self.game_key = keys.game_key
        self.rows_key = keys.game_rows_key
        self.history_key = keys.history_key
        self.stats_key = keys.stats_key
        self.leaderboard_key = keys.leaderboard_key
        self.due_key = keys.results_due_key()
        self.expect_key = keys.results_expect_key()

    # -- the games still to write ----------------------------------------------------------------

    async def expect(self, room: str, at_ms: int, note: dict[str, Any]) -> None:
        """Note that ``room``'s game is about to end (before the commit that ends it)."""
        keys = [self.due_key, self.expect_key]
        await scripts.call(self.pipe, EXPECT, keys, [room, str(at_ms), msgpack.packb(note)])

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
        at, note = await scripts.call(self.pipe, NOTE, [self.due_key, self.expect_key], [room])
        if at is None:
            return None
        return int(float(at)), msgpack.unpackb(note) if note else {}

    async def forget(self, room: str) -> None:
        """Drop a noted game that did not end after all (its commit was not made)."""
        await scripts.call(self.pipe, FORGET, [self.due_key, self.expect_key], [room])

    async def recorded(self, room: str) -> bool:
        return bool(await self.redis.exists(self.game_key(room)))

    # -- the once-only write ---------------------------------------------------------------------

    async def ratings(self, game: str, players: list[str]) -> list[list[Any]]:
        """Each player's stored ``mu``, ``sigma``, ``at``, ``n`` for ``game`` (None: none)."""
        fields = [f"{game}:{field}".encode() for field in ("mu", "sigma", "at", "n")]
        return [
            list(row)
            for row in await asyncio.gather(
                *(self.pipe.call(b"HMGET", self.stats_key(p).encode(), *fields) for p in players)
            )
        ]

    async def write(
        self, room: str, blob: bytes, ttl: int, at_ms: int, game: str, rated: bool,
        people: list[tuple[str, str, int, float, float, float, bool]],
    ) -> bool:
        """Write a finished game once: the record, each person's history entry and count and,
        if ``rated``, their new rating (``people``: player, result letter, the rated-game count
        the rating was made from, mu, sigma, at, listed on the leaderboard). False if it was
        decided before (its unfinished steps are finished, as decided then).

        The keys are in several hash slots (the room's, each player's, the leaderboard's), so
        the write is a sequence of single-slot steps, each safe to repeat: the game's record
        first, with the rows decided for its players (the once-only step: a repeat finds it
        and takes the rows decided then); then each player's history, counts and rating,
        moved only if the room is new in their history; then the leaderboard, for each player
        whose stored rating is still this game's; then the note in ``{results}``, so a
        process that dies midway leaves the game to the sweep, which finishes it.

        A rated game's write first holds each player's rating for the game (in the player's
        slot, one at a time), checking it has not moved since it was read; if another game's
        write holds one, or one moved, it lets go of those it holds and raises
        :class:`RatingMoved`: read the ratings again. So no two games of a player make new
        ratings from the same old one."""
        if rated:
            await self.hold_ratings(room, game, people)
        rows = msgpack.packb([list(person) for person in people])
        decided, earlier = await scripts.call(
            self.pipe, DECIDE, [self.game_key(room), self.rows_key(room)], [blob, rows, str(ttl)]
        )
        if not decided and earlier is None:  # finished before: at most the note is left
            for player, *_ in people if rated else []:
                await self._let_go(player, game, room)
            people = []
        elif not decided:
            people = [tuple(person) for person in msgpack.unpackb(earlier)]
        listed: dict[str, float] = {}
        unlisted: list[str] = []
        for player, result, _, mu, sigma, when, shown in people:
            args = [room, str(at_ms), str(ttl), game, result, "1" if rated else "0"]
            args += [repr(mu), repr(sigma), repr(when)]
            keys = [self.history_key(player), self.stats_key(player), self.holds_key(player)]
            if await scripts.call(self.pipe, PLAYER, keys, args):
                if shown:
                    listed[player] = mu
                else:
                    unlisted.append(player)
        if listed:
            scored = [word for p, mu in listed.items() for word in (repr(mu).encode(), p.encode())]
            await self.pipe.call(b"ZADD", self.leaderboard_key(game).encode(), *scored)
        await self.unlist(game, unlisted)
        await self.forget(room)
        await self.pipe.call(b"DEL", self.rows_key(room).encode())
        return bool(decided)

    async def hold_ratings(
        self, room: str, game: str, people: list[tuple[str, str, int, float, float, float, bool]]
    ) -> None:
        """A rated write's first step alone (``write`` takes it first): hold each player's
        rating for ``room``'s write, in a player's slot at a time, checking that the
        rated-game count it was computed from is still the stored one; else let go of those
        held and raise :class:`RatingMoved`. Public for what stages a write under way (the
        tests of two games' writes meeting)."""
        held: list[str] = []
        try:
            for player, _, count, *_ in sorted(people):  # (one order: no two writes wait
                # on each other's players)
                keys = [self.stats_key(player), self.holds_key(player)]
                args = [game, room, str(count), str(HOLD_MS)]
                if await scripts.call(self.pipe, HOLD, keys, args) != 1:
                    raise RatingMoved(room)
                held.append(player)
            held.clear()
        finally:
            for player in held:  # (refused, or a failure midway)
                await self._let_go(player, game, room)

    async def _let_go(self, player: str, game: str, room: str) -> None:
        await scripts.call(self.pipe, LET_GO, [self.holds_key(player)], [game, room])

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
        async with self.redis.pipeline(transaction=False) as pipe:  # (one slot per room)
            for room in rooms:
                pipe.get(self.game_key(room))
            blobs = await pipe.execute()
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
            key = self.leaderboard_key(game).encode()
            await self.pipe.call(b"ZREM", key, *(p.encode() for p in players))

