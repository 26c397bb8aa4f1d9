"""Everything Playhall keeps in Redis, behind one class (join-code tries apart:
``store.code_tries``).

Keys (``p`` is the configured prefix, ``ph:`` by default):

=============================  ==========================================================
``p room:<id>``                hash: ``v`` = version, ``d`` = the room record (msgpack) as it
                               was at version ``c`` (its last checkpoint)
``p room:<id>:log``            stream: one entry per version (kind, seat, player, move, ...)
``p room:<id>:chat``           list: the last chat lines (msgpack), newest last
``p lease:<id>``               "<owner>|<fence>" with a TTL: which process owns the room
``p fence:<id>``               counter: each lease acquisition gets a higher fence
``p code:<code>``              room id of a private room's join code
``p player:<pid>``             hash: ``name``, ``th`` (sha256 of the token secret), ``n`` (set
                               while the player has not sat, created or chatted)
``p player:<pid>:rooms``       set: rooms the player has a seat in
``p player:<pid>:made``        set: waiting rooms the player created (at most a few: pruned
                               and checked against ``waiting_rooms`` at every create)
``p player:<pid>:created``     counter of the player's creations this minute (expires)
``p address:<a>:created``      counter of the rooms created from client address ``a`` this
                               minute (expires)
``p address:<a>:players``      counter of the players registered from ``a`` this minute
                               (expires)
``p tries:player:<pid>``,      join-code tries of a player and of an address (hashes, kept
``p tries:address:<a>``        by ``store.code_tries``, expire)
``p lobby``                    hash: room id -> lobby summary (msgpack) of public rooms
``p lobby:<game>``             sorted set: the game's listed rooms in listing order (members
                               ``rooms.views.lobby_order``, all scored 0, read by lex range)
``p active``                   set: rooms that need a server without any client (timers, bots)
``p expiry``                   sorted set: room id -> when (Unix time) to check whether the
                               unfinished room has been left alone long enough to go
=============================  ==========================================================

A finished room's record, log, chat, fence counter and join code expire ``finished_ttl`` seconds
after its last change (a chat line said later gives the list the record's expiry); a player
and their room set ``player_ttl`` seconds after their last hello (a set made later takes the
record's expiry; the set forgets rooms that have expired whenever it is read), a player who
has not sat, created a room or chatted ``unused_player_ttl`` seconds after their last hello.
Nothing is written for a room that does not exist. An unfinished room is in ``expiry``: a
waiting room nobody views for ``waiting_ttl`` is deleted (:meth:`Store.delete_room`), a game
nobody plays or views for ``abandoned_ttl`` is ended, and then expires as a finished room.

A room change is one Lua script run, so it is atomic: it checks the caller still holds the
lease (fencing a stale owner out) and that the stored version is the one the change was made
against, then appends to the log, moves the version on, writes the record if the change comes
with one (a checkpoint), and updates the lobby and active index. Concurrent commits from many
rooms reach Redis in one write (group commit, see ``pipe``).

Checkpoints: a game move need not store the whole record. Its log entry says all the move
changed (see ``playhall.rooms.replay``), so the room is the record of its last checkpoint with
the log entries after it replayed; :meth:`Store.load` returns both. The room writes a
checkpoint for every change that is not a plain game step, and every so many steps.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import heapq
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import msgpack
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from playhall.rooms.codes import new_code
from playhall.rooms.views import lobby_order
from playhall.store.outage import Outage
from playhall.store.pipe import CommandPipe, encode_bulk, encode_command

# The lobby: a hash of summaries by room id, and per game an index of the rooms in listing order
# (a sorted set of members all scored 0, ordered by the member itself: see
# rooms/views.lobby_order, whose first character is the status rank). A room's member is
# written again whenever its summary is, the variants of both ranks taken out first.
_LOBBY = """
local function lobby(hash, index, room, mode, blob, member)
  if mode == 'keep' then return end
  local rest = string.sub(member, 2)
  redis.call('ZREM', index, '0' .. rest, '1' .. rest)
  if mode == 'set' then
    redis.call('HSET', hash, room, blob)
    redis.call('ZADD', index, 0, member)
  else
    redis.call('HDEL', hash, room)
  end
