"""Wrong join codes, counted per player and per client address, with a growing back-off.

Each key (a player, an address) may give ``free`` wrong codes in a row at once; from the
``free``-th on, each makes it wait before the next try: ``first`` seconds, doubling with every
further wrong code up to ``longest``. A key that gave no wrong code for ``longest`` seconds
after its wait ended is forgotten (its count starts again). A right code does not reset the
count: knowing one room's code must not buy more guesses at the others. At most ``capacity``
keys are remembered (the oldest forgotten first), so the table cannot grow without bound
either.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

#: Keys remembered at most (a few hundred bytes each).
CAPACITY: Final = 100_000


class _Tries:
    __slots__ = ("wrong", "until")

    def __init__(self) -> None:
        self.wrong = 0
        self.until = 0.0  # no try before this (the last wrong code's time plus its wait)


class GuessLimiter:
    def __init__(
        self,
        free: int,
        first: float,
        longest: float,
        capacity: int = CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free = free
        self.first = first
        self.longest = longest
        self.capacity = capacity
        self._clock = clock
        self._keys: OrderedDict[str, _Tries] = OrderedDict()

    def wait(self, keys: list[str]) -> float:
        """Seconds before any of ``keys`` may try a code again (0: now)."""
        now = self._clock()
        return max([0.0, *(self._live(key, now).until - now for key in keys if key in self._keys)])

    def wrong(self, keys: list[str]) -> tuple[int, float]:
        """Count a wrong code against each key; the most wrong codes among them and the wait
        now imposed (the longest)."""
        now = self._clock()
        most, longest = 0, 0.0
        for key in keys:
            tries = self._live(key, now)
            tries.wrong += 1
            over = tries.wrong - self.free + 1
            delay = 0.0
            if over > 0:
                # Capped before raising 2 to a power that could overflow a float.
                delay = min(self.longest, self.first * 2.0 ** min(over - 1, 64))
            tries.until = now + delay
            self._keys[key] = tries
            self._keys.move_to_end(key)
            most = max(most, tries.wrong)
            longest = max(longest, tries.until - now)
        while len(self._keys) > self.capacity:
            self._keys.popitem(last=False)
        return most, max(0.0, longest)

    def _live(self, key: str, now: float) -> _Tries:
        """The key's tries, forgotten (a fresh count) once it has been quiet for ``longest``
        after its wait ended (so waiting out the longest wait does not reset the count)."""
        tries = self._keys.get(key)
        if tries is None or now - tries.until > self.longest:
            return _Tries()
        return tries

    def __len__(self) -> int:
        return len(self._keys)
