"""Fair deals: the commitment a room shows before its game, and the key its deal is drawn from.

The construction (``PROTOCOL.md``, "Fair deals", with its byte layout and test vectors):

- a room draws a 32-byte secret when it is created and shows ``commitment = SHA-256(COMMIT_LABEL
  || lp(room id) || secret)`` from the start;
- each seated player may contribute up to :data:`MAX_CONTRIBUTION` bytes with ``ready``;
- when the game starts, ``key = HMAC-SHA256(secret, KEY_LABEL || lp(room id) || u32(seats) ||
  lp(contribution of seat 0) || ...)``, an empty contribution for a seat that gave none;
- the game draws everything from ``key`` (the generator: ``PROTOCOL.md``, "The generator");
- when the game ends, the room view reveals the secret and the contributions.

``lp(x)`` is ``x``'s length as 4 big-endian bytes, then ``x``; strings are UTF-8. The server
and the clients' verifiers both use this module, so they cannot drift apart.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence
from typing import Final

from playhall_protocol.messages import MAX_ENTROPY

COMMIT_LABEL: Final = b"playhall/commit/v1"
KEY_LABEL: Final = b"playhall/key/v1"
SECRET_BYTES: Final = 32
#: The most a player may contribute with ``ready`` (the clients send 16 random bytes).
MAX_CONTRIBUTION: Final = MAX_ENTROPY


def new_secret() -> bytes:
    """A room's secret: 32 bytes from the operating system's generator."""
    return os.urandom(SECRET_BYTES)


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def commitment(room_id: str, secret: bytes) -> bytes:
    """What the room shows before its game: SHA-256 over the label, the room id, the secret."""
    return hashlib.sha256(COMMIT_LABEL + _lp(room_id.encode()) + secret).digest()


def room_key(secret: bytes, room_id: str, contributions: Sequence[bytes | None]) -> bytes:
    """The key the game draws from: the secret mixed with every seat's contribution in seat
    order (None, or empty: the seat gave none)."""
    message = bytearray(KEY_LABEL)
    message += _lp(room_id.encode())
    message += len(contributions).to_bytes(4, "big")
    for contribution in contributions:
        message += _lp(contribution or b"")
    return hmac.digest(secret, bytes(message), "sha256")


class NotVerified(Exception):
    """What a revealed room's material fails, said for people."""


def verify(
    room_id: str,
    shown_commitment: bytes,
    secret: bytes,
    contributions: Sequence[bytes | None],
    own: bytes | None = None,
    own_seat: int | None = None,
) -> bytes:
    """Check revealed material against the commitment shown before the game; return the key.

    ``own`` and ``own_seat``: the contribution a player sent and their seat, checked to be the
    one the key was made with. Raises :class:`NotVerified` saying what does not match."""
    if len(secret) != SECRET_BYTES:
        raise NotVerified(f"the secret is {len(secret)} bytes, not {SECRET_BYTES}")
    if not hmac.compare_digest(commitment(room_id, secret), shown_commitment):
        raise NotVerified("the secret does not match the commitment shown before the game")
    if own_seat is not None:
        if not 0 <= own_seat < len(contributions):
            raise NotVerified(f"no seat {own_seat} among {len(contributions)} contributions")
        if (contributions[own_seat] or b"") != (own or b""):
            raise NotVerified(f"seat {own_seat}'s contribution is not the one it sent")
    return room_key(secret, room_id, contributions)
