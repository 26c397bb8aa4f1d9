"""Types of the C twin (_splitmix.c) of playhall.games.rng.Rng.shuffle."""

from typing import Any

def shuffle(state: int, items: list[Any], /) -> int: ...
