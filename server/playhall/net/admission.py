"""Connections per client address: one address may hold at most ``connections_per_address``
connections at once; a handshake past that is refused with HTTP 429, before any frame.

The address is the peer's, or, behind a proxy and only when ``forwarded_header`` names the
header that proxy sets, the last address in that header (the one the proxy itself added: what
a client writes into the header comes before it and is not trusted).
"""

from __future__ import annotations

from websockets.datastructures import Headers


class Admission:
    def __init__(self, limit: int, forwarded_header: str = "") -> None:
        self.limit = limit
        self.forwarded_header = forwarded_header
        #: Address -> connections open from it (an address with none has no entry).
        self.open: dict[str, int] = {}

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
        self.open[address] = self.open.get(address, 0) + 1

    def closed(self, address: str) -> None:
        left = self.open.get(address, 0) - 1
        if left > 0:
            self.open[address] = left
        else:
            self.open.pop(address, None)
