"""Moving a Redis written in an older key layout to this one (``keys.LAYOUT``), once, at start.

Layout 1 named a room's keys without a hash tag (``p room:<id>``, ``p lease:<id>``, ...) and
kept the lobby at ``p lobby``: a room's keys fell in several hash slots, which a Redis Cluster
refuses in one script; so did a player's keys, an address's, the results' notes and a quick-play
pool's. Layout 2 (``keys``) tags them. A server starting on a Redis whose
``p layout`` is not 2 moves it:

1. it takes ``p layout:lock`` (``SET NX PX``); a process that finds it taken waits until the
   layout is 2 (the other one finished) or the lock lapses (the other one died: it takes over,
   and the keys moved already stay moved);
2. it refuses to go on while a process of the last release is alive in the fleet registry
   (:class:`OlderProcesses`): that process would keep writing the old names;
3. it makes the moves that are not renames (:data:`BEFORE`), then SCANs the prefix's keys
   and RENAMEs each one :data:`ROWS` names to its new name (its time to live goes with it),
   then sets ``p layout`` to 2.

RENAME names an old key and a new one in different hash slots: this runs on a single Redis only
(the last release never ran on a Cluster, so a Cluster is always in layout 2). The moved keys of
a process that dies midway are found again by the next one: an old name matches a row, a new
one (with its ``{...}``) never does.

:data:`ROWS` is the whole mapping, one row per key family: a pattern of the layout-1 name
after the prefix, and the layout-2 name of what it captures. A family whose name did not change
has no row (``leaderboard:<game>``, ``refusals``, ``seek:due``, ``code:<code>``), nor has the
last release's fleet registry (its processes are all stopped before the move: its entries
lapse by themselves).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from playhall import log
from playhall.store.code_tries import tries_key
from playhall.store.keys import LAYOUT, Keys, as_text, scan_pattern
from playhall.tasks import pause

logger = log.get("playhall.store")


#: A room id of layout 1 (``rooms.ids``: letters and digits) and a game id (``catalog``); a
#: player id (no ``:``) and a client address (IPv6 has ``:``), neither with ``{`` or ``}``; a
#: quick-play pool (``<game>:<digest of its options>``).
_ROOM: Final = "([A-Za-z0-9]+)"
_GAME: Final = "([A-Za-z_][A-Za-z0-9_]*)"
_PID: Final = "([^:{}]+)"
_ADDRESS: Final = "([^{}]+)"
_POOL: Final = "([A-Za-z_][A-Za-z0-9_]*:[0-9a-f]+)"


def _counter(of: Callable[[Keys, str, str], str], counter: str) -> Callable[[Keys, str], str]:
    return lambda keys, who: of(keys, who, counter)


#: Layout 1 -> layout 2, one row per key family whose name changed: a pattern of the layout-1
#: name after the prefix, whose groups are what the name is made of, and the layout-2 name of
#: those groups (given the ``Keys``).
ROWS: Final[tuple[tuple[str, Callable[..., str]], ...]] = (
    (f"room:{_ROOM}", Keys.room_key),
    (f"room:{_ROOM}:log", Keys.log_key),
    (f"room:{_ROOM}:chat", Keys.chat_key),
    (f"lease:{_ROOM}", Keys.lease_key),
    (f"fence:{_ROOM}", Keys.fence_key),
    (f"game:{_ROOM}", Keys.game_key),
    ("lobby", lambda keys: keys.lobby),
    (f"lobby:{_GAME}", Keys.lobby_index_key),
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


#: Moves that are not a rename of one key to one name, run before the renames (they read the
#: old names): quick play's, whose new names and values name a table's pool.
BEFORE: Final[tuple[Callable[[aioredis.Redis, Keys], Awaitable[None]], ...]] = (
    move_quick_play,
)

_PATTERNS: Final = [(re.compile(old), new) for old, new in ROWS]


def new_name(keys: Keys, name: str) -> str | None:
    """Layout 2's name of the layout-1 key ``name`` (None: not a key :data:`ROWS` moves)."""
    if not name.startswith(keys.p):
        return None
    rest = name[len(keys.p) :]
    for old, new in _PATTERNS:
        found = old.fullmatch(rest)
        if found is not None:
            return new(keys, *found.groups())
    return None


class OlderProcesses(Exception):
    """A process of the last release is alive on this Redis: the keys cannot be moved under it
    (upgrading across layout 2 is not a rolling upgrade)."""


#: How long the lock holds without being renewed (it is renewed after every SCAN page).
LOCK_MS: Final = 30_000
#: Seconds between looks at the layout while another process moves the keys.
WAIT_STEP: Final = 0.1


async def older_processes(client: aioredis.Redis, keys: Keys) -> list[str]:
    """The processes alive in the last release's fleet registry (``p fleet``, and per process
    ``p fleet:<instance>`` with a time to live its heartbeat renews)."""
    names = [as_text(n) for n in await client.smembers(f"{keys.p}fleet")]
    if not names:
        return []
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.exists(f"{keys.p}fleet:{name}")
    alive = await pipe.execute()
    return sorted(name for name, there in zip(names, alive, strict=True) if there)


async def move_to_current(
    client: aioredis.Redis, keys: Keys, instance: str, *, cluster: bool = False
) -> int:
    """Bring the Redis to layout 2 (see the module's text); the number of keys moved (0: it
    was in layout 2 already, or another process moved them). Raises :class:`OlderProcesses`
    while a process of the last release is alive."""
    current = str(LAYOUT).encode()
    if await client.get(keys.layout) == current:
        return 0
    if cluster:
        await client.set(keys.layout, current)
        return 0
    lock = f"{keys.layout}:lock"
    while not await client.set(lock, instance, nx=True, px=LOCK_MS):
        await pause(WAIT_STEP)
        if await client.get(keys.layout) == current:
            return 0
    try:
        if await client.get(keys.layout) == current:
            return 0
        older = await older_processes(client, keys)
        if older:
            raise OlderProcesses(
                "processes of an older Playhall release are running on this Redis "
                f"({', '.join(older)}); this release keeps its keys under other names and "
                "cannot run beside them: stop them all, then start this release (their "
                "registry entries expire lease_ms after they stop)"
            )
        started = time.monotonic()
        for step in BEFORE:
            await step(client, keys)
        moved = await _move(client, keys, lock)
        await client.set(keys.layout, current)
        logger.info("key_layout_moved", layout=LAYOUT, keys=moved,
                    seconds=round(time.monotonic() - started, 3))
        return moved
    finally:
        if await client.get(lock) == instance.encode():
            await client.delete(lock)


async def _move(client: aioredis.Redis, keys: Keys, lock: str) -> int:
    """RENAME every key of the prefix a row names, a SCAN page at a time (the lock renewed
    after each); the number moved."""
    moved = 0
    cursor = 0
    while True:
        cursor, page = await client.scan(cursor, match=scan_pattern(keys.p), count=1000)
        renames = [(old, new) for old in map(as_text, page) if (new := new_name(keys, old))]
        if renames:
            pipe = client.pipeline(transaction=False)
            for old, new in renames:
                pipe.rename(old, new)
            for done in await pipe.execute(raise_on_error=False):
                # A key that expired since the SCAN saw it is gone: nothing to move.
                if isinstance(done, ResponseError) and "no such key" not in str(done):
                    raise done
                moved += not isinstance(done, ResponseError)
        await client.pexpire(lock, LOCK_MS)
        if cursor == 0:
            return moved
