"""The fleet registry in Redis: which server processes are alive on this Redis.

Each process keeps one key, ``<prefix>{fleet}:<instance>``, whose value says when it started,
which version it runs and whether it is draining, with a time to live of ``lease_ms`` that the
process renews every third of it (``playhall.heartbeat``). A process that dies without
shutting down drops out of the registry when that time runs out, as its room leases do; one that
shuts down cleanly deletes its key at once. The set ``<prefix>{fleet}`` names the processes that
registered, so the registry is read without scanning the keyspace (all of them share the hash
tag ``{fleet}``, so that one script reads and writes them); names whose key has expired
are taken out of it by the read, and the set itself expires with the last entry.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Final

from playhall.store import scripts
from playhall.store.keys import Keys, as_text
from playhall.store.pipe import CommandPipe

#: Set a process's key with its time to live, and name it in the index, which lives as long as
#: the longest-lived entry (so nothing of the fleet outlives its last process). KEYS: the
#: process's key, the index. ARGV: its entry (JSON), the time to live (ms), its name.
_BEAT: Final = scripts.Script.of("""
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
""")

#: The live processes' entries among those the index named when it was read. KEYS: the index,
#: then each named process's key. ARGV: their names. A name whose key has expired (a process
#: that died) is taken out of the index here, in the same atomic step as the check, so a
#: process registering meanwhile is never dropped.
_LIVE: Final = scripts.Script.of("""
local found = {}
for i, name in ipairs(ARGV) do
  local entry = redis.call('GET', KEYS[i + 1])
  if entry then
    table.insert(found, entry)
  else
    redis.call('SREM', KEYS[1], name)
  end
end
return found
""")


@dataclass(frozen=True)
class Member:
    """One process of the fleet, as its last heartbeat described it."""

    instance: str
    #: When the process started (Unix time, seconds).
    started: float
    #: The Playhall version it runs.
    version: str
    #: Whether it is shutting down: it takes no new traffic and hands its rooms over.
    draining: bool

    def encode(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def decode(cls, raw: bytes | str) -> Member | None:
        """The entry, or None if it is not one this version wrote (skipped, not fatal: a
        newer version of the fleet may describe itself with more)."""
        try:
            data: Any = json.loads(raw)
            return cls(
                instance=str(data["instance"]),
                started=float(data["started"]),
                version=str(data["version"]),
                draining=bool(data["draining"]),
            )
        except (ValueError, TypeError, KeyError):
            return None


class FleetStore:
    def __init__(self, pipe: CommandPipe, keys: Keys) -> None:
        # Through the command pipe, as the room leases go: a heartbeat answered is Redis
        # answering this process (its /healthz), and a heartbeat waits behind no big read.
        self.pipe = pipe
        self.index = keys.fleet
        self.keys = keys

    async def beat(self, member: Member, ttl_ms: int) -> None:
        """Say that ``member`` is alive, for ``ttl_ms`` milliseconds from now."""
        await scripts.call(
            self.pipe, _BEAT, [self.keys.fleet_key(member.instance), self.index],
            [member.encode(), str(ttl_ms), member.instance],
        )

    async def leave(self, instance: str) -> None:
        """Take ``instance`` out of the registry at once (a clean shutdown)."""
        await self.pipe.call(b"DEL", self.keys.fleet_key(instance).encode())
        await self.pipe.call(b"SREM", self.index.encode(), instance.encode())

    async def members(self) -> list[Member]:
        """The live processes, by name."""
        names = [as_text(name) for name in await self.pipe.call(b"SMEMBERS", self.index.encode())]
        keys = [self.index, *(self.keys.fleet_key(name) for name in names)]
        found = await scripts.call(self.pipe, _LIVE, keys, names)
        members = [Member.decode(as_text(raw)) for raw in found]
        return sorted((m for m in members if m is not None), key=lambda m: m.instance)
