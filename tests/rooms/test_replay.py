"""A room rebuilt from its last checkpoint and the log entries since is exactly the room that
was live: for every game, from every earlier version, byte for byte.

The live side here is what the room actor does for a game step (``played`` and ``step_entry``);
the log entries go through the same text form Redis gives back (every value a byte string).
Rooms here have a Fischer clock, so every entry carries the clocks too, and now and then a seat
leaves the game (``leave_game``, as a resignation or a forfeit on time makes it).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playhall.catalog import get_game
from playhall.games.contract import Game, Rejected
from playhall.games.rng import int_key
from playhall.rooms import room_options
from playhall.rooms.record import PLAYING, RoomRecord, Seat
from playhall.rooms.replay import ReplayError, game_fields, played, replay, step_entry
from tests.games.conformance import quick_cases

#: Each game at each of its quick tables; those with an automatic step (Mandala solo's Master
#: Yoga, Card Battle's turns) give the log a deadline to carry.
CASES = quick_cases()


def as_stored(entry: list[bytes]) -> dict[str, bytes]:
    """A log entry as the store reads it back from Redis: field names as text."""
    return {entry[i].decode(): entry[i + 1] for i in range(0, len(entry), 2)}


def live_game(
    game: Game, seats: int, options: dict[str, Any], seed: int, steps: int
) -> tuple[list[RoomRecord], list[dict[str, bytes]]]:
    """Up to ``steps`` game steps as the room makes them: every record (index = version - 1,
    the first one the started game) and every step's log entry. Seats alternate between a
    person, who sends move ids (ints and strings), and a server bot."""
    clock = room_options.normalize({"clock": "fischer", "clock_ms": 60_000, "increment_ms": 1_000})
    record = RoomRecord(
        id="r",
        game=game.id,
        options={**game.normalize_options(options), **clock},
        seats=tuple(Seat(f"p{i}", f"p{i}", i % 2 == 1, True) for i in range(seats)),
        secret=int_key(seed),
        creator="p0",
        version=1,
    )
    state = game.setup(seats, game.normalize_options(options), seed)
    now = time.time()
    record = replace(record, **game_fields(game, state, record.options, seats, now))
    records, entries = [record], []
    for n in range(steps):
        if record.status != PLAYING or record.state is None:
            break
        state = record.state
        now += 0.25
        if n % 23 == 22:
            try:
                applied = game.leave(state, n % seats, "timeout" if n % 2 else "resignation")
            except Rejected:
                continue  # that seat has left already
            new = played(record, game, applied, now=now)
            reason = applied.events[0]["reason"]
            entry = step_entry(new, "leave_game", n % seats, None, reason, None)
        elif game.auto_delay(state) is not None:
            applied = game.apply_auto(state)
            new = played(record, game, applied, now=now)
            entry = step_entry(new, "auto", None, None, None, None)
        else:
            seat = game.to_act(state)[n % len(game.to_act(state))]
            move = game.bot_move(
                game.view(state, seat), seat, game.legal_moves(state, seat), seed + n
            )
            applied = game.apply(state, seat, move)
            if seat % 2 == 0:
                player, mid = f"p{seat}", n if n % 3 else f"m{n}"
                seen = record.remember(player, mid, record.version + 1)
                new = played(record, game, applied, seen, seat, now)
                entry = step_entry(new, "move", seat, player, move, mid)
            else:
                new = played(record, game, applied, None, seat, now)
                entry = step_entry(new, "bot_move", seat, None, move, None)
        records.append(new)
        entries.append(as_stored(entry))
        record = new
    return records, entries


@pytest.mark.parametrize("game_id, seats, options", CASES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62), data=st.data())
def test_replaying_the_log_from_any_checkpoint_gives_the_live_record(
    game_id: str, seats: int, options: dict[str, Any], seed: int, data: st.DataObject
) -> None:
    game = get_game(game_id)
    assert game is not None
    records, entries = live_game(game, seats, options, seed, steps=160)
    assert len(entries) >= 3, "the game should make some steps"
    for _ in range(12):
        start = data.draw(st.integers(0, len(records) - 1), label="checkpoint")
        end = data.draw(st.integers(start, len(records) - 1), label="live")
        rebuilt = replay(records[start], game, entries[start:end])
        assert rebuilt.pack() == records[end].pack()
        assert rebuilt.clocks == records[end].clocks
        assert rebuilt.seen == records[end].seen  # a retried move id is still answered


def test_a_step_entry_carries_the_deadline_exactly() -> None:
    game = get_game("mandala")
    assert game is not None
    records, entries = live_game(game, 1, {"mode": "solo", "yoga_delay_ms": 500}, 3, steps=40)
    paced = [(r, e) for r, e in zip(records[1:], entries, strict=True) if r.deadline is not None]
    assert paced, "Master Yoga's paced step should have set a deadline"
    for record, entry in paced:
        assert float(entry["d"]) == record.deadline
        assert record.deadline > time.time() - 60


def test_a_log_entry_that_does_not_follow_is_refused() -> None:
    game = get_game("mantis")
    assert game is not None
    records, entries = live_game(game, 2, {}, 5, steps=6)
    with pytest.raises(ReplayError):
        replay(records[0], game, entries[1:])  # a version skipped
    with pytest.raises(ReplayError):
        replay(records[0], game, [{**entries[0], "k": b"join"}])  # not a game step
