"""The games' random number generator: a cryptographic stream whose whole state is plain data.

A room's randomness must be unpredictable to players (a player who has seen some cards must not
be able to work out the rest of the deck) and exactly reproducible by anyone who later learns
the room's key (a restored or replayed game draws the same numbers; a verifier recomputes the
deal). So every draw comes from HMAC-SHA256 in counter mode under the room's 32-byte key, and
the generator's state is three plain values kept in the game state:

- ``key``: the 32-byte key (the room's, derived as ``protocol/PROTOCOL.md`` "Fair deals" says);
- ``label``: the name of the stream (``"game"`` for the game's own draws; a bot draws from
  ``"bot/<version>"``, see :func:`bot_state`), so separate streams never share a number;
- ``counter``: how many 64-bit words have been drawn from that stream.

Word ``w`` of a stream is bytes ``8*(w % 4)`` to ``8*(w % 4) + 8`` (big-endian) of
``HMAC-SHA256(key, label in UTF-8 || w // 4 as 8 big-endian bytes)``. ``below(n)`` draws
words until one is under the largest multiple of ``n`` that fits in 64 bits and returns it
modulo ``n`` (no bias); ``shuffle`` is Fisher–Yates from the last index down, ``j = below(i +
1)``. ``protocol/PROTOCOL.md`` specifies the same with test vectors, for verifiers written
elsewhere.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence, Sequence
from typing import Any, Final, TypeVar

T = TypeVar("T")

#: The game's own stream.
GAME_LABEL: Final = "game"
KEY_BYTES: Final = 32
_TWO_64: Final = 1 << 64
#: A block's four words, big-endian: unpacked together when the block is made, so a draw is an
#: index into them (slicing and converting each word alone cost a draw more than its share of
#: the block's HMAC).
_BLOCK_WORDS: Final = struct.Struct(">4Q")

#: The largest multiple of each n up to 2^64, for the bounds games draw below (a deck's size,
#: a die's faces): worked out once here, not with two big-number steps at every draw.
_SMALL_BOUNDS: Final = 256
_LIMITS: Final[list[int]] = [0] + [_TWO_64 - _TWO_64 % n for n in range(1, _SMALL_BOUNDS)]

#: The generator's state as a game state keeps it: ``{"key": bytes, "label": str, "counter":
#: int}``.
RngState = dict[str, Any]


def int_key(n: int) -> bytes:
    """A key named by a number, for tests, tools and benchmarks (a room's key is never one):
    ``n`` as 32 big-endian bytes."""
    return n.to_bytes(KEY_BYTES, "big")


def seed_state(key: bytes | int, label: str = GAME_LABEL) -> RngState:
    """The state a stream starts from: ``key`` (32 bytes, or an int standing for
    :func:`int_key` of it), ``label``, nothing drawn yet."""
    if isinstance(key, int):
        key = int_key(key)
    if type(key) is not bytes or len(key) != KEY_BYTES:
        raise ValueError(f"a generator key is {KEY_BYTES} bytes")
    return {"key": key, "label": label, "counter": 0}


def bot_state(key: bytes | int, version: int) -> RngState:
    """A bot's stream for its move at room ``version``: the room's key, its own label, so a
    bot's draws neither touch the game's stream nor repeat from one move to the next."""
    return seed_state(key, f"bot/{version}")


class Rng:
    """The stream in ``state`` (see the module's docstring), resumed where it stopped; read
    :attr:`state` after drawing to store where it stops now. An int stands for
    ``seed_state(n)``, for tests and tools."""

    __slots__ = ("key", "label", "_prefix", "counter", "_words", "_block_index", "_pads")

    def __init__(self, state: RngState | int) -> None:
        if isinstance(state, int):
            state = seed_state(state)
        self.key: bytes = state["key"]
        if len(self.key) != KEY_BYTES:
            raise ValueError(f"a generator key is {KEY_BYTES} bytes")
        self.label: str = state["label"]
        self._prefix = self.label.encode()
        self.counter: int = state["counter"]
        self._words: tuple[int, ...] = ()
        self._block_index = -1
        self._pads: tuple[Any, Any] | None = None

    @property
    def state(self) -> RngState:
        return {"key": self.key, "label": self.label, "counter": self.counter}

    def next64(self) -> int:
        """The stream's next 64-bit word."""
        counter = self.counter
        index = counter >> 2  # four words a block: counter // 4, and below counter % 4
        if index != self._block_index:
            self._words = _BLOCK_WORDS.unpack(self._hmac(self._prefix + index.to_bytes(8, "big")))
            self._block_index = index
        self.counter = counter + 1
        return self._words[counter & 3]

    def _hmac(self, message: bytes) -> bytes:
        """HMAC-SHA256(key, message) as RFC 2104 defines it, from the key's two padded SHA-256
        states worked out once per generator: copying them costs a third of what
        ``hmac.digest`` does when it sets up a context for every block."""
        pads = self._pads
        if pads is None:
            key = self.key.ljust(64, b"\0")  # a key of 32 bytes is padded, never hashed
            pads = self._pads = (
                hashlib.sha256(bytes(b ^ 0x36 for b in key)),
                hashlib.sha256(bytes(b ^ 0x5C for b in key)),
            )
        inner = pads[0].copy()
        inner.update(message)
        outer = pads[1].copy()
        outer.update(inner.digest())
        return outer.digest()

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), without modulo bias (rejection sampling)."""
        if 0 < n < _SMALL_BOUNDS:
            limit = _LIMITS[n]
        elif 0 < n <= _TWO_64:
            limit = _TWO_64 - (_TWO_64 % n)
        else:  # (past 2^64 no word is under a multiple of n: the loop below would never end)
            raise ValueError("n must be from 1 to 2^64")
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def between(self, low: int, high: int) -> int:
        """A uniform integer in [low, high], both ends included (a die is ``between(1, 6)``)."""
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher–Yates, in place, from the last index down."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
