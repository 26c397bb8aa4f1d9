"""Per-connection message rate limiting (a token bucket with a strike count)."""

from __future__ import annotations

import time


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
