"""The game contract (:mod:`playhall.games.contract`) as checks any engine can be run through.

One copy serves both the repository's test suite (``tests/games/test_conformance.py`` runs
:func:`check_random_game` for every registered game at each of its quick tables) and a plugin's
author (``playhall check-game <id or module>``, :func:`check_game`).

:func:`check_random_game` plays one random legal game from a seed and checks on the way:
``apply`` (and ``leave``) never changes the state it is given; states, moves, views and events
are plain data (what msgpack carries); every viewer's view is the same when asked again and
does not change when only something no viewer may see changes (the RNG state); a game that says
its view is the same for everyone (``public_view``) keeps to it, and one that says what a seat
not being waited on may do (``moves_off_turn``) too; the bot plays only moves it was
offered, which ``apply`` accepts; every game ends; and the moves replayed from the seed give the
same state, byte for byte. In half the seeds a random seat leaves now and then (resigns, or
forfeits on time: ``Game.leave``): such games end too, keep the same contract, and a leave
lists its seat under the outcome's ``left``.

A broken rule raises :class:`Violation` (an ``AssertionError``, so pytest shows it as a
failure) whose message says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from playhall.games.contract import (
    LEAVE_REASONS,
    Applied,
    Game,
    Move,
    Options,
    Outcome,
    Rejected,
    State,
)
from playhall.games.rng import Rng, seed_state

Fill = Callable[[State, int, Move, Rng], Move]

#: Steps a random game may take before it counts as one that never ends.
MAX_STEPS = 5_000


class Violation(AssertionError):
    """A rule of the game contract that an engine broke."""


def require(ok: object, message: str) -> None:
    """Raise :class:`Violation` with ``message`` unless ``ok`` (not ``assert``: these checks
    must hold under ``python -O`` too)."""
    if not ok:
        raise Violation(message)


def encode(data: Any) -> bytes:
    """Canonical bytes of plain data; raises if anything is not plain data."""
    try:
        return msgpack.packb(data, use_bin_type=True, strict_types=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise Violation(f"not plain data (what msgpack carries): {exc}") from exc


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
        require(seats, "game not over, no automatic step, but nobody may act")
        seat = rng.choice(seats)
        moves = game.legal_moves(state, seat)
        require(moves, f"seat {seat} may act but has no legal move")
        move = rng.choice(moves)
        if move.get("template"):
            require(fill is not None, "game has move templates but the caller gave no fill()")
            assert fill is not None
            move = fill(state, seat, move, rng)
        result = game.apply(state, seat, move)
    require(encode(state) == before, "apply mutated the state it was given")
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
            require(game.to_act(state) == [], "finished game still lets seats act")
            return state, outcome, n
        state = step(game, state, rng, fill)[0].state
    raise Violation(f"game did not end within {max_steps} steps")


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
    """The tables ``game`` is checked at: its own quick tables, else its smallest."""
    return [(seats, dict(options)) for seats, options in game.quick_tables] or [
        (game.min_seats, {})
    ]


def check_views(game: Game, state: State, seats: int) -> None:
    viewers: list[int | None] = [*range(seats), None]
    views = [encode(game.view(state, viewer)) for viewer in viewers]
    require(views == [encode(game.view(state, v)) for v in viewers], "views not pure")
    if game.public_view:
        require(len(set(views)) == 1, "public_view, but viewers see different views")
    require("rng" in state, "keep the RNG state under the state's 'rng' key")
    for other in (seed_state(1), seed_state(2**40 + 7, "other")):
        hidden = {**state, "rng": other}
        require(
            [encode(game.view(hidden, v)) for v in viewers] == views,
            "a view changed when only the RNG state did",
        )


def check_moves_off_turn(game: Game, state: State, seats: int) -> None:
    """A game that says what every seat not in ``to_act`` may do (``moves_off_turn``) keeps to
    it: the room shows those seats that list without asking :meth:`Game.legal_moves`."""
    off_turn = game.moves_off_turn
    if off_turn is None:
        return
    to_act = game.to_act(state)
    for seat in range(seats):
        if seat not in to_act:
            require(
                encode(game.legal_moves(state, seat)) == encode(off_turn),
                f"moves_off_turn is {off_turn!r}, but seat {seat}, not in to_act, may make "
                f"{game.legal_moves(state, seat)!r}",
            )


def check_bot(game: Game, state: State, seat: int, seed: int) -> None:
    moves = game.legal_moves(state, seat)
    move = game.bot_move(game.view(state, seat), seat, moves, seed)
    require(move in moves and not move.get("template"), f"the bot played {move!r}, not offered")
    try:
        game.apply(state, seat, move)
    except Rejected as exc:
        raise Violation(f"the bot's move {move!r} was refused: {exc}") from exc


def random_leave(game: Game, state: State, seats: int, rng: Rng) -> tuple[int, str] | None:
    """Let a random seat leave for a random reason; None if that seat has left already (the
    only refusal a game on may give a seat of the table)."""
    seat = rng.below(seats)
    reason = rng.choice(list(LEAVE_REASONS))
    try:
        applied = game.leave(state, seat, reason)
    except Rejected as exc:
        require(exc.code == "illegal_move", f"leave refused with {exc}")
        return None
    require(
        applied.events[0] == {"type": "left", "seat": seat, "reason": reason},
        f"a leave's first event is {applied.events[0]!r}",
    )
    outcome = game.outcome(applied.state)
    if outcome is not None:
        require(seat in outcome.left and seat not in outcome.winners, "the leaver is not left")
        require(outcome.reason in LEAVE_REASONS, f"a leave ended the game as {outcome.reason!r}")
        require(
            applied.events[-1] == {"type": "game_over", **outcome.as_dict()},
            "the last event of a leave that ends the game is not its game_over",
        )
    else:
        require(seat not in game.to_act(applied.state), "a seat that left is still asked to act")
        try:
            game.leave(applied.state, seat, reason)
        except Rejected:
            pass
        else:
            raise Violation(f"seat {seat} could leave twice")
    return seat, reason


def random_move(moves: list[Move], rng: Rng) -> Move:
    """A random listed move (templates are filled by each game's own tests)."""
    listed = [m for m in moves if not m.get("template")]
    require(listed, "a seat may act but has only move templates")
    return rng.choice(listed)


def check_random_game(game: Game, seats: int, options: Options, seed: int) -> int:
    """Play one random legal game from ``seed`` at this table, checking the contract at every
    step (the module's docstring lists the checks). Returns the number of steps."""
    low, high = game.seat_range(game.normalize_options(options))
    require(low <= seats <= high, "a quick table outside the game's own seat range")
    state = game.setup(seats, game.normalize_options(options), seed)
    rng = Rng(seed ^ 0xC0FFEE)
    # Half the seeds let seats leave, about once in ``leave_every`` steps.
    leave_every = 0 if seed % 2 else 5 + seed % 40
    log: list[tuple[int | None, Move | str]] = []
    for n in range(MAX_STEPS):
        encode(state)
        check_views(game, state, seats)
        outcome = game.outcome(state)
        if outcome is not None:
            require(game.to_act(state) == [], "a finished game still lets seats act")
            encode(outcome.as_dict())
            break
        check_moves_off_turn(game, state, seats)
        before = encode(state)
        if leave_every and rng.below(leave_every) == 0:
            left = random_leave(game, state, seats, rng)
            require(encode(state) == before, "leave changed the state it was given")
            if left is not None:
                state = game.leave(state, *left).state
                log.append(left)
            continue
        if game.auto_delay(state) is not None:
            applied = game.apply_auto(state)
            log.append((None, {}))
        else:
            to_act = game.to_act(state)
            require(to_act, "the game goes on, no automatic step is due, and nobody may act")
            seat = rng.choice(to_act)
            if n % 7 == 0:
                check_bot(game, state, seat, seed + n)
            moves = game.legal_moves(state, seat)
            encode(moves)
            move = random_move(moves, rng)
            applied = game.apply(state, seat, move)
            log.append((seat, move))
        require(encode(state) == before, "apply changed the state it was given")
        for event in applied.events:
            encode(event)
        state = applied.state
    else:
        raise Violation(f"the game did not end within {MAX_STEPS} steps")
    # Moves as msgpack gives them back from the log: lists, never tuples.
    logged = [(seat, msgpack.unpackb(msgpack.packb(move))) for seat, move in log]
    require(
        encode(replay(game, seats, options, seed, logged)) == encode(state),
        "the moves replayed from the seed did not give the same state",
    )
    return n


@dataclass(frozen=True)
class TableResult:
    """How the checks went at one table: the seeds played, and the first failure if any."""

    seats: int
    options: Options
    games: int
    failure: str | None = None


def check_game(game: Game, seeds: int = 50, first_seed: int = 0) -> list[TableResult]:
    """Run :func:`check_random_game` ``seeds`` times at each of ``game``'s tables (seeds
    ``first_seed``, ``first_seed + 1``, ...), stopping a table at its first failure, which is
    reported with its seed so that it can be played again."""
    results = []
    for seats, options in tables(game):
        failure = None
        played = 0
        for seed in range(first_seed, first_seed + seeds):
            try:
                check_random_game(game, seats, options, seed)
            except Exception as exc:  # any error of the engine's is a failure to report
                kind = "" if isinstance(exc, Violation) else f"{type(exc).__name__}: "
                failure = f"seed {seed}: {kind}{exc}"
                break
            played += 1
        results.append(TableResult(seats, options, played, failure))
    return results
