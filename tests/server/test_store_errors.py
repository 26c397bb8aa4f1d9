"""Telling Redis failing from a bug (``store.outage.is_store_error``): what the room answers
``store_failed`` (retryable) rather than ``internal``."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.store.outage import Outage, is_store_error


def _raised_in(module: str, source: str) -> BaseException:
    """The exception ``source`` (a function ``fail``) raises, defined as if in ``module``."""
    scope: dict[str, Any] = {"__name__": module}
    exec(compile(source, f"<{module}>", "exec"), scope)  # noqa: S102 (the test's own text)
    with pytest.raises(BaseException) as raised:
        scope["fail"]()
    return raised.value


WRITE_ON_DROPPED = "def fail():\n    writer = None\n    writer.writelines([b'PING'])\n"


def test_redis_py_writing_to_a_connection_dropped_meanwhile_is_a_store_failure() -> None:
    # redis-py 8's asyncio connection, its writer set to None by a disconnect from another
    # task between its connect and its first write (seen as a Cluster primary failed over).
    assert is_store_error(_raised_in("redis.asyncio.connection", WRITE_ON_DROPPED))


def test_an_attribute_error_in_playhalls_own_code_is_a_bug() -> None:
    assert not is_store_error(_raised_in("playhall.rooms.commands", WRITE_ON_DROPPED))


def test_a_socket_error_raised_under_redis_py_is_a_store_failure() -> None:
    source = "def fail():\n    raise RuntimeError('write to a closed transport')\n"
    assert is_store_error(_raised_in("redis.asyncio.connection", source))
    assert not is_store_error(_raised_in("playhall.fleet.edge", source))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_answers_among_failures_do_not_end_an_outage_until_the_failures_stop() -> None:
    """One Cluster primary away: its slots' commands fail while the others' are answered. That
    is one outage (one redis_unavailable, one redis_available), not one per answer."""
    clock = Clock()
    outage = Outage(settle=1.0, clock=clock)
    for _ in range(50):  # 5 s of a failure and an answer every 0.1 s
        outage.failed(ConnectionError("node away"), during="test")
        clock.now += 0.05
        outage.answered()
        clock.now += 0.05
    assert outage.ongoing and outage.outages_total == 1 and outage.failures == 50
    clock.now += 1.0  # the failures stopped
    outage.answered()
    assert not outage.ongoing and outage.outages_total == 1


def test_an_answer_a_while_after_the_last_failure_ends_the_outage() -> None:
    clock = Clock()
    outage = Outage(settle=1.0, clock=clock)
    outage.failed(ConnectionError("away"), during="test")
    clock.now += 1.0
    outage.answered()
    assert not outage.ongoing
    outage.failed(ConnectionError("away"), during="test")
    assert outage.ongoing and outage.outages_total == 2
