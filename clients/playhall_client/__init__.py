"""Python client for Playhall: connection, lobby calls, room mirrors kept by diffs, moves."""

from playhall_client.client import Client, ConnectionLost, RoomMirror, ServerError

#: This distribution's version (playhall-client), which moves with the server's.
__version__ = "0.1.0"

__all__ = ["__version__", "Client", "ConnectionLost", "RoomMirror", "ServerError"]
