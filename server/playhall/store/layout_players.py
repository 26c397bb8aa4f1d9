"""The move from key layout 1 (names without hash tags) to layout 2 (``keys``) of every family
but the rooms': players, client addresses, join-code tries, refusals, results, quick play and
the fleet registry. What is not a plain rename is here too: a quick-play table's new name holds
its pool, and the seeker's key and the bots' due set name a table by pool and room.

:data:`RENAMES` is the table old name -> new name (after the prefix): each row's ``<name>``
stands for a part of the name; a part named ``a`` (an address) or ``instance`` may hold ``:``,
any other none; neither holds ``{`` or ``}``, so a name already in layout 2 matches no row.
:func:`renamed` reads the table; :func:`move_quick_play` moves quick play's keys, and runs
before the renames (it reads its old names).
"""

from __future__ import annotations

import re
from typing import Any, Final

import redis.asyncio as aioredis

from playhall.store.keys import Keys, as_text, scan_pattern

#: Old name -> new name, the first row that matches wins.
RENAMES: Final = [
    ("player:<pid>", "player:{<pid>}"),
    ("player:<pid>:rooms", "player:{<pid>}:rooms"),
    ("player:<pid>:made", "player:{<pid>}:made"),
    ("player:<pid>:created", "player:{<pid>}:created"),
    ("player:<pid>:renamed", "player:{<pid>}:renamed"),
    ("address:<a>:created", "address:{<a>}:created"),
    ("address:<a>:players", "address:{<a>}:players"),
    ("address:<a>:conns", "address:{<a>}:conns"),
    ("tries:player:<pid>", "tries:player:{<pid>}"),
    ("tries:address:<a>", "tries:address:{<a>}"),
    ("refused:<a>", "refused:{<a>}"),
    ("game:<room>", "game:{<room>}"),
    ("history:<pid>", "history:{<pid>}"),
    ("stats:<pid>", "stats:{<pid>}"),
    ("results:due", "{results}:due"),
    ("results:expect", "{results}:expect"),
    ("seek:<game>:<digest>", "seek:{<game>:<digest>}"),
    ("fleet", "{fleet}"),
    ("fleet:<instance>", "{fleet}:<instance>"),
]

_PART = re.compile(r"<(\w+)>")


def _pattern(old: str) -> re.Pattern[str]:
    def part(match: re.Match[str]) -> str:
        name = match.group(1)
        chars = r"[^{}]+" if name in ("a", "instance") else r"[^:{}]+"
        return f"(?P<{name}>{chars})"

    return re.compile(_PART.sub(part, re.escape(old)) + r"\Z")


_ROWS: Final = [(_pattern(old), _PART.sub(r"\\g<\1>", new)) for old, new in RENAMES]


def renamed(name: str) -> str | None:
    """Layout 2's name for the layout 1 name ``name`` (both after the prefix), or None: not a
    name of these families in layout 1 (``seek:due``, ``leaderboard:<game>``, ``refusals``
    and ``code:<code>`` keep theirs)."""
    for pattern, new in _ROWS:
        found = pattern.match(name)
        if found:
            return found.expand(new)
    return None


async def move_quick_play(redis: aioredis.Redis, keys: Keys) -> None:
    """Move quick play's layout 1 keys: each table ``seektable:<room>`` to its pool's slot (the
    pool is its field ``pool``), each seeker's key to ``seeker:{<pid>}`` naming the table by
    pool and room, and the bots' due set's members likewise. A seeker or due entry of a table
    gone is dropped (its seat is a plain seat in its room). Each move is a RENAME or a write
    of the new key before the old one is deleted, so a move cut short is finished by the next."""
    p = keys.p
    pools: dict[str, str] = {}
    async for raw in redis.scan_iter(match=scan_pattern(f"{p}seektable:"), count=500):
        name = as_text(raw)
        room = name[len(f"{p}seektable:"):]
        if "{" in room:
            pool, _, room = room[1:].partition("}:")
            pools[room] = pool
            continue
        pool_of = await redis.hget(name, "pool")
        if pool_of is None:
            continue
        pools[room] = as_text(pool_of)
        await redis.rename(name, keys.seek_table_key(pools[room], room))
    async for raw in redis.scan_iter(match=scan_pattern(f"{p}seeker:"), count=500):
        name = as_text(raw)
        player = name[len(f"{p}seeker:"):]
        if "{" in player:
            continue
        value, ttl = await redis.get(name), await redis.ttl(name)
        table = "" if value is None else as_text(value)
        if table in pools and ttl != -2:
            held = f"{pools[table]} {table}"
            await redis.set(keys.seeker_key(player), held, ex=ttl if ttl > 0 else None)
        await redis.delete(name)
    due = keys.seek_due_key()
    rows: list[Any] = await redis.zrange(due, 0, -1, withscores=True)
    for member, when in rows:
        room = as_text(member)
        if " " in room:
            continue
        if room in pools:
            await redis.zadd(due, {f"{pools[room]} {room}": when})
        await redis.zrem(due, room)
