"""Random rooms of any game, version by version, as a room's actor stores them: seats taken,
the game started, then random legal moves (and automatic steps when due), with now and then a
seat leaving the game, a player renamed, a stand-in taking a seat and its player taking it
back. Each version comes with its events, ready for an audience to broadcast.

Shared by the tests that hold the broadcast to its frames (``test_view_shortcuts.py``) and
``bench/update_bytes.py``. Deterministic given the seed, the clock's times aside (``played``
reads the time when a room has a clock; both sides of a comparison get the same records).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from playhall.catalog import get_game
from playhall.games.conformance import random_move
from playhall.games.contract import Event, Game
from playhall.games.rng import Rng, int_key
from playhall.rooms import table
from playhall.rooms.record import PLAYING, RoomRecord

#: Steps after which a random room stops even if its game goes on.
MAX_VERSIONS = 600


def game_of(game_id: str) -> Game:
    game = get_game(game_id)
    assert game is not None
    return game


def players(seats: int) -> list[str]:
    return [f"p{seat}" for seat in range(seats)]


def random_room(
    game_id: str, seats: int, options: dict[str, Any], seed: int, *, changes: bool = True,
    max_versions: int = MAX_VERSIONS,
) -> Iterator[tuple[RoomRecord, list[Event]]]:
    """The versions of one random room, each with its events, from the first (its creator
    seated) to the game's end or ``max_versions``. ``changes``: besides game steps, the room
    changes that are no game step (a rename, a stand-in and its take-back, a seat leaving)."""
    game = game_of(game_id)
    rng = Rng(seed ^ 0xB0AD)
    names = players(seats)
    record = table.create(
        game_id, options, seats, names[0], private=seed % 3 == 0, room_id=f"r{seed % 1000}",
        secret=int_key(seed + 1), created=1.0, sitting=names[0],
    ).evolve()
    if record.private:
        record = record.evolve(code="JOINME")
    yield record, [{"type": "joined", "seat": 0, "name": names[0]}]
    for player in names[1:]:
        record, events, _ = table.join(record, game, player, player, code=record.code)
        yield record, events
    if record.status != PLAYING:
        record, events = table.start(record, game, names[0])
        yield record, events
    mid = 0
    while record.status == PLAYING and record.version < max_versions:
        state = record.state
        assert state is not None
        roll = rng.below(40) if changes else 39
        seat = rng.below(seats)
        now = 2.0 + record.version
        if roll == 0:
            record, events = table.rename(record, seat, f"{names[seat]}-{record.version}")
        elif roll == 1:
            record, events = table.stand_in(record, game, seat, "away", now)
        elif roll == 2:
            record, events = table.take_back(record, game, seat, now)
        elif roll == 3 and rng.below(4) == 0:
            try:
                record, events = table.leave_game(record, game, seat, "resignation", now)
            except table.RoomError:
                continue  # that seat has left already
        elif record.deadline is not None:
            record, events = table.auto_step(record, game, record.deadline)
        else:
            to_act = game.to_act(state)
            if not to_act:
                break
            seat = rng.choice(to_act)
            moves = game.legal_moves(state, seat)
            # Resigning is a move in some games: kept rare, so games run long.
            kept = [m for m in moves if m.get("type") != "resign"]
            move = random_move(kept if kept and rng.below(50) else moves, rng)
            mover = record.seats[seat].player
            assert mover is not None
            mid += 1
            record, events = table.move(record, game, seat, mover, record.version, mid, move)
        if events:
            yield record, events
