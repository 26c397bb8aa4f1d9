"""The names the configuration puts into Redis keys around hash tags refuse braces: a brace in
the prefix or the instance would move the tag Redis hashes (docs/operations.md, "Redis key
layout")."""

from __future__ import annotations

import pytest

from playhall.config import Config


@pytest.mark.parametrize("name", ["KEY_PREFIX", "INSTANCE"])
@pytest.mark.parametrize("value", ["a{b}:", "x}", "{"])
def test_a_name_with_a_brace_is_refused(name: str, value: str) -> None:
    with pytest.raises(ValueError, match="brace"):
        Config.from_env({f"PLAYHALL_{name}": value})


def test_names_without_braces_are_kept() -> None:
    config = Config.from_env({"PLAYHALL_KEY_PREFIX": "hall2:", "PLAYHALL_INSTANCE": "web-1:8765"})
    assert (config.key_prefix, config.instance) == ("hall2:", "web-1:8765")
