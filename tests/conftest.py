"""Shared test configuration."""

import os

from hypothesis import settings

# CI has two cores and shares them with Redis and servers: keep property runs bounded and
# deterministic there; more thorough locally when asked (HYPOTHESIS_PROFILE=thorough).
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
