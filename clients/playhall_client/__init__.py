"""Python client for Playhall: connection, lobby calls, room mirrors kept by diffs, moves."""

from playhall_client.client import Client, ConnectionLost, RoomMirror, ServerError

__all__ = ["Client", "ConnectionLost", "RoomMirror", "ServerError"]
