"""Python client for Playhall: connection, lobby calls, room mirrors kept by diffs, moves."""
