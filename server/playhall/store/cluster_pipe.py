"""The hot path's command pipe on a Redis Cluster: one :class:`~playhall.store.pipe.RedisPipe`
per primary, each command sent to the primary of its first key's hash slot, so the commands of
one loop pass still leave in one write per node.

A command's key: for ``EVALSHA``/``EVAL``, the first key after the key count; for ``PUBSUB
SHARDNUMSUB``, the channel; for any other, its first argument. ``PING``, ``SCRIPT`` and a script
of no key go to any node. Every command the store sends touches one slot (the key layout's hash
tags), so the first key names the node.

The slot map is the one redis-py's ``RedisCluster`` (the general client) keeps, copied into a
table of 16384 node addresses. A ``MOVED`` reply (the command did not run: the slot is served
elsewhere now) sends the command again to the node it names, at once, and reads the whole map
again in the background; an ``ASK`` reply (the slot is being moved) sends ``ASKING`` and then
the command to the node it names. A connection lost or a deadline passed fails the commands in
flight on that node as the single connection does (``ConnectionError``/``CommandTimeout``:
``store_failed`` to the caller, whose write may or may not have been made) and reads the map
again, so the next commands reach a primary promoted meanwhile. ``CLUSTERDOWN`` and ``TRYAGAIN``
replies (the command did not run) are raised as they are: a store failure, nothing changed.
A count of 0 from ``SPUBLISH`` or ``SHARDNUMSUB`` has the map read again too (at most once a
second): a primary turned replica answers those itself rather than ``MOVED``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from playhall import log
from playhall.store.pipe import RedisPipe, encode_command
from playhall.tasks import cancel_and_wait

logger = log.get("playhall.store")

SLOTS: Final = 16384

#: Redirections one command may follow before its last is raised (a map that keeps changing
#: under it: a resharding gone wrong).
MAX_REDIRECTS: Final = 5

#: Commands whose key is not their first argument: the argument it is (None: no key, any node).
_KEY_AT: Final[dict[bytes, int | None]] = {
    b"PING": None,
    b"SCRIPT": None,
    b"PUBSUB": 2,  # PUBSUB SHARDNUMSUB channel
}

#: Commands that count a channel's subscribers (SPUBLISH, PUBSUB SHARDNUMSUB). A primary
#: turned replica by a failover answers them itself, with its own count (0), where it answers a
#: key's command MOVED: a process that only publishes to a slot would never learn it moved.
_COUNTING: Final = frozenset({b"SPUBLISH", b"PUBSUB"})

#: Seconds between two readings of the slot map that a count of 0 asks for.
RECHECK_EVERY: Final = 1.0

#: Slots of keys seen, so a room's commit computes its CRC16 once (cleared when full).
_SLOT_CACHE_SIZE: Final = 65536

Address = tuple[str, int]


#: How a script call's second part starts (``scripts.Script``: its name and digest or text as
#: one part, the key count first in the next).
_SCRIPT_PARTS: Final = (b"$7\r\nEVALSHA\r\n", b"$4\r\nEVAL\r\n")


def command_key(parts: tuple[bytes, ...]) -> bytes | None:
    """The key a command in RESP (``parts``, each holding whole elements: the array's header,
    bulk strings) is routed by, or None for a command of no key."""
    if len(parts) > 2 and parts[1].startswith(_SCRIPT_PARTS):
        return _script_key(parts[2])  # every commit: read only what is needed
    words: list[bytes] = []
    want = 2  # the name and the first argument, until the name says otherwise
    for part in parts:
        at = part.index(b"\r\n") + 2 if part[:1] == b"*" else 0
        size = len(part)
        while at < size:
            end = part.index(b"\r\n", at)
            length = int(part[at + 1 : end])
            words.append(part[end + 2 : end + 2 + length])
            at = end + 4 + length
            if len(words) == 1:
                name = words[0].upper()
                if name in (b"EVALSHA", b"EVAL"):
                    want = 4  # name, script, key count, first key
                else:
                    position = _KEY_AT.get(name, 1)
                    if position is None:
                        return None
                    want = position + 1
            elif len(words) == 3 and want == 4 and words[2] == b"0":
                return None  # a script of no key
            if len(words) == want:
                return words[-1]
    return None


def _script_key(part: bytes) -> bytes | None:
    """The first key of a script call whose ``part`` starts with the key count."""
    end = part.index(b"\r\n")
    size = int(part[1:end])
    if part[end + 2 : end + 2 + size] == b"0":
        return None
    at = end + 4 + size
    end = part.index(b"\r\n", at)
    return part[end + 2 : end + 2 + int(part[at + 1 : end])]


class ClusterPipe:
    """:class:`~playhall.store.pipe.CommandPipe` over a Cluster's primaries."""

    def __init__(self, cluster: RedisCluster, seed: str, *, timeout: float = 5.0) -> None:
        self.cluster = cluster
        #: A seed node's URL: the scheme, credentials and options of every node's.
        self.seed = seed
        self.timeout = timeout
        self.pipes: dict[Address, RedisPipe] = {}
        #: The primary serving each slot, by slot.
        self.table: list[Address] = []
        #: The table as the slot map last read it.
        self._read: list[Address] = []
        self._slots: dict[bytes, int] = {}
        self._on_answer: Callable[[], None] | None = None
        self._preamble: list[bytes] = []
        self._refreshing: asyncio.Task[None] | None = None
        #: When a count of 0 last had the slot map read again (the loop's clock).
        self._rechecked_at = float("-inf")
        #: Slot maps read so far (the first at start).
        self.refreshes = 0
        #: Called (with no argument) after a slot map was read that moved a slot to another
        #: node (the bus follows its channels).
        self.on_map: list[Callable[[], None]] = []
        self._copy_map()

    # -- what every node's pipe shares -------------------------------------------------------

    @property
    def on_answer(self) -> Callable[[], None] | None:
        return self._on_answer

    @on_answer.setter
    def on_answer(self, hook: Callable[[], None] | None) -> None:
        self._on_answer = hook
        for pipe in self.pipes.values():
            pipe.on_answer = hook

    @property
    def preamble(self) -> list[bytes]:
        return self._preamble

    @preamble.setter
    def preamble(self, commands: list[bytes]) -> None:
        self._preamble = commands
        for pipe in self.pipes.values():
            pipe.preamble = commands

    def pipe_at(self, address: Address) -> RedisPipe:
        """The pipe to the node at ``address``, made on first use."""
        pipe = self.pipes.get(address)
        if pipe is None:
            pipe = RedisPipe(node_url(self.seed, *address), timeout=self.timeout)
            pipe.on_answer = self._on_answer
            pipe.preamble = self._preamble
            self.pipes[address] = pipe
        return pipe

    # -- routing ---------------------------------------------------------------------------

    def slot(self, key: bytes) -> int:
        slot = self._slots.get(key)
        if slot is None:
            if len(self._slots) >= _SLOT_CACHE_SIZE:
                self._slots.clear()
            slot = self._slots[key] = key_slot(key)
        return slot

    def node_of(self, key: bytes | None) -> Address:
        """The address of the primary serving ``key`` (any primary's for no key)."""
        if key is None:
            return self.table[0]
        return self.table[self.slot(key)]

    def call(self, *args: bytes) -> Awaitable[Any]:
        return self._counting(args[0], self.call_encoded(encode_command(list(args))))

    def call_early(self, at_once: bool, now: bool, *args: bytes) -> Awaitable[Any]:
        """:meth:`call`, the command written to its node as ``RedisPipe.call_then`` writes one
        with ``at_once`` or ``now`` (the fleet's publishes, which another process waits on:
        its requests and answers); sent again after a redirection, with its new node's pass."""
        command = encode_command(list(args))
        key = command_key((command,))
        pipe = self.pipe_at(self.node_of(key))
        answer = self._answer(pipe.call_early(command, at_once, now), (command,), key)
        return self._counting(args[0], answer)

    def _counting(self, name: bytes, answer: Awaitable[Any]) -> Awaitable[Any]:
        """``answer``, checked for a count of 0 when command ``name`` counts subscribers."""
        if name in _COUNTING:
            return self._counted(answer)
        return answer

    async def _counted(self, answer: Awaitable[Any]) -> Any:
        """A count of subscribers: one of 0 may be a replica's (see :data:`_COUNTING`), so
        it has the slot map read again (at most every :data:`RECHECK_EVERY` seconds)."""
        reply = await answer
        if reply == 0 or (isinstance(reply, list) and 0 in reply[1::2]):
            now = asyncio.get_running_loop().time()
            if now - self._rechecked_at >= RECHECK_EVERY:
                self._rechecked_at = now
                self.refresh_soon()
        return reply

    def call_encoded(self, *command: bytes) -> Awaitable[Any]:
        """Queue the command on its slot's primary now (commands go in the order of the
        calls, per node); awaited, its reply, after any redirection."""
        key = command_key(command)
        address = self.node_of(key)
        return self._answer(self.pipe_at(address).call_encoded(*command), command, key)

    async def _answer(
        self, pending: Awaitable[Any], command: tuple[bytes, ...], key: bytes | None,
    ) -> Any:
        for _ in range(MAX_REDIRECTS):
            try:
                return await pending
            except ResponseError as refused:
                text = str(refused)
                moved = text.startswith("MOVED ")
                if not moved and not text.startswith("ASK "):
                    raise
                address = _redirected_to(text)
                if moved:
                    if key is not None:
                        self.table[self.slot(key)] = address
                    self.refresh_soon()
                    pending = self.pipe_at(address).call_encoded(*command)
                else:
                    pending = self._ask(self.pipe_at(address), command)
            except (RedisConnectionError, RedisTimeoutError):
                self.refresh_soon()  # a primary may have died: find its successor
                raise
        return await pending  # the last redirection's reply or error, as it is

    async def _ask(self, pipe: RedisPipe, command: tuple[bytes, ...]) -> Any:
        # ASKING holds for the next command of its connection only: both are queued in one
        # pass, once connected, so nothing comes between them.
        await pipe.connected()
        asking = pipe.call(b"ASKING")
        answer = pipe.call_encoded(*command)
        await asking
        return await answer

    # -- the slot map ----------------------------------------------------------------------

    def _copy_map(self) -> None:
        """Copy redis-py's slot map (the primary of each slot) into the routing table."""
        slots = self.cluster.nodes_manager.slots_cache
        fallback = self.cluster.get_default_node()
        table: list[Address] = []
        for slot in range(SLOTS):
            nodes = slots.get(slot)
            node = nodes[0] if nodes else fallback
            table.append((node.host, int(node.port)))
        # (Against the map read last, not the table a MOVED reply mended since.)
        changed = bool(self._read) and table != self._read
        self.table, self._read = table, list(table)
        self.refreshes += 1
        if changed:
            log.call_each(self.on_map, logger, "cluster_map_hook_failed")

    def refresh_soon(self) -> None:
        """Read the slot map again in the background."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh())

    async def refresh(self) -> None:
        """Read the slot map again, or wait for the read under way (one at a time)."""
        self.refresh_soon()
        assert self._refreshing is not None
        await asyncio.shield(self._refreshing)

    async def _refresh(self) -> None:
        """Read the slot map from the Cluster's nodes (a failure is logged: the next error
        reads it again)."""
        try:
            await self.cluster.nodes_manager.initialize()
        except Exception as exc:  # the Cluster unreachable: the commands say so themselves
            logger.warning("cluster_map_unread", error=str(exc))
            return
        self._copy_map()
        known = set(self.table)
        for address in [a for a, pipe in self.pipes.items() if a not in known and not pipe.waiting]:
            self.pipes.pop(address).close()  # no longer a primary, and nothing waits on it

    def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
        for pipe in self.pipes.values():
            pipe.close()

    async def aclose(self) -> None:
        self.close()
        await cancel_and_wait(self._refreshing)


def node_url(seed: str, host: str, port: int) -> str:
    """The URL of the Cluster node at ``host``:``port``, with ``seed``'s scheme, credentials
    and options (the nodes of a Cluster share them)."""
    parts = urlsplit(seed)
    credentials, at, _ = parts.netloc.rpartition("@")
    name = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, f"{credentials}{at}{name}:{port}", "", parts.query, ""))


def _redirected_to(reply: str) -> Address:
    """The node a ``MOVED <slot> <host>:<port>`` or ``ASK`` reply names."""
    host, _, port = reply.split()[2].rpartition(":")
    return host.removeprefix("[").removesuffix("]"), int(port)
