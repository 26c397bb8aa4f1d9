"""The Lua scripts Playhall runs in Redis, and how they are run: each change that must be
atomic (a room's commit, a lease's acquisition, renewal and release, a listing written outside a
commit, a player's room set, a chat line) is one script, called by its digest on the command
pipe (``pipe``), its text sent only when Redis does not have it.

A room change is one script run, so it is atomic: it checks the caller still holds the lease
(fencing a stale owner out) and that the stored version is the one the change was made against,
then appends to the log, moves the version on, writes the record if the change comes with one
(a checkpoint), and updates the lobby and active index. Concurrent commits from many rooms reach
Redis in one write (group commit, see ``pipe``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from redis.exceptions import ResponseError

from playhall.store.pipe import CommandPipe, encode_bulk, encode_command


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

# Which of these listings Redis lacks (lost in a fault, or deleted by hand): reads only.
# KEYS[1]: the lobby hash; KEYS[i + 1]: the index of room i's game. ARGV[2i - 1]: room i,
# ARGV[2i]: its index member. Returns the positions (from 1) of the rooms whose summary or
# index member is missing.
_MISSING_LISTINGS = """
local missing = {}
for i = 1, #KEYS - 1 do
  if redis.call('HEXISTS', KEYS[1], ARGV[2 * i - 1]) == 0
      or not redis.call('ZSCORE', KEYS[i + 1], ARGV[2 * i]) then
    missing[#missing + 1] = i
  end
end
return missing
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
MISSING_LISTINGS: Final = Script.of(_MISSING_LISTINGS)
ADD_PLAYER_ROOM: Final = Script.of(_ADD_PLAYER_ROOM)
ADD_CHAT: Final = Script.of(_ADD_CHAT)
COUNT_UNDER_CAPS: Final = Script.of(_COUNT_UNDER_CAPS)
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
        MISSING_LISTINGS,
        ADD_PLAYER_ROOM,
        ADD_CHAT,
        COUNT_UNDER_CAPS,
        ADMIT,
    )
]


async def call(pipe: CommandPipe, script: Script, keys: list[str], args: list[str]) -> Any:
    """Run ``script`` with ``keys`` and ``args`` (see :func:`run`)."""
    words = [b"%d" % len(keys), *(k.encode() for k in keys), *(a.encode() for a in args)]
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
    header = b"*%d\r\n" % (count + 2)
    try:
        try:
            return await pipe.call_encoded(header, script.by_sha, *words)
        except ResponseError as missing:
            if not str(missing).startswith("NOSCRIPT"):
                raise
            return await pipe.call_encoded(header, script.by_text, *words)
    except ResponseError as refused:  # (named apart: docs/operations.md, "The compiled build")
        text = str(refused)
        if text.startswith("FENCED"):
            raise Fenced(text) from None
        if text.startswith("VERSION"):
            raise VersionConflict(text) from None
        raise
