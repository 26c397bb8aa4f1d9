"""The game contract (server/playhall/games/contract.py), checked for every registered game at
each of its quick tables: a new game package is held to it with no line added here.

Random legal games: ``apply`` never changes the state it is given; states, views and events are
plain data; every viewer's view is the same when asked again and does not change when only
something no viewer may see changes (the RNG state); a game that says its view is the same for
everyone (``public_view``) keeps to it; the bot plays only moves it was offered, which ``apply``
accepts; every game ends; and the moves replayed from the seed give the same state, byte for
byte. Now and then a random seat leaves the game (resigns, or forfeits on time: ``Game.leave``,
the rules' "leaving"): games with random leavings end too, keep the same contract, and a leave
lists its seat under the outcome's ``left``.
"""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playhall.catalog import get_game
from playhall.games.contract import LEAVE_REASONS, Game, Move, Rejected, State
from playhall.games.rng import Rng

from .conformance import encode, quick_cases, replay

CASES = quick_cases()
MAX_STEPS = 5_000


def check_views(game: Game, state: State, seats: int) -> None:
    viewers: list[int | None] = [*range(seats), None]
    views = [encode(game.view(state, viewer)) for viewer in viewers]
    assert views == [encode(game.view(state, viewer)) for viewer in viewers], "views not pure"
    if game.public_view:
        assert len(set(views)) == 1, "public_view, but viewers see different views"
    assert "rng" in state, "keep the RNG state under the state's 'rng' key"
    for other in {1, 2**40 + 7} - {state["rng"]}:
        hidden = {**state, "rng": other}
        assert [encode(game.view(hidden, v)) for v in viewers] == views, (
            "a view changed when only the RNG state did"
        )


def check_bot(game: Game, state: State, seat: int, seed: int) -> None:
    moves = game.legal_moves(state, seat)
    move = game.bot_move(game.view(state, seat), seat, moves, seed)
    assert move in moves and not move.get("template"), f"the bot played {move!r}, not offered"
    game.apply(state, seat, move)  # raises if refused


def random_leave(game: Game, state: State, seats: int, rng: Rng) -> tuple[int, str] | None:
    """Let a random seat leave for a random reason; None if that seat has left already (the
    only refusal a game on may give a seat of the table)."""
    seat = rng.below(seats)
    reason = rng.choice(list(LEAVE_REASONS))
    try:
        applied = game.leave(state, seat, reason)
    except Rejected as exc:
        assert exc.code == "illegal_move", exc
        return None
    assert applied.events[0] == {"type": "left", "seat": seat, "reason": reason}
    outcome = game.outcome(applied.state)
    if outcome is not None:
        assert seat in outcome.left and seat not in outcome.winners
        assert outcome.reason in LEAVE_REASONS
        assert applied.events[-1] == {"type": "game_over", **outcome.as_dict()}
    else:
        assert seat not in game.to_act(applied.state), "a seat that left is still asked to act"
        with pytest.raises(Rejected):
            game.leave(applied.state, seat, reason)
    return seat, reason


def random_move(moves: list[Move], rng: Rng) -> Move:
    """A random listed move (templates are filled by each game's own tests)."""
    listed = [m for m in moves if not m.get("template")]
    assert listed, "a seat may act but has only move templates"
    return rng.choice(listed)


@pytest.mark.parametrize("game_id, seats, options", CASES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**62))
def test_random_legal_games_keep_the_contract_and_end(
    game_id: str, seats: int, options: dict[str, Any], seed: int
) -> None:
    game = get_game(game_id)
    assert game is not None
    low, high = game.seat_range(game.normalize_options(options))
    assert low <= seats <= high, "a quick table outside the game's own seat range"
    state = game.setup(seats, game.normalize_options(options), seed)
    rng = Rng(seed ^ 0xC0FFEE)
    # Half the examples let seats leave, about once in ``leave_every`` steps.
    leave_every = 0 if seed % 2 else 5 + seed % 40
    log: list[tuple[int | None, Move | str]] = []
    for step in range(MAX_STEPS):
        encode(state)
        check_views(game, state, seats)
        outcome = game.outcome(state)
        if outcome is not None:
            assert game.to_act(state) == [], "a finished game still lets seats act"
            encode(outcome.as_dict())
            break
        before = encode(state)
        if leave_every and rng.below(leave_every) == 0:
            left = random_leave(game, state, seats, rng)
            assert encode(state) == before, "leave changed the state it was given"
            if left is not None:
                state = game.leave(state, *left).state
                log.append(left)
            continue
        if game.auto_delay(state) is not None:
            applied = game.apply_auto(state)
            log.append((None, {}))
        else:
            to_act = game.to_act(state)
            assert to_act, "the game goes on, no automatic step is due, and nobody may act"
            seat = rng.choice(to_act)
            if step % 7 == 0:
                check_bot(game, state, seat, seed + step)
            moves = game.legal_moves(state, seat)
            encode(moves)
            move = random_move(moves, rng)
            applied = game.apply(state, seat, move)
            log.append((seat, move))
        assert encode(state) == before, "apply changed the state it was given"
        for event in applied.events:
            encode(event)
        state = applied.state
    else:
        raise AssertionError(f"the game did not end within {MAX_STEPS} steps")
    # Moves as msgpack gives them back from the log: lists, never tuples.
    logged = [(seat, msgpack.unpackb(msgpack.packb(move))) for seat, move in log]
    assert encode(replay(game, seats, options, seed, logged)) == encode(state)
