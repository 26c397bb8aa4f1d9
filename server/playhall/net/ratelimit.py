"""Rate limits: a connection's messages (a token bucket with a strike count), and a client
address's plain HTTP requests (a token bucket per address)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class TokenBucket:
    """``rate`` messages per second on average, bursts up to ``burst``.

    A refused message is a strike; strikes decay as allowed messages come in. A connection whose
    strikes pile up past ``burst`` is flooding and should be closed.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.strikes = 0
        self._now = time.monotonic
        self._last = self._now()

    def allow(self) -> bool:
        now = self._now()
        self.tokens = min(float(self.burst), self.tokens + (now - self._last) * self.rate)
        self._last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.strikes = max(0, self.strikes - 1)
            return True
        self.strikes += 1
        return False

    @property
    def flooding(self) -> bool:
        return self.strikes > self.burst


class AddressBuckets:
    """A token bucket per client address: ``rate`` requests a second on average, bursts up to
    ``burst``; ``rate`` 0 is no limit. At most ``capacity`` addresses are remembered (the one
    seen least recently forgotten first; a forgotten address starts again with a full bucket),
    so the table cannot grow without bound."""

    def __init__(
        self,
        rate: float,
        burst: int,
        capacity: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.capacity = capacity
        self._clock = clock
        #: Address -> (tokens, when they were counted).
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, address: str) -> float:
        """Take a token for one request from ``address``: 0 if it had one, else the seconds
        until it will (nothing is taken then)."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        tokens, then = self._buckets.pop(address, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[address] = (tokens, now)
        while len(self._buckets) > self.capacity:
            self._buckets.popitem(last=False)
        return wait

    def __len__(self) -> int:
        return len(self._buckets)
