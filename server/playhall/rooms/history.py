"""The frames a room sent for its last few versions, replayed to a client catching up.

Stored as one deque of ``{viewer key: frame bytes}`` dicts plus the version of the newest, not
as ``(version, frames)`` pairs: a dict whose keys are ints or ``None`` and whose values are
bytes is never tracked by CPython's cyclic collector, but a tuple holding a dict always is. With
64 versions kept per room, such tuples would be a large share of the objects every young
collection walks (docs/benchmarks.md, "Collector pauses"), and each walk is a pause of every
room on the process.
"""

from __future__ import annotations

from collections import deque
from itertools import islice
from typing import Generic, TypeVar

Key = TypeVar("Key")


class FrameHistory(Generic[Key]):
    """The last ``size`` versions' frames, by viewer key. Versions are recorded one after
    another; a gap (a version recorded out of sequence) starts the history afresh."""

    def __init__(self, size: int) -> None:
        self._frames: deque[dict[Key, bytes]] = deque(maxlen=size)
        self._newest = -1  # the version of the last entry of _frames

    def __len__(self) -> int:
        return len(self._frames)

    def record(self, version: int, frames: dict[Key, bytes]) -> None:
        """Keep the frames sent for ``version`` (the frames are kept as they are, not copied)."""
        if version != self._newest + 1:
            self._frames.clear()
        self._frames.append(frames)
        self._newest = version

    def since(self, key: Key, have: int, current: int) -> list[bytes] | None:
        """The frames ``key`` was sent for versions after ``have`` up to ``current``, in order;
        None if the history does not hold every one of them (then a snapshot is due)."""
        if have == current:
            return []
        missed = current - have
        if have > current or current != self._newest or missed > len(self._frames):
            return None
        needed = []
        for frames in islice(self._frames, len(self._frames) - missed, None):
            frame = frames.get(key)
            if frame is None:  # the key was not watched at that version
                return None
            needed.append(frame)
        return needed
