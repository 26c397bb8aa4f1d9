"""A small deterministic random number generator whose whole state is one integer.

Game states are plain data stored in Redis, so the generator's state must be plain data too:
a restored game has to draw exactly the numbers the original would have drawn. Python's
``random.Random`` state is 625 words and version-dependent; splitmix64 is one 64-bit word,
fast, well distributed, and trivially specified, so another implementation can reproduce it.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, Final, TypeVar

T = TypeVar("T")

_MASK: Final = (1 << 64) - 1
_GAMMA: Final = 0x9E3779B97F4A7C15


def _c_shuffle() -> Callable[[int, list[Any]], int] | None:
    """The C twin of :meth:`Rng.shuffle` (``_splitmix.c``), where it was built. It is used
    whenever it is there: it draws exactly what the reference draws (tested draw for draw), and
    games import nothing of the protocol's, where ``PLAYHALL_SPEEDUPS`` is read."""
    try:
        from playhall.games._splitmix import shuffle
    except ImportError:
        return None
    return shuffle


_C_SHUFFLE: Final = _c_shuffle()


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
        """Fisher–Yates, in place. (A list is shuffled by the C twin where it is built: the
        same draws, a few hundred times faster; this loop is its specification.)"""
        if _C_SHUFFLE is not None and type(items) is list:
            self.state = _C_SHUFFLE(self.state, items)
            return
        self.shuffle_reference(items)

    def shuffle_reference(self, items: MutableSequence[T]) -> None:
        """:meth:`shuffle` in Python: what the C twin must do, draw for draw."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def seed_state(seed: int) -> int:
    """The generator state a game starts from, given the room's seed."""
    return seed & _MASK