end
"""

_COMMIT = _LOBBY + """
if ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease lost')
end
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '-1') ~= ARGV[2] then
  return redis.error_reply('VERSION ' .. (v or 'none'))
end
if ARGV[4] == '' then
  redis.call('HSET', KEYS[1], 'v', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'v', ARGV[3], 'd', ARGV[4], 'c', ARGV[3])
end
lobby(KEYS[4], KEYS[10], KEYS[6], ARGV[5], ARGV[6], ARGV[9])
if ARGV[7] == '1' then
  redis.call('SADD', KEYS[5], KEYS[6])
else
  redis.call('SREM', KEYS[5], KEYS[6])
end
if #ARGV > 9 then
  redis.call('XADD', KEYS[2], '*', unpack(ARGV, 10))
end
if ARGV[8] ~= '0' then
  for _, key in ipairs({KEYS[1], KEYS[2], KEYS[7], KEYS[8], KEYS[9]}) do
    redis.call('EXPIRE', key, ARGV[8])
  end
end
return 1
"""


# KEYS: the lease, the fence counter, the room. ARGV: the owner, the time to live in
# milliseconds, '1' if the room must exist already (then a room that does not gets 0 and
# nothing is written: a request about a room that does not exist leaves no key behind).
_ACQUIRE = """
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
local current = redis.call('GET', KEYS[1])
if current then
  local owner = string.match(current, '^(.*)|[0-9]+$')
  if owner ~= ARGV[1] then return false end
end
local fence = redis.call('INCR', KEYS[2])
local token = ARGV[1] .. '|' .. fence
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
"""

# Many leases at once. KEYS: lease keys; ARGV[1]: the time to live in milliseconds; ARGV[i + 1]:
# the token this process holds for KEYS[i]. Returns the positions (from 1) of the keys whose
# lease this process no longer holds.
_RENEW = """
local lost = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

#: Leases renewed per script call: Redis runs one call at a time, so a call of a few hundred
#: keys (~1 ms) never holds commits up long, and a process of many rooms sends a few calls.
RENEW_BATCH: Final = 500

