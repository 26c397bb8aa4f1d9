"""Moving a Redis written in an older key layout to this one (``keys.LAYOUT``), once, at start.

Layout 1 named a room's keys without a hash tag (``p room:<id>``, ``p lease:<id>``, ...) and
kept the lobby at ``p lobby``: a room's keys fell in several hash slots, which a Redis Cluster
refuses in one script. Layout 2 (``keys``) tags them. A server starting on a Redis whose
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
has no row.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Final

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from playhall import log
from playhall.store.keys import LAYOUT, Keys, as_text, scan_pattern

logger = log.get("playhall.store")


#: A room id of layout 1 (``rooms.ids``: letters and digits) and a game id (``catalog``).
_ROOM: Final = "([A-Za-z0-9]+)"
_GAME: Final = "([A-Za-z_][A-Za-z0-9_]*)"

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
)

#: Moves that are not a rename of one key to one name, run before the renames (they read the
#: old names): none for the families above.
BEFORE: Final[tuple[Callable[[aioredis.Redis, Keys], Awaitable[None]], ...]] = ()

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
        await asyncio.sleep(WAIT_STEP)
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
