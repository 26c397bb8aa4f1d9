"""A broadcast made before its version is stored (``Audience.broadcast`` with ``held``, what a
room does when its commit publishes other processes' frames): the early viewers are handed
their frames at once, everyone else exactly the frames a plain broadcast gives once they are
delivered; and a version that was then not stored is forgotten, so the next one stored reaches
everyone as a snapshot of itself, never as a diff from what was forgotten."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playhall.config import Config
from playhall.rooms.audience import Audience, Viewer
from playhall.rooms.record import RoomRecord
from playhall_protocol import decode
from tests.games.conformance import quick_cases
from tests.rooms.random_rooms import game_of, players, random_room
from tests.rooms.test_audience import FakeViewer


@dataclass(eq=False)
class EarlyViewer(FakeViewer):
    """A viewer whose frames may go before the version is stored (a RemoteViewer's kind)."""


def seated(audience: Audience, record: RoomRecord, seats: int) -> list[FakeViewer]:
    """A plain viewer and an early one per seat, and one of each watching, attached and sent
    their snapshot."""
    viewers: list[FakeViewer] = []
    for player in players(seats):
        viewers += [FakeViewer(player, player), EarlyViewer(player, f"{player}'")]
    viewers += [FakeViewer("w", "W"), EarlyViewer("w", "W'")]
    for index, viewer in enumerate(viewers):
        seat = index // 2 if index < 2 * seats else None
        audience.attach(record, viewer, seat)
        audience.send_snapshot(record, viewer)
    return viewers


def made(
    config: Config, record: RoomRecord, seats: int
) -> tuple[Audience, list[FakeViewer]]:
    """An audience whose early viewers are :class:`EarlyViewer`, with :func:`seated`'s."""
    audience = Audience(record.id, game_of(record.game), config)
    audience.early_kinds = (EarlyViewer,)
    return audience, seated(audience, record, seats)


@pytest.mark.parametrize("game_id, seats, options", quick_cases())
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62), delay=st.sampled_from([0, 2]))
def test_held_frames_are_a_plain_broadcasts_and_only_the_early_go_first(
    game_id: str, seats: int, options: dict[str, Any], seed: int, delay: int
) -> None:
    config = Config(away_takeover=0)  # (no wall-clock stand-in times in presence pushes)
    versions = iter(random_room(game_id, seats, {**options, "spectator_delay": delay}, seed))
    first, _ = next(versions)
    plain, theirs = made(config, first, seats)
    held_side, ours = made(config, first, seats)
    compared = 0
    for record, events in versions:
        plain.broadcast(record, events)
        held: list[tuple[Viewer, bytes]] = []
        before = [len(viewer.frames) for viewer in ours]
        held_side.broadcast(record, events, held)
        for viewer, count in zip(ours, before, strict=True):
            # The early viewers have this version's frame; the others have nothing new yet.
            assert len(viewer.frames) == count + isinstance(viewer, EarlyViewer)
        assert {id(viewer) for viewer, _ in held} == {
            id(viewer) for viewer in ours if not isinstance(viewer, EarlyViewer)
        }
        held_side.deliver(held)
        for mine, other in zip(ours, theirs, strict=True):
            assert mine.frames == other.frames, f"{mine.name} at version {record.version}"
            compared += 1
    assert compared > 0


def test_a_version_not_stored_is_forgotten_and_the_next_stored_goes_as_a_snapshot() -> None:
    config = Config(away_takeover=0)
    game = "mantis"
    # One room (one id, one secret) along two histories: with its changes beside the game's
    # steps (renames, stand-ins, seats left), and without. The first version where they part
    # is a change not stored and another stored instead, as when a failed commit's room makes
    # a change again.
    seed = next(seed for seed in range(1, 50) if _parting(game, seed) is not None)
    at = _parting(game, seed)
    assert at is not None
    one = list(random_room(game, 2, {}, seed, changes=True))
    other = list(random_room(game, 2, {}, seed, changes=False))
    stored, _ = one[at - 1]
    unstored, events = one[at]
    instead, instead_events = other[at]
    assert unstored.version == instead.version == stored.version + 1
    audience, viewers = made(config, stored, 2)
    fresh = Audience(stored.id, game_of(game), config)
    audience.broadcast(unstored, events, [])
    audience.forget()
    for viewer in viewers:
        viewer.frames.clear()
    audience.broadcast(instead, instead_events)
    for index, viewer in enumerate(viewers):
        seat = index // 2 if index < 4 else None
        [frame] = viewer.frames
        message = decode(frame)
        assert message["t"] == "snapshot" and message["version"] == instead.version
        assert message["view"] == fresh.view(instead, seat), viewer.name
        assert message["view"] != Audience(stored.id, game_of(game), config).view(unstored, seat)


def _parting(game: str, seed: int) -> int | None:
    """Where the seed's room's two histories first differ, if they do."""
    pairs = zip(random_room(game, 2, {}, seed, changes=True),
                random_room(game, 2, {}, seed, changes=False), strict=False)
    for index, ((one, _), (other, _)) in enumerate(pairs):
        assert one.version == other.version
        if one.pack() != other.pack():
            return index
    return None