# A room's listing changed without a change of the room (its last viewer went, or it was loaded
# again). KEYS: the lease, the lobby hash, the game's index; ARGV: the lease token, the room,
# 'set' or 'del', the summary, the index member. Only the lease holder may.
_LIST = _LOBBY + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
lobby(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# A player's room set takes the expiry of the player's record, so it never outlives it (the
# set is made after the hello that set the record's expiry). KEYS: the set, the player's
# record; ARGV: the room, the player time to live in ms (used when the record has none yet).
_ADD_PLAYER_ROOM = """
redis.call('SADD', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[2])
if ttl == -2 then ttl = tonumber(ARGV[2]) end
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""

# A chat line, keeping the last ARGV[2]; the list expires with its room (a line said after the
# room finished, whose record already has its expiry, would otherwise start a list that
# never expires). KEYS: the chat list, the room's record.
_ADD_CHAT = """
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""

# Count one event under every counter of KEYS, each kept for a window of ARGV[1] ms from its
# first event, unless one of them already holds its cap (ARGV[2], ARGV[3], ...): then nothing
# is counted. Returns {0, 0}, or {the full counter's place (from 1), its ms left}.
_COUNT_UNDER_CAPS = """
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i + 1]) then
    return {i, redis.call('PTTL', key)}
  end
end
for _, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
end
return {0, 0}
"""


@dataclass(frozen=True)
class _Script:
    """A Lua script as sent to Redis: called by its digest, or by its text when Redis does not
    have it; each as the start of a command in RESP (``EVALSHA digest``, ``EVAL text``: the
    array header is left to the caller, who knows how many arguments follow); and the whole
    command that gives Redis the script (``SCRIPT LOAD text``)."""

    by_sha: bytes
    by_text: bytes
    load: bytes

    @classmethod
    def of(cls, source: str) -> _Script:
        text = source.encode()
        sha = hashlib.sha1(text).hexdigest().encode()
        return cls(
            encode_bulk([b"EVALSHA", sha]),
            encode_bulk([b"EVAL", text]),
            encode_command([b"SCRIPT", b"LOAD", text]),
        )


_COMMIT_SCRIPT: Final = _Script.of(_COMMIT)
_ACQUIRE_SCRIPT: Final = _Script.of(_ACQUIRE)
_RENEW_SCRIPT: Final = _Script.of(_RENEW)
_RELEASE_SCRIPT: Final = _Script.of(_RELEASE)
_LIST_SCRIPT: Final = _Script.of(_LIST)
_ADD_PLAYER_ROOM_SCRIPT: Final = _Script.of(_ADD_PLAYER_ROOM)
_ADD_CHAT_SCRIPT: Final = _Script.of(_ADD_CHAT)
_COUNT_UNDER_CAPS_SCRIPT: Final = _Script.of(_COUNT_UNDER_CAPS)

#: ``SCRIPT LOAD`` of each script, the first commands of every connection of the pipe: a
#: server that starts (or reconnects to a restarted Redis) with hundreds of rooms to commit
#: would otherwise have each room's first commit refused NOSCRIPT and sent again in full.
SCRIPT_LOADS: Final = [
    script.load
    for script in (
        _COMMIT_SCRIPT,
        _ACQUIRE_SCRIPT,
        _RENEW_SCRIPT,
        _RELEASE_SCRIPT,
        _LIST_SCRIPT,
        _ADD_PLAYER_ROOM_SCRIPT,
        _ADD_CHAT_SCRIPT,
        _COUNT_UNDER_CAPS_SCRIPT,
    )
]


def _bytes(value: bytes | str) -> bytes:
    """redis-py types replies as bytes-or-str; this client never decodes, so they are bytes."""
    return value if isinstance(value, bytes) else value.encode()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Fenced(Exception):
    """This process no longer holds the room's lease; another may own it now."""


class VersionConflict(Exception):
    """The stored version is not the one the change was made against."""


class NoRoom(Exception):
    """The room asked for does not exist (nothing was written)."""


class LogGap(Exception):
    """The log does not hold every entry since the room's checkpoint (the data is damaged)."""


class Commit:
    """One atomic room change. (A plain class, not a dataclass: one is made per move; see
    docs/operations.md, "The compiled build".)"""

    __slots__ = (
        "room", "lease", "prev_version", "version", "record", "log",
        "lobby", "unlist", "active", "expire", "code", "game", "order",
    )  # fmt: skip

    def __init__(
        self,
        *,
        room: str,
        lease: str,
        prev_version: int,
        version: int,
        record: bytes,
        log: list[bytes],
        lobby: bytes | None = None,
        unlist: bool = False,
        active: bool = False,
        expire: int = 0,
        code: str | None = None,
        game: str = "",
        order: str = "",
    ) -> None:
        self.room = room
        self.lease = lease  # the lease token held ("" to skip the check, tests only)
        self.prev_version = prev_version  # -1 for a new room
        self.version = version
        #: The new record, packed (a checkpoint); b"" when the log entry alone describes the
        #: change (the stored record stays the last checkpoint).
        self.record = record
        self.log = log  # the log entry as stored: field, value, ... (replay.step_entry)
        self.lobby = lobby  # summary to list; None with unlist=False: leave as is
        self.unlist = unlist
        self.active = active
        #: Seconds until the room's keys expire (a finished room); 0 keeps them.
        self.expire = expire
        #: The room's join code, if private: its key expires with the room.
        self.code = code
        #: The room's game (its lobby index is the game's) and its place in that index
        #: (rooms/views.lobby_order of the summary listed, or of the one unlisted).
        self.game = game
        self.order = order


@dataclass(frozen=True)
class Stored:
    """A room as Redis has it: the record of its last checkpoint and the log entries since."""

    version: int
    #: The record at version ``checkpoint``, packed.
    record: bytes
    checkpoint: int
    #: Log entries ``checkpoint + 1`` to ``version``, oldest first (field names decoded,
    #: values raw).
    since: list[dict[str, bytes]]


class StoredPlayer(NamedTuple):
    name: str
    token_hash: str
    #: Whether the player has sat down, created a room or chatted (a record from before the
    #: distinction counts as used).
    used: bool


class Store:
    def __init__(
        self, client: aioredis.Redis, pipe: CommandPipe, prefix: str = "ph:", player_ttl: int = 0
    ) -> None:
        self.redis = client
        #: Seconds a player is kept after their last hello (0: forever): for their room set.
        self.player_ttl = player_ttl
        self.pipe = pipe
        pipe.on_answer = self._answered
        pipe.preamble = list(SCRIPT_LOADS)
        self.p = prefix
        #: _commit_head, cached per room and lease (an attribute of its own: see
        #: docs/operations.md, "The compiled build").
        self._head_for: Callable[[str, str | None, str, str], tuple[bytes, int]] = (
            functools.lru_cache(maxsize=65536)(self._commit_head)
        )
        #: When Redis last answered (monotonic seconds), for /healthz.
        self.answered_at = time.monotonic()
        #: Whether Redis is away now, for logging an outage once (see ``outage``).
        self.outage = Outage()

    # -- keys --------------------------------------------------------------------------------

    def room_key(self, room: str) -> str:
        return f"{self.p}room:{room}"

    def log_key(self, room: str) -> str:
        return f"{self.p}room:{room}:log"

    def lease_key(self, room: str) -> str:
        return f"{self.p}lease:{room}"

    def fence_key(self, room: str) -> str:
        return f"{self.p}fence:{room}"

    def chat_key(self, room: str) -> str:
        return f"{self.p}room:{room}:chat"

    def code_key(self, code: str) -> str:
        return f"{self.p}code:{code}"

    def player_key(self, player: str) -> str:
        return f"{self.p}player:{player}"

    def player_rooms_key(self, player: str) -> str:
        return f"{self.p}player:{player}:rooms"

    def lobby_index_key(self, game: str) -> str:
        return f"{self.p}lobby:{game}"

    def _commit_keys(self, room: str, code: str | None, game: str) -> tuple[bytes, ...]:
        """The commit script's keys for ``room`` (part of the commit's head, which is cached).
        A room without a join code names its fence key twice (expiring it twice does no
        harm)."""
        fence = self.fence_key(room).encode()
        return (
            self.room_key(room).encode(),
            self.log_key(room).encode(),
            self.lease_key(room).encode(),
            f"{self.p}lobby".encode(),
            f"{self.p}active".encode(),
            room.encode(),
            self.chat_key(room).encode(),
            fence,
            self.code_key(code).encode() if code else fence,
            self.lobby_index_key(game).encode(),
        )

    # -- leases ------------------------------------------------------------------------------

    async def acquire(
        self, room: str, owner: str, ttl_ms: int, *, existing: bool = False
    ) -> str | None:
        """Take the room's lease; ``None`` if another owner holds it. With ``existing``, a room
        that is not stored raises :class:`NoRoom` and writes nothing (a new room's lease is
        taken before its first commit, without it)."""
        keys = [self.lease_key(room), self.fence_key(room), self.room_key(room)]
        args = [owner, str(ttl_ms), "1" if existing else "0"]
        token = await self._script(_ACQUIRE_SCRIPT, keys, args)
        if token == 0:
            raise NoRoom(room)
        return _text(token) if token is not None else None

    async def renew(self, leases: dict[str, str], ttl_ms: int) -> set[str]:
        """Extend many leases, :data:`RENEW_BATCH` rooms per script call (the calls pipelined:
        one write); returns the rooms whose lease was lost. (A call per room would be a task, a
        coroutine and a future per room every few seconds: at R = 500 a burst big enough to
        set off the cyclic collector, docs/benchmarks.md, "Collector pauses".)"""
        if not leases:
            await self.pipe.call(b"PING")
            self._answered()
            return set()
        rooms = list(leases)
        batches = [rooms[i : i + RENEW_BATCH] for i in range(0, len(rooms), RENEW_BATCH)]
        replies = await asyncio.gather(
            *(
                self._script(
                    _RENEW_SCRIPT,
                    [self.lease_key(room) for room in batch],
                    [str(ttl_ms), *(leases[room] for room in batch)],
                )
                for batch in batches
            )
        )
        self._answered()
        return {
            batch[position - 1]
            for batch, lost in zip(batches, replies, strict=True)
            for position in lost
        }

    async def lease_ttl(self, room: str) -> int:
        """Milliseconds the room's lease has left (negative: no lease)."""
        return int(await self.redis.pttl(self.lease_key(room)))

    async def release(self, room: str, token: str) -> None:
        await self._script(_RELEASE_SCRIPT, [self.lease_key(room)], [token])

    async def _script(self, script: _Script, keys: list[str], args: list[str]) -> Any:
        words = [b"%d" % len(keys), *(k.encode() for k in keys), *(a.encode() for a in args)]
        return await self._eval(script, len(words), encode_bulk(words))

    async def _eval(self, script: _Script, count: int, *words: bytes) -> Any:
        """Run a Lua script on the commit connection by its digest, sending its text only if
        Redis does not have it (restarted, or SCRIPT FLUSH): NOSCRIPT means it did not run.
        ``words``: the key count, the keys and the arguments, ``count`` of them, already in
        RESP, in one or more parts (a commit keeps its first ones encoded per room).

        The commit script's refusals are raised as :class:`Fenced` and
        :class:`VersionConflict` (no other script makes them). Any other error reply
        (LOADING while Redis reads its file after a restart, OOM, READONLY, ...) means the
        script did not run, and is raised as it is: a store failure, nothing changed."""
        header = b"*%d\r\n" % (count + 2)
        try:
            try:
                return await self.pipe.call_encoded(header, script.by_sha, *words)
            except ResponseError as missing:
                if not str(missing).startswith("NOSCRIPT"):
                    raise
                return await self.pipe.call_encoded(header, script.by_text, *words)
        except ResponseError as refused:  # (named apart: docs/operations.md, "The compiled build")
            text = str(refused)
            if text.startswith("FENCED"):
                raise Fenced(text) from None
            if text.startswith("VERSION"):
                raise VersionConflict(text) from None
            raise

    # -- rooms -------------------------------------------------------------------------------

    async def room_exists(self, room: str) -> bool:
        """Whether the room is stored (one read, nothing written)."""
        return bool(await self.redis.exists(self.room_key(room)))

    async def load(self, room: str) -> Stored | None:
        """The room's last checkpoint and the log entries after it; None if there is no room.

        The caller holds the room's lease, so no commit lands between the two reads."""
        version, blob, checkpoint = await self.redis.hmget(self.room_key(room), ["v", "d", "c"])
        if version is None or blob is None:
            return None
        # A record without "c" is the current one (stored whole at version "v").
        at = int(version) if checkpoint is None else int(checkpoint)
        lag = int(version) - at
        entries = await self.redis.xrevrange(self.log_key(room), count=lag) if lag else []
        since = [
            {_text(k): _bytes(v) for k, v in (fields or {}).items()}
            for _, fields in reversed(entries or [])
        ]
        if [int(entry.get("v", -1)) for entry in since] != list(range(at + 1, at + lag + 1)):
            raise LogGap(f"room {room}: the log does not hold versions {at + 1} to {at + lag}")
        return Stored(int(version), _bytes(blob), at, since)

    def commit(self, change: Commit) -> Awaitable[Any]:
        """Store one change atomically; awaited, raises :class:`Fenced` or
        :class:`VersionConflict` (see :meth:`_eval`).

        Done once Redis has applied it. Commits of many rooms made in the same pass of the
        event loop reach Redis in one write (group commit), by their script's digest; if Redis
        lost the script (restarted, or SCRIPT FLUSH) the commit is sent again with the script's
        text. That is safe: a NOSCRIPT reply means the commit did not run. (Not a coroutine:
        the script call's is returned as it is, one coroutine less per move.)
        """
        head, count = self._head_for(change.room, change.code, change.lease, change.game)
        tail = self._commit_tail(change)
        return self._eval(_COMMIT_SCRIPT, count + len(tail), head, encode_bulk(tail))

    async def version_and_lease(
        self, room: str, fresh: bool = False
    ) -> tuple[int | None, str | None]:
        """The room's stored version and the token of its lease (None: no room / no lease):
        what settles a commit whose reply was lost. Read on the general connection pool, not
        the commit connection, which may be the one that was lost; with ``fresh``, on a new
        connection: the pool's idle ones are closed first (the fault that lost the reply may
        have reset them all)."""
        if fresh:
            await self.redis.connection_pool.disconnect(inuse_connections=False)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hget(self.room_key(room), "v")
        pipe.get(self.lease_key(room))
        version, token = await pipe.execute()
        return (
            int(version) if version is not None else None,
            _text(token) if token is not None else None,
        )

    def _commit_head(
        self, room: str, code: str | None, lease: str, game: str
    ) -> tuple[bytes, int]:
        """The commit script's first arguments, the same for every commit of a room under one
        lease: the key count, the keys and the lease, in RESP; and how many arguments that is.
        (Cached per room and lease in ``__init__``.)"""
        keys = self._commit_keys(room, code, game)
        head = [b"%d" % len(keys), *keys, lease.encode()]
        return encode_bulk(head), len(head)

    def _commit_tail(self, change: Commit) -> list[bytes]:
        """The commit script's arguments after the lease: what changes from commit to commit."""
        if change.unlist:
            lobby_mode, lobby_blob = b"del", b""
        elif change.lobby is not None:
            lobby_mode, lobby_blob = b"set", change.lobby
        else:
            lobby_mode, lobby_blob = b"keep", b""
        args = [
            b"%d" % change.prev_version,
            b"%d" % change.version,
            change.record,
            lobby_mode,
            lobby_blob,
            b"1" if change.active else b"0",
            b"%d" % change.expire,
            change.order.encode(),
        ]
        args.extend(change.log)
        return args

    def _answered(self) -> None:
        self.answered_at = time.monotonic()
        if self.outage.since is not None:
            self.outage.answered()

    def close(self) -> None:
        self.pipe.close()

    async def log(self, room: str) -> list[dict[str, bytes]]:
        """The room's whole log, oldest first (field names decoded, values raw)."""
        entries = await self.redis.xrange(self.log_key(room)) or []
        return [{_text(k): _bytes(v) for k, v in (fields or {}).items()} for _, fields in entries]

    async def recent_log(self, room: str, count: int) -> list[dict[str, bytes]]:
        """The room's last ``count`` log entries, oldest first (field names decoded)."""
        entries = await self.redis.xrevrange(self.log_key(room), count=count) or []
        return [
            {_text(k): _bytes(v) for k, v in (fields or {}).items()}
            for _, fields in reversed(entries)
        ]

    async def timed_log(self, room: str) -> list[tuple[float, dict[str, bytes]]]:
        """The room's whole log, oldest first, each entry with the time Redis stored it (Unix
        seconds, from the entry's id: its milliseconds)."""
        entries = await self.redis.xrange(self.log_key(room)) or []
        return [
            (int(_text(entry_id or b"0").split("-")[0]) / 1000,
             {_text(k): _bytes(v) for k, v in (fields or {}).items()})
            for entry_id, fields in entries
        ]  # fmt: skip

    async def active_rooms(self) -> list[str]:
        return sorted(_text(m) for m in await self.redis.smembers(f"{self.p}active"))

    # -- lobby and join codes ----------------------------------------------------------------

    async def lobby_page(
        self, games: list[str], after: str, limit: int
    ) -> tuple[list[bytes], str | None]:
        """Up to ``limit`` lobby summaries of ``games`` in listing order, from just after the
        index member ``after`` ("" from the start), and the cursor of the next page (None: this
        is the last). Reads at most ``limit + 1`` index members per game and ``limit``
        summaries, however many rooms are listed."""
        low = f"({after}" if after else "-"
        pipe = self.redis.pipeline(transaction=False)
        for game in games:
            pipe.zrangebylex(self.lobby_index_key(game), low, "+", 0, limit + 1)
        members = heapq.nsmallest(
            limit + 1, (_text(m) for found in await pipe.execute() for m in found)
        )
        page, more = members[:limit], len(members) > limit
        if not page:
            return [], None
        blobs = await self.redis.hmget(f"{self.p}lobby", [m.rpartition(":")[2] for m in page])
        # A member without its summary (none is, but for a hand-edited Redis) is skipped.
        return [_bytes(b) for b in blobs if b is not None], page[-1] if more else None

    async def set_listing(
        self, room: str, game: str, lease: str, summary: bytes | None, order: str
    ) -> bool:
        """List (``summary``) or unlist (None) a room whose record did not change, if this
        process still holds its lease (False if it does not: nothing was written)."""
        keys = [self.lease_key(room), f"{self.p}lobby", self.lobby_index_key(game)]
        mode = "set" if summary is not None else "del"
        words = [b"%d" % len(keys), *(k.encode() for k in keys)]
        words += [lease.encode(), room.encode(), mode.encode(), summary or b"", order.encode()]
        return bool(await self._eval(_LIST_SCRIPT, len(words), encode_bulk(words)))

    async def index_lobby(self) -> int:
        """Put every listed room in its game's index (summaries listed before the index
        existed); returns how many rooms are listed. Run at start: O(listed rooms) once."""
        count = 0
        pipe = self.redis.pipeline(transaction=False)
        async for _, blob in self.redis.hscan_iter(f"{self.p}lobby", count=500):
            summary = msgpack.unpackb(blob)
            pipe.zadd(self.lobby_index_key(summary["game"]), {lobby_order(summary): 0})
            count += 1
            if count % 500 == 0:
                await pipe.execute()
        await pipe.execute()
        return count

    async def claim_code(self, room: str) -> str:
        """A fresh join code for a private room (see rooms/codes.py), unique among live codes."""
        while True:
            code = new_code()
            if await self.redis.set(self.code_key(code), room, nx=True):
                return code

    async def room_for_code(self, code: str) -> str | None:
        room = await self.redis.get(self.code_key(code))
        return _text(room) if room is not None else None

    # -- rooms a player creates --------------------------------------------------------------

    async def count_in_window(self, counter: str, window: int) -> tuple[int, float]:
        """Count one event under ``counter`` (a key under the prefix, e.g.
        ``player:<id>:created``): how many in its current ``window`` seconds, and the seconds
        left of that window. The counter is one key that expires with its window, so it is
        shared by every server process and costs nothing once quiet."""
        key = f"{self.p}{counter}"
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(key, 0, ex=window, nx=True)
        pipe.incr(key)
        pipe.pttl(key)
        _, count, left_ms = await pipe.execute()
        return int(count), max(0, int(left_ms)) / 1000

    async def count_under_caps(
        self, counters: list[tuple[str, int]], window: int
    ) -> tuple[int, float] | None:
        """Count one event under each ``(counter, cap)`` (as :meth:`count_in_window` does),
        all or none: if a counter already holds ``cap`` events in its current ``window``
        seconds, none is counted and the answer is that counter's place in ``counters`` and
        the seconds left of its window; else None. Atomic, so concurrent events of several
        server processes never count past a cap, and a refused event uses up nothing."""
        keys = [f"{self.p}{counter}" for counter, _ in counters]
        args = [str(window * 1000), *(str(cap) for _, cap in counters)]
        full, left_ms = await self._script(_COUNT_UNDER_CAPS_SCRIPT, keys, args)
        if not full:
            return None
        return int(full) - 1, max(0, int(left_ms)) / 1000

    async def created_rooms(self, player: str) -> dict[str, bytes | None]:
        """The rooms ``player`` created and noted with :meth:`note_created`: id -> the stored
        record (None once the room is gone)."""
        key = f"{self.p}player:{player}:made"
        rooms = sorted(_text(m) for m in await self.redis.smembers(key))
        if not rooms:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for room in rooms:
            pipe.hget(self.room_key(room), "d")
        blobs = await pipe.execute()
        return {room: blob for room, blob in zip(rooms, blobs, strict=True)}

    async def note_created(
        self, player: str, room: str, forget: list[str], ttl: int
    ) -> None:
        """Add ``room`` to the rooms ``player`` created, ``forget`` others (they no longer
        count), keep the set ``ttl`` seconds (0: forever)."""
        key = f"{self.p}player:{player}:made"
        pipe = self.redis.pipeline(transaction=True)
        if forget:
            pipe.srem(key, *forget)
        pipe.sadd(key, room)
        if ttl > 0:
            pipe.expire(key, ttl)
        await pipe.execute()

    # -- players -----------------------------------------------------------------------------

    async def create_player(self, player: str, name: str, token_hash: str, ttl: int) -> None:
        """Store a new player, marked unused (``n``) and kept ``ttl`` seconds (0: forever),
        in one transaction: a record is never left without its expiry."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(self.player_key(player), mapping={"name": name, "th": token_hash, "n": 1})
        if ttl > 0:
            pipe.expire(self.player_key(player), ttl)
        await pipe.execute()

    async def player_used(self, player: str, ttl: int) -> None:
        """The player sat down, created a room or chatted: no longer unused, kept ``ttl``
        seconds from now (0: forever)."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hdel(self.player_key(player), "n")
        for key in (self.player_key(player), self.player_rooms_key(player)):  # set: see hello
            if ttl > 0:
                pipe.expire(key, ttl)
            else:
                pipe.persist(key)
        await pipe.execute()

    async def touch_player(self, player: str, ttl: int) -> None:
        """Keep a player (and their room list) for ``ttl`` more seconds; 0: forever."""
        if ttl > 0:
            pipe = self.redis.pipeline(transaction=False)
            pipe.expire(self.player_key(player), ttl)
            pipe.expire(self.player_rooms_key(player), ttl)
            await pipe.execute()

    async def player(self, player: str) -> StoredPlayer | None:
        name, token_hash, unused = await self.redis.hmget(
            self.player_key(player), ["name", "th", "n"]
        )
        if name is None or token_hash is None:
            return None
        return StoredPlayer(_text(name), _text(token_hash), unused is None)

    async def rename_player(self, player: str, name: str) -> None:
        await self.redis.hset(self.player_key(player), "name", name)

    # A player joining or leaving and the chat history a joining viewer gets are on the path of
    # every game (a rematch joins a new room and leaves the old one), so they go on the commit
    # connection: a plain command there costs a tenth of one through redis-py's client.

    async def add_player_room(self, player: str, room: str) -> None:
        """Add to the player's room set, which expires with the player's record."""
        keys = [self.player_rooms_key(player), self.player_key(player)]
        await self._script(_ADD_PLAYER_ROOM_SCRIPT, keys, [room, str(self.player_ttl * 1000)])

    async def remove_player_room(self, player: str, room: str) -> None:
        await self.pipe.call(b"SREM", self.player_rooms_key(player).encode(), room.encode())

    async def player_rooms(self, player: str) -> list[str]:
        """The rooms the player holds a seat in; rooms that have expired are forgotten here."""
        key = self.player_rooms_key(player)
        rooms = sorted(_text(m) for m in await self.redis.smembers(key))
        if not rooms:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for room in rooms:
            pipe.exists(self.room_key(room))
        alive = await pipe.execute()
        gone = [room for room, exists in zip(rooms, alive, strict=True) if not exists]
        if gone:
            await self.redis.srem(key, *gone)
        return [room for room, exists in zip(rooms, alive, strict=True) if exists]

    # -- expiry ------------------------------------------------------------------------------

    async def set_due(self, room: str, when: float) -> None:
        """Check at ``when`` whether the unfinished ``room`` has been left alone long enough.
        (Through the command pipe, as the commits go: a room's status changes set it.)"""
        key = f"{self.p}expiry".encode()
        await self.pipe.call(b"ZADD", key, repr(when).encode(), room.encode())

    async def drop_due(self, room: str) -> None:
        await self.pipe.call(b"ZREM", f"{self.p}expiry".encode(), room.encode())

    async def due(self, now: float, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` rooms due for the check at ``now``, with when they were due."""
        found: list[Any] = await self.redis.zrangebyscore(
            f"{self.p}expiry", "-inf", now, start=0, num=limit, withscores=True
        )
        return [(_text(room), float(when)) for room, when in found]

    async def delete_room(self, room: str, code: str | None) -> None:
        """Delete a room that goes without finishing (a waiting room nobody came back to):
        every key it has, and its places in the lobby, the active set and the expiry index."""
        keys = [
            self.room_key(room),
            self.log_key(room),
            self.chat_key(room),
            self.lease_key(room),
            self.fence_key(room),
        ]
        if code:
            keys.append(self.code_key(code))
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(*keys)
        pipe.hdel(f"{self.p}lobby", room)
        pipe.srem(f"{self.p}active", room)
        pipe.zrem(f"{self.p}expiry", room)
        await pipe.execute()

    # -- chat --------------------------------------------------------------------------------

    async def add_chat(self, room: str, line: bytes, keep: int = 50) -> None:
        """Append a chat line (the last ``keep`` are kept); the list expires with its room."""
        keys = [self.chat_key(room).encode(), self.room_key(room).encode()]
        words = [b"2", *keys, line, b"%d" % keep]
        await self._eval(_ADD_CHAT_SCRIPT, len(words), encode_bulk(words))

    async def chat(self, room: str) -> list[bytes]:
        key = self.chat_key(room).encode()
        lines: list[bytes] = await self.pipe.call(b"LRANGE", key, b"0", b"-1")
        return lines
