"""The replies of the tests' own redis-py clients, as the types they are. redis-py types a
reply's strings as bytes-or-str (a client made with ``decode_responses`` gets str), but these
clients never decode: every string they get is bytes. And a reply a test knows is there (a
key it wrote, a stream's entries) is not None."""

from __future__ import annotations

from typing import cast

from redis.typing import StreamRangeResponse


def raw(reply: object) -> bytes:
    """A string reply (or one string of a reply): bytes, and there."""
    assert isinstance(reply, bytes), reply
    return reply


def stream_entries(reply: StreamRangeResponse | None) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """XRANGE's (or XREVRANGE's) reply: each entry's id and fields."""
    assert reply is not None  # an array, empty when there is no stream
    found: list[tuple[bytes, dict[bytes, bytes]]] = []
    for entry_id, fields in reply:
        assert fields is not None  # None only for an entry deleted under a consumer group
        found.append((raw(entry_id), cast(dict[bytes, bytes], fields)))
    return found
