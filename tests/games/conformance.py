"""Checks every engine must pass, shared by each game's tests, and the tables every game is
played at by the suites that play all of them (:func:`quick_cases`; each game names its own,
``Game.quick_tables``). ``test_conformance.py`` runs the contract's checks for every registered
game.

``play_random_game`` plays a whole game choosing uniformly among legal moves (filling move
templates through a game-supplied ``fill`` callback) and checks the contract on the way:
apply never mutates its input, states and views are plain data, a spectator view is a
subset-of-knowledge view, and the game ends within ``max_steps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from playhall.catalog import all_games
from playhall.games.contract import Applied, Game, Move, Options, Outcome, State
from playhall.games.rng import Rng

Fill = Callable[[State, int, Move, Rng], Move]


def encode(data: Any) -> bytes:
    """Canonical bytes of plain data; raises if anything is not plain data."""
    return msgpack.packb(data, use_bin_type=True, strict_types=True)


def step(
    game: Game, state: State, rng: Rng, fill: Fill | None = None
) -> tuple[Applied, int | None]:
    """Make one step: an automatic one if pending, else a random legal move by a random seat
    that may act. Returns the result and the seat that acted (None for automatic)."""
    before = encode(state)
    if game.auto_delay(state) is not None:
        result = game.apply_auto(state)
        seat: int | None = None
    else:
        seats = game.to_act(state)
        assert seats, "game not over, no automatic step, but nobody may act"
        seat = rng.choice(seats)
        moves = game.legal_moves(state, seat)
        assert moves, f"seat {seat} may act but has no legal move"
        move = rng.choice(moves)
        if move.get("template"):
            assert fill is not None, "game has move templates but the test gave no fill()"
            move = fill(state, seat, move, rng)
        result = game.apply(state, seat, move)
    assert encode(state) == before, "apply mutated the state it was given"
    encode(result.state)
    for event in result.events:
        encode(event)
    return result, seat


def play_random_game(
    game: Game,
    seats: int,
    options: dict[str, Any],
    seed: int,
    *,
    max_steps: int = 10_000,
    fill: Fill | None = None,
    check: Callable[[State], None] | None = None,
) -> tuple[State, Outcome, int]:
    """Play to the end; returns the final state, its outcome and the number of steps."""
    state = game.setup(seats, game.normalize_options(options), seed)
    rng = Rng(seed ^ 0x5EED)
    for n in range(max_steps):
        if check is not None:
            check(state)
        for viewer in [*range(seats), None]:
            encode(game.view(state, viewer))
        outcome = game.outcome(state)
        if outcome is not None:
            assert game.to_act(state) == [], "finished game still lets seats act"
            return state, outcome, n
        state = step(game, state, rng, fill)[0].state
    raise AssertionError(f"game did not end within {max_steps} steps")


def replay(
    game: Game,
    seats: int,
    options: dict[str, Any],
    seed: int,
    moves: list[tuple[int | None, Move | str]],
) -> State:
    """Rebuild a state from seed and moves (None seat = automatic step; a string instead of a
    move = the seat left the game for that reason)."""
    state = game.setup(seats, game.normalize_options(options), seed)
    for seat, move in moves:
        if seat is None:
            state = game.apply_auto(state).state
        elif isinstance(move, str):
            state = game.leave(state, seat, move).state
        else:
            state = game.apply(state, seat, move).state
    return state


def tables(game: Game) -> list[tuple[int, Options]]:
    """The tables the test suites play ``game`` at: its own quick tables, else its smallest."""
    return [(seats, dict(options)) for seats, options in game.quick_tables] or [
        (game.min_seats, {})
    ]


def quick_cases() -> list[Any]:
    """``(game id, seats, options)`` for every registered game and each of its tables, as
    pytest parameters named ``<game>-<seats>`` (and a number when a game has two of a size)."""
    cases = []
    for game in all_games().values():
        seen: dict[int, int] = {}
        for seats, options in tables(game):
            seen[seats] = seen.get(seats, 0) + 1
            name = f"{game.id}-{seats}" + ("" if seen[seats] == 1 else f"-{seen[seats]}")
            cases.append(pytest.param(game.id, seats, options, id=name))
    return cases
