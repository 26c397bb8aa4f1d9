"""Hash slots: which of Redis Cluster's 16384 slots a key is in, and the slot guard.

On a Cluster a script or a multi-key command must name keys of one slot only (its node holds
nothing else), and the key layout (``keys``) puts what one change touches in one slot by hash
tags. The guard proves that on a single Redis too: with ``PLAYHALL_CHECK_SLOTS=1`` in the
environment (the test suite sets it for itself and the servers it starts), every script call on
the command pipe (``scripts.run``, ``scripts.send``: commits, leases, listings, the fleet
registry, ...) and the room store's multi-key commands and transactions check their keys and
raise :class:`CrossSlot` if they span slots. Off by default: it costs a parse of every script
call's arguments.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Final

from redis.crc import key_slot

#: Whether the guard is on (read once, at import: servers inherit it from their environment).
CHECK_SLOTS: Final = os.environ.get("PLAYHALL_CHECK_SLOTS", "") == "1"


class CrossSlot(Exception):
    """A script call or a multi-key command named keys of more than one hash slot (it would be
    refused by a Cluster)."""


def slot_of(key: bytes | str) -> int:
    """The hash slot of ``key`` (the part in its first ``{...}`` if that is not empty)."""
    return int(key_slot(key.encode() if isinstance(key, str) else key))


def check(keys: Iterable[bytes | str], what: str) -> None:
    """Raise :class:`CrossSlot` if ``keys`` are not all in one slot (``what``: the command or
    script, for the message)."""
    named = list(keys)
    found = {slot_of(key) for key in named}
    if len(found) > 1:
        shown = ", ".join(k.decode() if isinstance(k, bytes) else k for k in named)
        raise CrossSlot(f"{what}: keys in {len(found)} hash slots: {shown}")


def script_keys(*words: bytes) -> list[bytes]:
    """The keys of a script call whose arguments are ``words``: RESP bulk strings (the key
    count, the keys, the arguments), in one or more parts, as ``scripts.run`` takes them."""
    data = b"".join(words)
    values: list[bytes] = []
    at = 0
    count = None
    while count is None or len(values) < count + 1:
        end = data.index(b"\r\n", at)
        size = int(data[at + 1 : end])
        values.append(data[end + 2 : end + 2 + size])
        at = end + 2 + size + 2
        if count is None:
            count = int(values[0])
    return values[1:]
