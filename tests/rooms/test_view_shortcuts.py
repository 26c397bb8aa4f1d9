"""The broadcast's shortcuts change no byte: what the room works out from a game's hints
(``Game.moves_off_turn``: the moves of a seat the game is not waiting for, without asking the
engine) gives every viewer exactly the frames that asking the engine for everything gives.

Random rooms of every game at each of its quick tables (tests/rooms/random_rooms.py: random
legal moves, automatic steps, renames, stand-ins, seats leaving), with and without a clock and a
spectator delay, are broadcast to two audiences: one holding the game, one holding a copy of it
with every hint at the contract's default ("anything may have changed: ask"). Both have the same
viewers (each seat, a second connection of seat 0, two spectators); now and then a seat's viewer
goes (its key is kept up to date through the away grace) and comes back (catching up from the
history, or a snapshot). Every viewer must receive the same frames, byte for byte, in both.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playhall.config import Config
from playhall.games.contract import Game
from playhall.games.rng import Rng
from playhall.rooms.audience import Audience
from playhall_protocol import decode
from tests.games.conformance import quick_cases
from tests.rooms.random_rooms import game_of, players, random_room
from tests.rooms.test_audience import FakeViewer

#: The game's hints the room takes shortcuts from, each with its default on ``Game``.
HINTS = ("moves_off_turn",)

#: Room options beside the game's own: none, a clock, a spectator delay, both.
ROOM_OPTIONS = st.sampled_from([
    {}, {"clock": "fischer"}, {"spectator_delay": 2}, {"spectator_delay": 3, "clock": "turn"},
])


def without_hints(game: Game) -> Game:
    """``game`` with every hint at the contract's default: the room asks the engine for all."""
    plain = copy.copy(game)
    for hint in HINTS:
        setattr(plain, hint, getattr(Game, hint))
    return plain


class Side:
    """One audience and its viewers."""

    def __init__(self, room: str, game: Game, seats: int) -> None:
        # No stand-in times in presence pushes: they read the wall clock, which runs on between
        # the two sides.
        self.audience = Audience(room, game, Config(away_takeover=0))
        self.seated = [FakeViewer(player, player) for player in players(seats)]
        self.second = FakeViewer(players(seats)[0], "again")  # seat 0's second connection
        self.watchers = [FakeViewer("w1", "W1"), FakeViewer("w2", "W2")]
        self.have: dict[int, int] = {}  # seat -> the version its gone viewer last had

    def viewers(self) -> list[FakeViewer]:
        return [*self.seated, self.second, *self.watchers]


@pytest.mark.parametrize("game_id, seats, options", quick_cases())
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62), room_options=ROOM_OPTIONS)
def test_every_viewer_gets_the_same_frames_with_and_without_the_shortcuts(
    game_id: str, seats: int, options: dict[str, Any], seed: int, room_options: dict[str, Any]
) -> None:
    game = game_of(game_id)
    room = f"r{seed % 1000}"
    sides = [Side(room, game, seats), Side(room, without_hints(game), seats)]
    churn = Rng(seed ^ 0x5EA7)
    versions = frames = 0
    for record, events in random_room(game_id, seats, {**options, **room_options}, seed):
        versions += 1
        if versions == 1:
            for side in sides:
                for seat, viewer in enumerate(side.seated):
                    side.audience.attach(record, viewer, seat)
                side.audience.attach(record, side.second, 0)
                for watcher in side.watchers:
                    side.audience.attach(record, watcher, None)
                for viewer in side.viewers():
                    side.audience.send_snapshot(record, viewer)
            continue
        roll, seat = churn.below(12), churn.below(seats)
        for side in sides:
            viewer = side.seated[seat]
            if roll == 0 and viewer in side.audience.viewers:
                side.have[seat] = side.audience.viewers[viewer].version
                side.audience.detach(record, viewer)  # its seat is kept up to date a while
            elif roll == 1 and viewer not in side.audience.viewers:
                side.audience.attach(record, viewer, seat)
                side.audience.catch_up(record, viewer, side.have.get(seat))
            side.audience.broadcast(record, events)
        for ours, theirs in zip(sides[0].viewers(), sides[1].viewers(), strict=True):
            assert ours.frames == theirs.frames, (
                f"{ours.name} got other frames at version {record.version}: "
                f"{[decode(f) for f in ours.frames]} against {[decode(f) for f in theirs.frames]}"
            )
            frames += len(ours.frames)
            ours.frames.clear()  # compared: only each version's new frames are compared
            theirs.frames.clear()
    assert versions > seats and frames >= versions
