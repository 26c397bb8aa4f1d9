"""The move from key layout 1 (names without hash tags) to layout 2 (``keys``) of the players',
client addresses', join-code tries', refusals', results' and quick play's keys. What is not a
plain rename is here too: a quick-play table's new name holds its pool, and the seeker's key and
the bots' due set name a table by pool and room (:func:`move_quick_play`, run before the
renames: it reads the old names).

:data:`ROWS` is the table old name -> new name, as ``store/layout.py`` keeps it: a pattern of
the layout-1 name after the prefix, whose groups are what the name is made of, and the
layout-2 name of those groups. A player id holds no ``:``, an address may (IPv6); neither holds
``{`` or ``}``, so a name already in layout 2 matches no row. Families whose name did not
change have no row (``leaderboard:<game>``, ``refusals``, ``seek:due``, ``code:<code>``); nor
has the fleet registry of the last release, whose processes are all stopped before the move
(its entries lapse by themselves); nor ``game:<room>``, a room's (``store/layout.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import redis.asyncio as aioredis

from playhall.store.code_tries import tries_key
from playhall.store.keys import Keys, as_text, scan_pattern

_PID: Final = "([^:{}]+)"
_ADDRESS: Final = "([^{}]+)"
_POOL: Final = "([A-Za-z_][A-Za-z0-9_]*:[0-9a-f]+)"


def _counter(of: Callable[[Keys, str, str], str], counter: str) -> Callable[[Keys, str], str]:
    return lambda keys, who: of(keys, who, counter)


#: Layout 1 -> layout 2 of these families: (pattern of the old name, the new name's maker).
ROWS: Final[tuple[tuple[str, Callable[..., str]], ...]] = (
    (f"player:{_PID}", Keys.player_key),
    (f"player:{_PID}:rooms", Keys.player_rooms_key),
    (f"player:{_PID}:made", Keys.player_made_key),
    (f"player:{_PID}:created", _counter(Keys.player_counter_key, "created")),
    (f"player:{_PID}:renamed", _counter(Keys.player_counter_key, "renamed")),
    (f"address:{_ADDRESS}:created", _counter(Keys.address_counter_key, "created")),
    (f"address:{_ADDRESS}:players", _counter(Keys.address_counter_key, "players")),
    (f"address:{_ADDRESS}:conns", Keys.connections_key),
    (f"tries:player:{_PID}", lambda keys, pid: tries_key(keys.p, "player", pid)),
    (f"tries:address:{_ADDRESS}", lambda keys, a: tries_key(keys.p, "address", a)),
    (f"refused:{_ADDRESS}", Keys.refused_key),
    (f"history:{_PID}", Keys.history_key),
    (f"stats:{_PID}", Keys.stats_key),
    ("results:due", lambda keys: keys.results_due_key()),
    ("results:expect", lambda keys: keys.results_expect_key()),
    (f"seek:{_POOL}", Keys.seek_pool_key),
)


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
