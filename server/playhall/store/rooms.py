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
from redis.exceptions import ResponseError

from playhall import log
from playhall.store import scripts, slots
from playhall.store.codes import new_code
from playhall.store.connect import drop_idle_connections
from playhall.store.keys import Keys, as_bytes, as_text, scan_pattern
from playhall.store.outage import Outage, failure_of, is_store_error
from playhall.store.pipe import CommandPipe, encode_bulk
from playhall.store.scripts import RENEW_BATCH, Fenced, VersionConflict
from playhall.store.slots import CHECK_SLOTS

logger = log.get("playhall.store")

__all__ = [
    "Commit", "Fenced", "LogGap", "NoRoom", "Placed", "RoomStore", "Stored", "VersionConflict",
]  # fmt: skip


@dataclass(frozen=True)
class Renewal:
    """What a renewal of leases found: the rooms whose lease another process holds now (or
    that ran out), and those whose renewal Redis failed (their leases left as they were)."""

    lost: set[str]
    unrenewed: set[str]


class NoRoom(Exception):
    """The room asked for does not exist (nothing was written)."""


class LogGap(Exception):
    """The log does not hold every entry since the room's checkpoint (the data is damaged)."""


class Commit:
    """One atomic room change. (A plain class, not a dataclass: one is made per move; see
    docs/operations.md, "The compiled build".)"""

    __slots__ = (
        "room", "lease", "prev_version", "version", "record", "log", "lobby", "unlist",
        "active", "was_active", "expire", "code", "game", "order", "due", "undue", "publish",
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
        was_active: bool = False,
        expire: int = 0,
        code: str | None = None,
        game: str = "",
        order: str = "",
        due: float | None = None,
        undue: bool = False,
        publish: list[bytes] | None = None,
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
        #: Whether the room needs a server with no client (the active set) after the change,
        #: and whether it did before.
        self.active = active
        self.was_active = was_active
        #: Seconds until the room's keys expire (a finished room); 0 keeps them.
        self.expire = expire
        #: The room's join code, if private: its key expires with the room.
        self.code = code
        #: The room's game (its lobby index is the game's) and its place in that index
        #: (lobby.lobby_order of the summary listed, or of the one unlisted).
        self.game = game
        self.order = order
        #: When the room is next due for its expiry check (None: as it was), or ``undue``:
        #: never again (it finished).
        self.due = due
        self.undue = undue
        #: Channels and payloads, in turn, that the commit script publishes once the change is
        #: made, and only then (on one Redis: the room's frames for other processes' viewers,
        #: ``fleet.owner.EdgeMail.claim``).
        self.publish = [] if publish is None else publish

    def indexed(self) -> bool:
        """Whether the change moves the room in an index other rooms share (lobby, active set,
        expiry index) or starts its join code's expiry: most moves do neither."""
        return (
            self.lobby is not None or self.unlist or self.active != self.was_active
            or self.due is not None or self.undue or (self.code is not None and self.expire > 0)
        )  # fmt: skip


@dataclass(frozen=True)
class Placed:
    """Where a room's owner has it in the indexes its commit does not write: whether it is in
    the active set, whether it is in the expiry index, and its join code if that must be
    expiring (a finished private room)."""

    room: str
    active: bool
    due: bool
    code: str | None


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
        self._head_for: Callable[[str, str], tuple[bytes, int]] = (
            functools.lru_cache(maxsize=65536)(self._commit_head)
        )
        #: The hash slot of each room's keys, cached (renewal groups the leases by it).
        self._lease_slot: Callable[[str], int] = functools.lru_cache(maxsize=65536)(
            lambda room: slots.slot_of(self.keys.lease_key(room))
        )
        #: Where an index write that failed after its commit was stored is counted if Redis
        #: failed it (the store's outage log); the room's owner puts the index right at its
        #: next lease renewal.
        self.outage: Outage | None = None

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

    async def renew(self, leases: dict[str, str], ttl_ms: int) -> Renewal:
        """Extend many leases, one script call per hash slot (of up to :data:`RENEW_BATCH`
        rooms; a slot's rooms are rarely more than one), the calls pipelined in one write, each
        awaited as the pipe's own future (a task and a coroutine per room every few seconds
        would be a burst big enough to set off the cyclic collector at R = 500:
        docs/benchmarks.md, "Collector pauses"). Returns the rooms whose lease was lost, and
        those whose call Redis failed (on a Cluster, its slot's primary is being replaced:
        their leases stay as they were, for the caller to try again soon; reported in the
        outage log); only when every call failed does the renewal raise. With no lease it
        still asks Redis something, so a quiet process knows Redis answers (/healthz)."""
        if not leases:
            await self.pipe.call(b"PING")
            return Renewal(set(), set())
        groups: dict[int, list[str]] = {}
        for room in leases:
            groups.setdefault(self._lease_slot(room), []).append(room)
        batches = [
            group[i : i + RENEW_BATCH]
            for group in groups.values()
            for i in range(0, len(group), RENEW_BATCH)
        ]
        def words(batch: list[str]) -> tuple[list[str], list[str]]:
            keys = [self.keys.lease_key(room) for room in batch]
            return keys, [str(ttl_ms), *(leases[room] for room in batch)]

        replies: list[Any] = await asyncio.gather(
            *(scripts.send(self.pipe, scripts.RENEW, *words(batch)) for batch in batches),
            return_exceptions=True,
        )
        failed: BaseException | None = None
        failures = 0
        unrenewed: set[str] = set()
        for i, reply in enumerate(replies):
            if isinstance(reply, ResponseError) and str(reply).startswith("NOSCRIPT"):
                try:
                    replies[i] = reply = await scripts.call(
                        self.pipe, scripts.RENEW, *words(batches[i])
                    )
                except Exception as again:  # a store error, or a bug: sorted just below
                    reply = again
            if isinstance(reply, BaseException):
                if not is_store_error(reply):
                    raise reply
                # Its slot's node is away (a Cluster's primary being replaced): its rooms keep
                # their leases as they are, for the next round; every other slot's are renewed.
                failed, replies[i] = reply, []
                failures += 1
                unrenewed.update(batches[i])
        if failed is not None:
            if failures == len(batches):  # Redis is away: as before, the renewal failed
                raise failed
            if self.outage is not None:
                self.outage.failed(failed, during="lease renewal")
        lost = {
            batch[position - 1]
            for batch, positions in zip(batches, replies, strict=True)
            for position in positions
        }
        return Renewal(lost, unrenewed)

    async def lease_ttl(self, room: str) -> int:
        """Milliseconds the room's lease has left (negative: no lease)."""
        return int(await self.redis.pttl(self.keys.lease_key(room)))

    async def release(self, room: str, token: str) -> None:
        await scripts.call(self.pipe, scripts.RELEASE, [self.keys.lease_key(room)], [token])

    # -- the record, the log and the commit ---------------------------------------------------

    async def room_exists(self, room: str) -> bool:
        """Whether the room is stored (one read, nothing written; on the command pipe: every
        game's rematch has its second player join by a request that reads it)."""
        return bool(await self.pipe.call(b"EXISTS", self.keys.room_key(room).encode()))

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
        text. That is safe: a NOSCRIPT reply means the commit did not run. (Not a coroutine
        for a change that moves the room in no index, most moves: the script call's is
        returned as it is, one coroutine less per move.)

        The script touches the room's own keys only (one hash slot). A change that moves the
        room in an index other rooms share is written around it (:meth:`_commit_indexed`).
        """
        head, count = self._head_for(change.room, change.lease)
        tail = self._commit_tail(change)
        stored = scripts.run(self.pipe, scripts.COMMIT, count + len(tail), head, encode_bulk(tail))
        if change.indexed():
            return self._commit_indexed(change, stored)
        return stored

    async def _commit_indexed(self, change: Commit, stored: Awaitable[Any]) -> Any:
        """The commit ``stored`` with the index writes it entails, each a single-slot,
        idempotent command on the command pipe (so they go out in the commit's write).

        What makes a server look at the room again (its place in the active set, its expiry
        check) is written before the commit when it adds the room or puts its check later
        (``ZADD GT``), and after it when it removes the room: a process that dies between the
        two leaves the room where a server finds it, loads it and puts its indexes right
        (:meth:`index_drift`), never where none would. The listing, the exact due time and
        the join code's expiry are written after the commit succeeded. A write after the
        commit that fails leaves the change stored: it is reported (``outage``) and
        put right by the room's owner at its next lease renewal."""
        k, room = self.keys, change.room.encode()
        ahead: list[Awaitable[Any]] = []
        if change.active and not change.was_active:
            ahead.append(self.pipe.call(b"SADD", k.active.encode(), room))
        if change.due is not None:
            due = repr(change.due).encode()
            ahead.append(self.pipe.call(b"ZADD", k.expiry.encode(), b"GT", due, room))
        for write in ahead:
            if not asyncio.isfuture(write):  # not connected: sent (in order) once it is
                await self._quietly(write)
        try:
            result = await stored
        finally:
            for write in ahead:
                if asyncio.isfuture(write):
                    self._in_background(write)
        self.write_indexes(change)
        return result

    def write_indexes(self, change: Commit) -> None:
        """Write what a stored ``change`` makes of the room's listing, active set entry, expiry
        check and join code's expiry, without waiting for Redis's answer (a failure is
        reported, see :meth:`_commit_indexed`). Also for a change found stored after its
        reply was lost."""
        k, room = self.keys, change.room.encode()
        behind: list[Awaitable[Any]] = []
        if change.unlist or change.lobby is not None:
            # Queued at once (not a task's), so it goes before the change's reply and the
            # listing's publish; a NOSCRIPT refusal is a failure the owner's renewal heals.
            mode = b"del" if change.unlist else b"set"
            keys = [k.lobby, k.lobby_index_key(change.game)]
            args = [room, mode, change.lobby or b"", change.order.encode()]
            behind.append(scripts.send(self.pipe, scripts.LIST, keys, args))
        if change.was_active and not change.active:
            behind.append(self.pipe.call(b"SREM", k.active.encode(), room))
        if change.undue:
            behind.append(self.pipe.call(b"ZREM", k.expiry.encode(), room))
        elif change.due is not None:
            due = repr(change.due).encode()
            behind.append(self.pipe.call(b"ZADD", k.expiry.encode(), due, room))
        if change.code is not None and change.expire > 0:
            code = k.code_key(change.code).encode()
            behind.append(self.pipe.call(b"EXPIRE", code, b"%d" % change.expire))
        for write in behind:
            self._in_background(write)

    def _in_background(self, write: Awaitable[Any]) -> None:
        """Let ``write`` run without waiting for it; its failure is reported."""
        asyncio.ensure_future(write).add_done_callback(self._done)

    async def _quietly(self, write: Awaitable[Any]) -> None:
        """Wait for ``write``; its failure is reported, not raised."""
        done = asyncio.ensure_future(write)
        await asyncio.wait([done])
        self._done(done)

    def _done(self, write: asyncio.Future[Any]) -> None:
        failure_of(write, "index write", logger, self.outage)

    def _commit_keys(self, room: str) -> tuple[bytes, ...]:
        """The commit script's keys for ``room`` (part of the commit's head, which is cached):
        the room's own, all in its hash slot."""
        k = self.keys
        return (
            k.room_key(room).encode(),
            k.log_key(room).encode(),
            k.lease_key(room).encode(),
            k.chat_key(room).encode(),
            k.fence_key(room).encode(),
        )

    def _commit_head(self, room: str, lease: str) -> tuple[bytes, int]:
        """The commit script's first arguments, the same for every commit of a room under one
        lease: the key count, the keys and the lease, in RESP; and how many arguments that is.
        (Cached per room and lease in ``__init__``.)"""
        keys = self._commit_keys(room)
        head = [b"%d" % len(keys), *keys, lease.encode()]
        return encode_bulk(head), len(head)

    def _commit_tail(self, change: Commit) -> list[bytes]:
        """The commit script's arguments after the lease: what changes from commit to commit."""
        publish = change.publish
        args = [
            b"%d" % change.prev_version,
            b"%d" % change.version,
            change.record,
            b"%d" % change.expire,
            b"%d" % (len(publish) // 2),
        ]
        args.extend(publish)
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
            await drop_idle_connections(self.redis)
        keys = [self.keys.room_key(room), self.keys.lease_key(room)]
        if CHECK_SLOTS:
            slots.check(keys, "MULTI")
        pipe = self.redis.pipeline(transaction=True)
        pipe.hget(keys[0], "v")
        pipe.get(keys[1])
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
        head, _, tail = self.keys.room_key("\0").partition("\0")
        ids = set()
        pattern = scan_pattern(head)
        async for key in self.redis.scan_iter(match=pattern, count=1000, _type="hash"):
            name = as_text(key)
            room = name[len(head) : -len(tail)]
            if name.endswith(tail) and self.keys.room_key(room) == name:
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
        every key it has (one command in its slot), then its join code and its places in the
        lobby, the active set and the expiry index. A process that dies between the two leaves
        index entries of a room that is no more: the sweeper and the restore pass drop those."""
        k = self.keys
        keys = [k.room_key(room), k.log_key(room), k.chat_key(room), k.lease_key(room)]
        keys.append(k.fence_key(room))
        if CHECK_SLOTS:
            slots.check(keys, "DEL")
        await self.redis.delete(*keys)
        pipe = self.redis.pipeline(transaction=False)
        if code:
            pipe.delete(k.code_key(code))
        pipe.hdel(k.lobby, room)
        pipe.srem(k.active, room)
        pipe.zrem(k.expiry, room)
        await pipe.execute()

    async def forget(self, room: str) -> None:
        """Take a room that is no more (``NoRoom``) out of the active set."""
        await self.redis.srem(self.keys.active, room)

    # -- the indexes other rooms share -------------------------------------------------------

    async def index_drift(self, placed: list[Placed]) -> set[str]:
        """Which of the ``placed`` rooms Redis has otherwise in the active set or the expiry
        index, or whose join code does not expire when it should: reads only, one command per
        index per :data:`RENEW_BATCH` rooms, all in one write."""
        k = self.keys
        batches = [placed[i : i + RENEW_BATCH] for i in range(0, len(placed), RENEW_BATCH)]
        reads: list[Awaitable[Any]] = []
        for batch in batches:
            rooms = [p.room.encode() for p in batch]
            reads.append(self.pipe.call(b"SMISMEMBER", k.active.encode(), *rooms))
            reads.append(self.pipe.call(b"ZMSCORE", k.expiry.encode(), *rooms))
        coded = [p for p in placed if p.code is not None]
        for p in coded:
            assert p.code is not None
            reads.append(self.pipe.call(b"TTL", k.code_key(p.code).encode()))
        replies = await asyncio.gather(*reads)
        drift: set[str] = set()
        for i, batch in enumerate(batches):
            active, due = replies[2 * i], replies[2 * i + 1]
            for p, member, score in zip(batch, active, due, strict=True):
                if bool(member) != p.active or (score is not None) != p.due:
                    drift.add(p.room)
        for p, ttl in zip(coded, replies[2 * len(batches) :], strict=True):
            if ttl == -1:  # (-2: gone already, as an expired code is)
                drift.add(p.room)
        return drift

    async def put_indexes(self, placed: Placed, due: float, code_ttl: int) -> None:
        """Put the room in the active set and the expiry index as ``placed`` says (a room due
        and not there is checked at ``due``; one there keeps its time), and start its join
        code's expiry (``code_ttl`` seconds) if it has none. Idempotent."""
        k, room = self.keys, placed.room.encode()
        writes = [
            self.pipe.call(b"SADD" if placed.active else b"SREM", k.active.encode(), room),
            self.pipe.call(b"ZADD", k.expiry.encode(), b"NX", repr(due).encode(), room)
            if placed.due
            else self.pipe.call(b"ZREM", k.expiry.encode(), room),
        ]
        if placed.code is not None:
            code = [k.code_key(placed.code)]
            writes.append(scripts.call(self.pipe, scripts.EXPIRE_CODE, code, [str(code_ttl)]))
        await asyncio.gather(*writes)

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

