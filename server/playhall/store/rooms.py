"""A room in Redis: its record and version, its log, its chat, its lease and fence, its join
code, and the commit that changes it (see ``keys`` for the layout, ``scripts`` for the Lua).

Checkpoints: a game move need not store the whole record. Its log entry says all the move
changed (see ``playhall.rooms.replay``), so the room is the record of its last checkpoint with
the log entries after it replayed; :meth:`RoomStore.load` returns both. The room writes a
checkpoint for every change that is not a plain game step, and every so many steps.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from playhall.store import scripts
from playhall.store.codes import new_code
from playhall.store.keys import Keys, as_bytes, as_text, scan_pattern
from playhall.store.pipe import CommandPipe, encode_bulk
from playhall.store.scripts import RENEW_BATCH, Fenced, VersionConflict

__all__ = [
    "Commit", "Fenced", "LogGap", "NoRoom", "RoomStore", "Stored", "VersionConflict",
]  # fmt: skip


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
        #: (lobby.lobby_order of the summary listed, or of the one unlisted).
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


class RoomStore:
    def __init__(self, client: aioredis.Redis, pipe: CommandPipe, keys: Keys) -> None:
        self.redis = client
        self.pipe = pipe
        self.keys = keys
        #: _commit_head, cached per room and lease (an attribute of its own: see
        #: docs/operations.md, "The compiled build").
        self._head_for: Callable[[str, str | None, str, str], tuple[bytes, int]] = (
            functools.lru_cache(maxsize=65536)(self._commit_head)
        )

    # -- leases ------------------------------------------------------------------------------

    async def acquire(
        self, room: str, owner: str, ttl_ms: int, *, existing: bool = False
    ) -> str | None:
        """Take the room's lease; ``None`` if another owner holds it. With ``existing``, a room
        that is not stored raises :class:`NoRoom` and writes nothing (a new room's lease is
        taken before its first commit, without it)."""
        k = self.keys
        keys = [k.lease_key(room), k.fence_key(room), k.room_key(room)]
        args = [owner, str(ttl_ms), "1" if existing else "0"]
        token = await scripts.call(self.pipe, scripts.ACQUIRE, keys, args)
        if token == 0:
            raise NoRoom(room)
        return as_text(token) if token is not None else None

    async def renew(self, leases: dict[str, str], ttl_ms: int) -> set[str]:
        """Extend many leases, :data:`RENEW_BATCH` rooms per script call (the calls pipelined:
        one write); returns the rooms whose lease was lost. (A call per room would be a task, a
        coroutine and a future per room every few seconds: at R = 500 a burst big enough to
        set off the cyclic collector, docs/benchmarks.md, "Collector pauses".) With no lease
        it still asks Redis something, so a quiet process knows Redis answers (/healthz)."""
        if not leases:
            await self.pipe.call(b"PING")
            return set()
        rooms = list(leases)
        batches = [rooms[i : i + RENEW_BATCH] for i in range(0, len(rooms), RENEW_BATCH)]
        replies = await asyncio.gather(
            *(
                scripts.call(
                    self.pipe,
                    scripts.RENEW,
                    [self.keys.lease_key(room) for room in batch],
                    [str(ttl_ms), *(leases[room] for room in batch)],
                )
                for batch in batches
            )
        )
        return {
            batch[position - 1]
            for batch, lost in zip(batches, replies, strict=True)
            for position in lost
        }

    async def lease_ttl(self, room: str) -> int:
        """Milliseconds the room's lease has left (negative: no lease)."""
        return int(await self.redis.pttl(self.keys.lease_key(room)))

    async def release(self, room: str, token: str) -> None:
        await scripts.call(self.pipe, scripts.RELEASE, [self.keys.lease_key(room)], [token])

    # -- the record, the log and the commit ---------------------------------------------------

    async def room_exists(self, room: str) -> bool:
        """Whether the room is stored (one read, nothing written)."""
        return bool(await self.redis.exists(self.keys.room_key(room)))

    async def load(self, room: str) -> Stored | None:
        """The room's last checkpoint and the log entries after it; None if there is no room.

        The caller holds the room's lease, so no commit lands between the two reads."""
        version, blob, checkpoint = await self.redis.hmget(
            self.keys.room_key(room), ["v", "d", "c"]
        )
        if version is None or blob is None or checkpoint is None:  # written together, always
            return None
        at = int(checkpoint)
        lag = int(version) - at
        entries = await self.redis.xrevrange(self.keys.log_key(room), count=lag) if lag else []
        since = [
            {as_text(k): as_bytes(v) for k, v in (fields or {}).items()}
            for _, fields in reversed(entries or [])
        ]
        if [int(entry.get("v", -1)) for entry in since] != list(range(at + 1, at + lag + 1)):
            raise LogGap(f"room {room}: the log does not hold versions {at + 1} to {at + lag}")
        return Stored(int(version), as_bytes(blob), at, since)

    def commit(self, change: Commit) -> Awaitable[Any]:
        """Store one change atomically; awaited, raises :class:`Fenced` or
        :class:`VersionConflict` (see :func:`scripts.run`).

        Done once Redis has applied it. Commits of many rooms made in the same pass of the
        event loop reach Redis in one write (group commit), by their script's digest; if Redis
        lost the script (restarted, or SCRIPT FLUSH) the commit is sent again with the script's
        text. That is safe: a NOSCRIPT reply means the commit did not run. (Not a coroutine:
        the script call's is returned as it is, one coroutine less per move.)
        """
        head, count = self._head_for(change.room, change.code, change.lease, change.game)
        tail = self._commit_tail(change)
        return scripts.run(self.pipe, scripts.COMMIT, count + len(tail), head, encode_bulk(tail))

    def _commit_keys(self, room: str, code: str | None, game: str) -> tuple[bytes, ...]:
        """The commit script's keys for ``room`` (part of the commit's head, which is cached).
        A room without a join code names its fence key twice (expiring it twice does no
        harm)."""
        k = self.keys
        fence = k.fence_key(room).encode()
        return (
            k.room_key(room).encode(),
            k.log_key(room).encode(),
            k.lease_key(room).encode(),
            k.lobby.encode(),
            k.active.encode(),
            room.encode(),
            k.chat_key(room).encode(),
            fence,
            k.code_key(code).encode() if code else fence,
            k.lobby_index_key(game).encode(),
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
        pipe.hget(self.keys.room_key(room), "v")
        pipe.get(self.keys.lease_key(room))
        version, token = await pipe.execute()
        return (
            int(version) if version is not None else None,
            as_text(token) if token is not None else None,
        )

    async def log(self, room: str) -> list[dict[str, bytes]]:
        """The room's whole log, oldest first (field names decoded, values raw)."""
        entries = await self.redis.xrange(self.keys.log_key(room)) or []
        return [
            {as_text(k): as_bytes(v) for k, v in (fields or {}).items()} for _, fields in entries
        ]

    async def timed_log(self, room: str) -> list[tuple[float, dict[str, bytes]]]:
        """The room's whole log, oldest first, each entry with the time Redis stored it (Unix
        seconds, from the entry's id: its milliseconds)."""
        entries = await self.redis.xrange(self.keys.log_key(room)) or []
        return [
            (int(as_text(entry_id or b"0").split("-")[0]) / 1000,
             {as_text(k): as_bytes(v) for k, v in (fields or {}).items()})
            for entry_id, fields in entries
        ]  # fmt: skip

    async def recent_log(self, room: str, count: int) -> list[dict[str, bytes]]:
        """The room's last ``count`` log entries, oldest first (field names decoded)."""
        entries = await self.redis.xrevrange(self.keys.log_key(room), count=count) or []
        return [
            {as_text(k): as_bytes(v) for k, v in (fields or {}).items()}
            for _, fields in reversed(entries)
        ]

    async def room_ids(self) -> list[str]:
        """Every stored room's id, by a SCAN of the keyspace (for an operator's listing, never
        on a player's path: it reads every key name once)."""
        prefix = self.keys.room_key("")
        ids = set()
        async for key in self.redis.scan_iter(match=scan_pattern(prefix), count=1000, _type="hash"):
            room = as_text(key)[len(prefix):]
            if ":" not in room:
                ids.add(room)
        return sorted(ids)

    async def peek(self, rooms: list[str]) -> list[tuple[bytes | None, int, str | None]]:
        """For each room, its last checkpoint's record (packed; None: no such room), its
        version and its lease (``"<instance>|<fence>"``; None: no process holds it), read in
        one round trip without a lease. The checkpoint's status and seats are the room's own:
        every change of either is stored whole."""
        pipe = self.redis.pipeline(transaction=False)
        for room in rooms:
            pipe.hmget(self.keys.room_key(room), ["d", "v"])
            pipe.get(self.keys.lease_key(room))
        replies = await pipe.execute()
        return [
            (
                None if blob is None else as_bytes(blob),
                0 if version is None else int(version),
                None if lease is None else as_text(lease),
            )
            for (blob, version), lease in zip(replies[::2], replies[1::2], strict=True)
        ]

    async def active_rooms(self) -> list[str]:
        return sorted(as_text(m) for m in await self.redis.smembers(self.keys.active))

    async def delete_room(self, room: str, code: str | None) -> None:
        """Delete a room that goes without finishing (a waiting room nobody came back to):
        every key it has, and its places in the lobby, the active set and the expiry index."""
        k = self.keys
        keys = [k.room_key(room), k.log_key(room), k.chat_key(room), k.lease_key(room)]
        keys.append(k.fence_key(room))
        if code:
            keys.append(k.code_key(code))
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(*keys)
        pipe.hdel(k.lobby, room)
        pipe.srem(k.active, room)
        pipe.zrem(k.expiry, room)
        await pipe.execute()

    # -- join codes --------------------------------------------------------------------------

    async def claim_code(self, room: str) -> str:
        """A fresh join code for a private room (see store/codes.py), unique among live codes."""
        while True:
            code = new_code()
            if await self.redis.set(self.keys.code_key(code), room, nx=True):
                return code

    async def room_for_code(self, code: str) -> str | None:
        room = await self.redis.get(self.keys.code_key(code))
        return as_text(room) if room is not None else None

    # -- chat --------------------------------------------------------------------------------

    async def add_chat(self, room: str, line: bytes, keep: int = 50) -> None:
        """Append a chat line (the last ``keep`` are kept); the list expires with its room."""
        keys = [self.keys.chat_key(room).encode(), self.keys.room_key(room).encode()]
        words = [b"2", *keys, line, b"%d" % keep]
        await scripts.run(self.pipe, scripts.ADD_CHAT, len(words), encode_bulk(words))

    async def chat(self, room: str) -> list[bytes]:
        key = self.keys.chat_key(room).encode()
        lines: list[bytes] = await self.pipe.call(b"LRANGE", key, b"0", b"-1")
        return lines

