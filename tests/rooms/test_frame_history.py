"""The frame history a reconnecting client catches up from: exactly the frames it missed, in
order, or None when any of them is gone; and entries the cyclic collector never has to walk."""

from __future__ import annotations

import gc

from playhall.rooms.history import FrameHistory


def _history(size: int, versions: range) -> FrameHistory[int | None]:
    history: FrameHistory[int | None] = FrameHistory(size)
    for v in versions:
        history.record(v, {0: b"seat0@%d" % v, None: b"watch@%d" % v})
    return history


def test_a_client_gets_the_frames_of_its_key_it_missed_in_order() -> None:
    history = _history(8, range(1, 11))
    assert history.since(0, 7, 10) == [b"seat0@8", b"seat0@9", b"seat0@10"]
    assert history.since(None, 9, 10) == [b"watch@10"]
    assert history.since(0, 10, 10) == []


def test_only_the_last_size_versions_are_kept() -> None:
    history = _history(4, range(1, 11))
    assert len(history) == 4
    assert history.since(0, 6, 10) == [b"seat0@7", b"seat0@8", b"seat0@9", b"seat0@10"]
    assert history.since(0, 5, 10) is None  # version 6's frames are gone


def test_a_key_without_a_frame_in_a_missed_version_gets_none() -> None:
    history = _history(8, range(1, 4))
    history.record(4, {None: b"watch@4"})  # seat 0 was not watched at version 4
    history.record(5, {0: b"seat0@5", None: b"watch@5"})
    assert history.since(0, 3, 5) is None
    assert history.since(0, 4, 5) == [b"seat0@5"]
    assert history.since(None, 2, 5) == [b"watch@3", b"watch@4", b"watch@5"]


def test_versions_it_does_not_hold_get_none() -> None:
    history = _history(8, range(1, 6))
    assert history.since(0, 6, 5) is None  # from the future
    assert history.since(0, 3, 7) is None  # the room is ahead of what was recorded
    assert FrameHistory[int](8).since(0, 1, 2) is None  # nothing recorded


def test_a_gap_in_the_versions_starts_afresh() -> None:
    history = _history(8, range(1, 6))
    history.record(9, {0: b"seat0@9"})
    assert len(history) == 1
    assert history.since(0, 8, 9) == [b"seat0@9"]
    assert history.since(0, 4, 9) is None  # versions 6 to 8 were never recorded


def test_its_entries_are_not_tracked_by_the_cyclic_collector() -> None:
    # Why it is built this way (see the module): a (version, frames) tuple was always tracked.
    history = _history(8, range(1, 9))
    frames = history._frames
    assert gc.is_tracked(frames)  # the deque itself, one object per room
    assert not any(gc.is_tracked(entry) for entry in frames)
