"""Join-code tries, counted in Redis per player and per client address, with a growing back-off.

A ``join`` with a code is a try, counted **before** the code is looked up, by one Lua script per
key (the player's, then the address's): so however many connections (of however many server
processes on one Redis) send tries at once, no more are looked up than the rules allow. A try
that proves not to be a wrong code (the code was right, or the request failed for another
reason) is given back.

The rules, per key (``player:<id>``, ``address:<a>``): ``free`` tries in a row may be made at
once; from the ``free``-th on, each makes the next wait: ``first`` seconds, doubling with every
further try up to ``longest``. A try while any of its keys must wait is refused and counts for
nothing. A key with no try for ``longest`` after its wait ended is forgotten (the key expires),
so it starts counting again. Giving a try back does not reset the count: knowing one room's code
must not buy more guesses at the others.

Keys (``p`` is the prefix): ``p tries:player:{<pid>}`` and ``p tries:address:{<a>}``, hashes of
``n`` (the tries counted) and ``at`` (the last try's time, Unix milliseconds: Redis' own clock,
the same for every process).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import redis.asyncio as aioredis

# KEYS: one hash per key tried. ARGV: free, first and longest (milliseconds), and the time in
# Unix milliseconds ('' for Redis' own). Refused: {0, milliseconds to wait}. Counted: {1, the
# back-off this try imposes (milliseconds), the time, the most tries among the keys, then the
# time of each key's previous try} (to give the try back).
_TAKE = """
local free, first, longest = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function backoff(tries)
  local over = tries - free + 1
  if over <= 0 then return 0 end
  return math.min(longest, first * 2 ^ math.min(over - 1, 64))
end
local counts, times, wait = {}, {}, 0
for i, key in ipairs(KEYS) do
  local fields = redis.call('HMGET', key, 'n', 'at')
  counts[i], times[i] = tonumber(fields[1]) or 0, tonumber(fields[2]) or 0
  wait = math.max(wait, times[i] + backoff(counts[i]) - now)
end
if wait > 0 then return {0, math.ceil(wait)} end
local reply = {1, 0, now, 0}
for i, key in ipairs(KEYS) do
  local tries = counts[i] + 1
  local delay = backoff(tries)
  redis.call('HSET', key, 'n', tries, 'at', now)
  redis.call('PEXPIRE', key, math.ceil(delay + longest))
  reply[2] = math.max(reply[2], math.ceil(delay))
  reply[4] = math.max(reply[4], tries)
  reply[4 + i] = times[i]
end
return reply
"""

# KEYS: as taken. ARGV: the try's time, then each key's previous try's time. The count goes down
# by one; the last try's time goes back to the one before it unless another try came since.
_GIVE_BACK = """
for i, key in ipairs(KEYS) do
  local tries = tonumber(redis.call('HGET', key, 'n'))
  if tries and tries > 0 then
    redis.call('HINCRBY', key, 'n', -1)
    if redis.call('HGET', key, 'at') == ARGV[1] then
      redis.call('HSET', key, 'at', ARGV[i + 1])
    end
  end
end
return 1
"""


def tries_key(prefix: str, kind: str, who: str) -> str:
    """The hash of ``kind`` (``player``, ``address``) ``who``'s tries, under ``who``'s tag."""
    return f"{prefix}tries:{kind}:{{{who}}}"


class Try(NamedTuple):
    """The answer to a try: ``wait`` > 0 if it was refused (seconds before the next may be
    made; nothing was counted); else the most ``tries`` among its keys, this one included,
    and the ``backoff`` (seconds) it imposes if it proves to be a wrong code."""

    wait: float
    tries: int = 0
    backoff: float = 0.0
    at: int = 0
    before: tuple[int, ...] = ()


class CodeTries:
    def __init__(
        self, redis: aioredis.Redis, prefix: str, free: int, first: float, longest: float
    ) -> None:
        self.prefix = prefix
        self.free = free
        self.first = first
        self.longest = longest
        self._take = redis.register_script(_TAKE)
        self._give_back = redis.register_script(_GIVE_BACK)

    def _keys(self, keys: list[str]) -> list[str]:
        """``kind:id`` -> its hash, tagged with the player's or the address's id so that it
        is in the slot of that player's or address's other keys."""
        return [tries_key(self.prefix, *key.split(":", 1)) for key in keys]

    async def take(self, keys: list[str], now_ms: int | None = None) -> Try:
        """Count a try against each of ``keys`` (``player:<id>``, ``address:<a>``), or refuse
        it if any must wait. ``now_ms``: the time to count by (tests); else Redis' clock (that
        of the first key's, for all of them).

        The keys are in different hash slots, so each is tried by a script of its own, in
        turn; a key that must wait refuses the try, and those counted before it are given
        back. Each count is atomic, so tries at once on any number of connections and
        processes get no more looked up than the rules allow (a try about to be given back
        may make a concurrent one wait: a race refuses too many, never too few). A refused
        try's ``wait`` is the first waiting key's."""
        counted: list[tuple[str, list[Any]]] = []
        try:
            for key in self._keys(keys):
                args = [
                    self.free, round(self.first * 1000), round(self.longest * 1000),
                    "" if now_ms is None else now_ms,
                ]
                reply: list[Any] = await self._take(keys=[key], args=args)
                if not reply[0]:
                    return Try(wait=int(reply[1]) / 1000)
                now_ms = int(reply[2])
                counted.append((key, reply))
            taken = [reply for _, reply in counted]
            counted.clear()
        finally:
            for key, reply in counted:  # (refused, or a failure midway)
                await self._give_back(keys=[key], args=[reply[2], reply[4]])
        return Try(
            wait=0.0, backoff=max(int(r[1]) for r in taken) / 1000, at=int(taken[0][2]),
            tries=max(int(r[3]) for r in taken), before=tuple(int(r[4]) for r in taken),
        )

    async def give_back(self, keys: list[str], taken: Try) -> None:
        """Take back a counted try that proved not to be a wrong code."""
        for key, before in zip(self._keys(keys), taken.before, strict=True):
            await self._give_back(keys=[key], args=[taken.at, before])
