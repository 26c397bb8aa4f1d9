"""Shared test configuration."""

import asyncio
import os

# Every script call and multi-key command the store makes checks that its keys share one hash
# slot, as a Redis Cluster requires (playhall.store.slots): set before playhall is imported,
# and inherited by the server processes the tests start.
os.environ["PLAYHALL_CHECK_SLOTS"] = "1"

from hypothesis import settings  # noqa: E402

from playhall.eventloop import LoopFactory, loop_factory  # noqa: E402

# CI has two cores and shares them with Redis and servers: keep property runs bounded and
# deterministic there; more thorough locally when asked (HYPOTHESIS_PROFILE=thorough).
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_asyncio_loop_factories(config: object, item: object) -> dict[str, LoopFactory]:
    """Async tests (and the servers they start in process) run on the event loop the server
    runs on: ``PLAYHALL_EVENT_LOOP`` as ``playhall serve`` reads it, by default uvloop where
    installed. Servers started as processes read the same variable."""
    factory = loop_factory(os.environ.get("PLAYHALL_EVENT_LOOP", "auto"))
    if factory is None:
        return {"asyncio": asyncio.new_event_loop}
    return {"uvloop": factory}
