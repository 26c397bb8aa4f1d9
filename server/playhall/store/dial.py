"""How the store's own connections (the command pipe's, the bus's subscribed ones) reach the
Redis a URL names, and what they say first.

The URL is read as redis-py reads it (``redis.connection.parse_url``), so these connections and
the server's redis-py clients go where the same URL sends them and check the same things:
``rediss://`` speaks TLS with the ``ssl_*`` options of its query string (certificates required
and the host name checked unless they say otherwise), ``unix://`` is a socket path, the user
name and password are sent with ``AUTH`` and the path's database is selected. Connecting has a
deadline: past it, :class:`CommandTimeout`; a refusal (a certificate included) is redis-py's
``ConnectionError``, so both count as Redis failing (``store.outage``).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any, TypeVar

from redis.asyncio.connection import RedisSSLContext
from redis.connection import SSLConnection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

P = TypeVar("P", bound=asyncio.Protocol)


class CommandTimeout(RedisTimeoutError):
    """Redis did not answer a command (or take a connection) within the deadline: whether a
    write it carried was made is not known (it may have been, with the reply lost)."""


def ssl_context(params: dict[str, Any]) -> ssl.SSLContext | None:
    """The TLS context a ``rediss://`` URL asks for (``params`` from ``parse_url``), with
    redis-py's defaults for what it leaves out (certificates required, host name checked), so
    these connections and the server's redis-py pool check the same things; None for a URL
    without TLS."""
    if params.get("connection_class") is not SSLConnection:
        return None
    options: dict[str, Any] = {"cert_reqs": "required", "check_hostname": True}
    options.update((name[4:], value) for name, value in params.items() if name.startswith("ssl_"))
    return RedisSSLContext(**options).get()


class Dial:
    """The Redis one URL names: where it is, how to speak to it, and who to say one is."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.params: dict[str, Any] = parse_url(url)
        self.tls = ssl_context(self.params)
        #: Seconds a connection may take to be made.
        self.timeout = timeout

    async def connect(self, factory: Callable[[], P]) -> P:
        """A connection to the Redis, read by the protocol ``factory`` makes."""
        loop = asyncio.get_running_loop()
        params = self.params
        try:
            async with asyncio.timeout(self.timeout):
                if "path" in params:
                    _, protocol = await loop.create_unix_connection(factory, params["path"])
                else:
                    _, protocol = await loop.create_connection(
                        factory,
                        params.get("host", "localhost"),
                        params.get("port", 6379),
                        ssl=self.tls,
                    )
        except TimeoutError as exc:
            raise CommandTimeout(f"cannot reach Redis within {self.timeout:g} s") from exc
        except OSError as exc:  # ssl.SSLError (a certificate refused) included
            raise RedisConnectionError(f"cannot reach Redis: {exc}") from exc
        return protocol

    def login(self) -> list[list[bytes]]:
        """The commands a new connection sends before any other: ``AUTH`` with the URL's user
        and password, ``SELECT`` of its database (none for what the URL leaves out)."""
        params = self.params
        commands = []
        if params.get("password"):
            auth = [b"AUTH", str(params["password"]).encode()]
            if params.get("username"):
                auth.insert(1, str(params["username"]).encode())
            commands.append(auth)
        if params.get("db"):
            commands.append([b"SELECT", str(params["db"]).encode()])
        return commands
