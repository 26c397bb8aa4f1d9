"""A scripted websocket server for the client library's tests, where what the server says and
when must be exact: a handler per connection, served on a free port of this machine."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

#: The server's answer to ``hello`` (the request id ``re`` added per hello).
HELLO_OK: dict[str, Any] = {
    "t": "ok", "player": "p1", "name": "ann", "protocol": 1, "server": "script", "rooms": [],
    "limits": {"max_frame": 65536, "rate": 40.0, "burst": 80},
}


@contextlib.asynccontextmanager
async def served(handler: Callable[[ServerConnection], Awaitable[None]]) -> AsyncIterator[str]:
    """The URL of a websocket server on 127.0.0.1 running ``handler`` for each connection,
    while the block runs."""
    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        yield f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
