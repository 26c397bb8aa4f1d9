"""A small deterministic random number generator whose whole state is one integer.

Game states are plain data stored in Redis, so the generator's state must be plain data too:
a restored game has to draw exactly the numbers the original would have drawn. Python's
``random.Random`` state is 625 words and version-dependent; splitmix64 is one 64-bit word,
fast, well distributed, and trivially specified, so another implementation can reproduce it.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


class Rng:
    """splitmix64. ``state`` is the only field; store it, and later ``Rng(state)`` resumes."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    def next64(self) -> int:
        self.state = (self.state + _GAMMA) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), without modulo bias (rejection sampling)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
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
        """Fisher–Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def seed_state(seed: int) -> int:
    """The generator state a game starts from, given the room's seed."""
    return seed & _MASK
