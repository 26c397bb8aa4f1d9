"""The live conformance tests use the server tests' fixtures: a real Redis and a real server."""

from tests.server.conftest import redis_url, server, url  # noqa: F401
