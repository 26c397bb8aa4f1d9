"""Logging refusals without letting a flood write the log: one line per kind of refusal, client
address and window.

A client refused over and over (a connection past its address's cap, a plain HTTP request past
its address's rate) would otherwise write a line per refusal: as much log as it likes. Here the
first refusal of an address in a window is logged, with how many of its refusals since its
previous line went unlogged; the rest of the window is counted, not logged. At most
``capacity`` addresses are remembered (the one refused least recently forgotten first: it is
logged again at its next refusal), so the table cannot grow without bound either.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

#: Seconds in which an address's refusals of one kind are logged once.
WINDOW: Final = 60.0


class RefusalLog:
    def __init__(
        self,
        logger: Any,
        event: str,
        window: float = WINDOW,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.event = event
        self.window = window
        self.capacity = capacity
        self._clock = clock
        #: Address -> [when its last line was written, refusals since then not logged].
        self._seen: OrderedDict[str, list[float]] = OrderedDict()
        #: Refusals since the process started, logged or not (for the metrics).
        self.total = 0

    def refused(self, address: str, **fields: Any) -> None:
        self.total += 1
        now = self._clock()
        seen = self._seen.get(address)
        if seen is not None and now - seen[0] < self.window:
            seen[1] += 1
            self._seen.move_to_end(address)
            return
        unlogged = int(seen[1]) if seen is not None else 0
        self._seen[address] = [now, 0]
        self._seen.move_to_end(address)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        self.logger.info(
            self.event, address=address, unlogged=unlogged, window=self.window, **fields
        )
