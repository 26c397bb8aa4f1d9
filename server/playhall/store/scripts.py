"""The Lua scripts Playhall runs in Redis, and how they are run: each change that must be
atomic (a room's commit, a lease's acquisition, renewal and release, a room's listing, a
player's room set, a chat line) is one script, called by its digest on the command
pipe (``pipe``), its text sent only when Redis does not have it.

A room change is one script run over the room's own keys (one hash slot, see ``keys``), so it
is atomic: it checks the caller still holds the lease (owner and fence: fencing a stale owner
out) and that the stored version is the one the change was made against, then appends to the
log, moves the version on, writes the record if the change comes with one (a checkpoint), and
sets the room's keys to expire once it is finished. The indexes other rooms share (the lobby,
the active set, the expiry index) and the join code's expiry are written around it by writes of
their own (``rooms.RoomStore.commit``). Concurrent commits from many rooms reach Redis in one
write (group commit, see ``pipe``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from redis.exceptions import ResponseError

from playhall.store import slots
from playhall.store.pipe import CommandPipe, encode_bulk, encode_command
from playhall.store.slots import CHECK_SLOTS


class Fenced(Exception):
    """This process no longer holds the room's lease; another may own it now."""


class VersionConflict(Exception):
    """The stored version is not the one the change was made against."""


# The lobby: a hash of summaries by room id, and per game an index of the rooms in listing order
# (a sorted set of members all scored 0, ordered by the member itself: see
# lobby.lobby_order, whose first character is the status rank). A room's member is
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

