"""Connections per client address: one address may hold at most ``connections_per_address``
connections at once, counted from the moment each is accepted (so connections that never send
a handshake count too); a connection past that is refused with HTTP 429, before any frame.

A refused connection is answered once its request has come (a client that is answered before
it has sent its request may not read the answer), so it is held a moment too: at most
``REFUSING`` such connections per address; past that, one is closed at once, unanswered. So
one address holds at most ``connections_per_address + REFUSING`` descriptors, however fast
it connects.

The address is the peer's, or, behind a proxy and only when ``forwarded_header`` names the
header that proxy sets, the last address in that header (the one the proxy itself added: what
a client writes into the header comes before it and is not trusted).
"""

from __future__ import annotations

from typing import Final

from websockets.datastructures import Headers

#: Connections past the cap that one address may have waiting for their 429 at once.
REFUSING: Final = 8


class Admission:
    def __init__(self, limit: int, forwarded_header: str = "") -> None:
        self.limit = limit
        self.forwarded_header = forwarded_header
        #: Address -> connections open from it (an address with none has no entry).
        self.open: dict[str, int] = {}
        #: Address -> connections past the cap waiting for their 429 (see REFUSING).
        self.waiting: dict[str, int] = {}

    def address(self, peer: str, headers: Headers) -> str:
        """The client's address: from the trusted forwarded header if one is configured and
        present, else the peer's host (``peer`` is ``host:port``)."""
        if self.forwarded_header:
            values = ",".join(headers.get_all(self.forwarded_header))
            hops = [hop.strip() for hop in values.split(",") if hop.strip()]
            if hops:
                return hops[-1]
        host, _, port = peer.rpartition(":")
        return host if host and port.isdigit() else peer

    def full(self, address: str) -> bool:
        return self.limit > 0 and self.open.get(address, 0) >= self.limit

    def opened(self, address: str) -> None:
        _count(self.open, address, 1)

    def closed(self, address: str) -> None:
        _count(self.open, address, -1)

    def refusing(self, address: str) -> bool:
        """Whether another connection past the cap may wait for its 429 (then it is counted
        until :meth:`refused`); else it is to be closed at once."""
        if self.waiting.get(address, 0) >= REFUSING:
            return False
        _count(self.waiting, address, 1)
        return True

    def refused(self, address: str) -> None:
        _count(self.waiting, address, -1)


def _count(table: dict[str, int], address: str, change: int) -> None:
    """Change an address's count; an address at 0 has no entry."""
    left = table.get(address, 0) + change
    if left > 0:
        table[address] = left
    else:
        table.pop(address, None)