# A room's change, in the room's slot only. KEYS: the record, the log, the lease, the chat, the
# fence counter. ARGV: the lease token held ('' skips the check: tests only), the version the
# change was made against (-1: a new room), the new version, the new record ('' keeps the last
# checkpoint), the seconds until the room's keys expire ('0' keeps them), the number P of
# messages to publish once the change is made, then P channels and payloads (on one Redis: the
# owner's batches for other processes' viewers of the room, see fleet.owner.EdgeMail.claim), then
# the log entry's fields and values.
_COMMIT = """
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
local log = 7 + 2 * tonumber(ARGV[6])
if #ARGV >= log then
  redis.call('XADD', KEYS[2], '*', unpack(ARGV, log))
end
if ARGV[5] ~= '0' then
  for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4], KEYS[5]}) do
    redis.call('EXPIRE', key, ARGV[5])
  end
end
for i = 7, log - 1, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
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

#: Leases renewed per script call at most (those of one hash slot: on a single Redis too, see
#: ``slots``): Redis runs one call at a time, so a call of a few hundred keys (~1 ms) never
#: holds commits up long.
RENEW_BATCH: Final = 500

# A room's listing, written after the change that made it (or outside any change: the room was
# loaded again, or let go). KEYS: the lobby hash, the game's index; ARGV: the room, 'set' or
# 'del', the summary, the index member. Idempotent: written twice, it is as written once.
_LIST = _LOBBY + """
lobby(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return 1
"""

# Which of these rooms Redis lists otherwise than their owner does (a listing lost in a fault
# or between a commit and its listing's write, a stale one, or one edited by hand): reads
# only. KEYS[1]: the lobby hash; KEYS[i + 1]: the index of room i's game. ARGV[3i - 2]: room i,
# ARGV[3i - 1]: its index member, ARGV[3i]: its summary ('' when it is not listed). Returns the
# positions (from 1) of the rooms whose summary or index member is not as given.
_LISTING_DRIFT = """
local drift = {}
for i = 1, #KEYS - 1 do
  local room, member, blob = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local rest = string.sub(member, 2)
  local zero = redis.call('ZSCORE', KEYS[i + 1], '0' .. rest)
  local one = redis.call('ZSCORE', KEYS[i + 1], '1' .. rest)
  local wrong
  if blob == '' then
    wrong = zero or one or redis.call('HEXISTS', KEYS[1], room) == 1
  else
    local other = zero
    if string.sub(member, 1, 1) == '0' then other = one end
    wrong = other or not redis.call('ZSCORE', KEYS[i + 1], member)
      or redis.call('HGET', KEYS[1], room) ~= blob
  end
  if wrong then drift[#drift + 1] = i end
end
return drift
"""

# A finished room's join code set to expire, unless it expires already (at the room's own time,
# set by the change that finished it). KEYS: the code's key; ARGV: seconds.
_EXPIRE_CODE = """
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
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

# A connection counted against its client address, if the address holds fewer than the cap on
# every process together. KEYS: the address's connection set (member: "<instance>:<connection
# id>", score: when it lapses unless renewed, ms). ARGV: the member, now (ms), the time to
# live (ms), the cap. Members that lapsed (a process that died) are dropped first; a member
# already there is renewed, not counted twice. Returns 1 if counted, 0 if over the cap.
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if not redis.call('ZSCORE', KEYS[1], ARGV[1])
    and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""


@dataclass(frozen=True)
class Script:
    """A Lua script as sent to Redis: called by its digest, or by its text when Redis does not
    have it; each as the start of a command in RESP (``EVALSHA digest``, ``EVAL text``: the
    array header is left to the caller, who knows how many arguments follow); and the whole
    command that gives Redis the script (``SCRIPT LOAD text``)."""

    by_sha: bytes
    by_text: bytes
    load: bytes

    @classmethod
    def of(cls, source: str) -> Script:
        text = source.encode()
        sha = hashlib.sha1(text).hexdigest().encode()
        return cls(
            encode_bulk([b"EVALSHA", sha]),
            encode_bulk([b"EVAL", text]),
            encode_command([b"SCRIPT", b"LOAD", text]),
        )


COMMIT: Final = Script.of(_COMMIT)
ACQUIRE: Final = Script.of(_ACQUIRE)
RENEW: Final = Script.of(_RENEW)
RELEASE: Final = Script.of(_RELEASE)
LIST: Final = Script.of(_LIST)
LISTING_DRIFT: Final = Script.of(_LISTING_DRIFT)
EXPIRE_CODE: Final = Script.of(_EXPIRE_CODE)
ADD_PLAYER_ROOM: Final = Script.of(_ADD_PLAYER_ROOM)
ADD_CHAT: Final = Script.of(_ADD_CHAT)
ADMIT: Final = Script.of(_ADMIT)

#: ``SCRIPT LOAD`` of each script, the first commands of every connection of the pipe: a
#: server that starts (or reconnects to a restarted Redis) with hundreds of rooms to commit
#: would otherwise have each room's first commit refused NOSCRIPT and sent again in full.
SCRIPT_LOADS: Final = [
    script.load
    for script in (
        COMMIT,
        ACQUIRE,
        RENEW,
        RELEASE,
        LIST,
        LISTING_DRIFT,
        EXPIRE_CODE,
        ADD_PLAYER_ROOM,
        ADD_CHAT,
        ADMIT,
    )
]


def send(
    pipe: CommandPipe, script: Script, keys: list[str], args: list[str] | list[bytes]
) -> Awaitable[Any]:
    """Run ``script`` by its digest only, queued at once, as the command pipe's awaitable (a
    future, not a coroutine, while connected: many calls cost no task each). A NOSCRIPT
    refusal is raised as it is (the script did not run): a caller that must have it run sends
    it again by :func:`call`."""
    words = [b"%d" % len(keys), *(k.encode() for k in keys)]
    words.extend(a if isinstance(a, bytes) else a.encode() for a in args)
    if CHECK_SLOTS:
        slots.check(keys, "script call")
    return pipe.call_encoded(b"*%d\r\n" % (len(words) + 2), script.by_sha, encode_bulk(words))


async def call(
    pipe: CommandPipe, script: Script, keys: list[str], args: Sequence[str | bytes]
) -> Any:
    """Run ``script`` with ``keys`` and ``args`` (see :func:`run`)."""
    words = [b"%d" % len(keys), *(k.encode() for k in keys)]
    words.extend(a if isinstance(a, bytes) else a.encode() for a in args)
    return await run(pipe, script, len(words), encode_bulk(words))


async def run(pipe: CommandPipe, script: Script, count: int, *words: bytes) -> Any:
    """Run a Lua script on the command pipe by its digest, sending its text only if Redis does
    not have it (restarted, or SCRIPT FLUSH): NOSCRIPT means it did not run. ``words``: the
    key count, the keys and the arguments, ``count`` of them, already in RESP, in one or more
    parts (a commit keeps its first ones encoded per room).

    The commit script's refusals are raised as :class:`Fenced` and :class:`VersionConflict`
    (no other script makes them). Any other error reply (LOADING while Redis reads its file
    after a restart, OOM, READONLY, ...) means the script did not run, and is raised as it is:
    a store failure, nothing changed."""
    if CHECK_SLOTS:
        slots.check(slots.script_keys(*words), "script call")
    header = b"*%d\r\n" % (count + 2)
    try:
        try:
            return await pipe.call_encoded(header, script.by_sha, *words)
        except ResponseError as missing:
            if not str(missing).startswith("NOSCRIPT"):
                raise
        # Redis does not have the script (it restarted, or its scripts were flushed): sent
        # whole, after the handler, never inside it (docs/operations.md, "The compiled build").
        return await pipe.call_encoded(header, script.by_text, *words)
    except ResponseError as refused:  # (named apart: docs/operations.md, "The compiled build")
        text = str(refused)
        if text.startswith("FENCED"):
            raise Fenced(text) from None
        if text.startswith("VERSION"):
            raise VersionConflict(text) from None
        raise
