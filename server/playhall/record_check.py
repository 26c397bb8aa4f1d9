"""The engine's part of checking a game record (``playhall_protocol.gamerecord``): its steps
applied through the game's engine from ``setup`` with the record's key.

:func:`replay_record` yields each game step with the state before and after it, and raises
``Diverged`` (``playhall_protocol.recordcheck``) naming the step (its index, version and kind)
and the field at the first one the engine does not take. :func:`check_replay` is the verifier's
use of it: every step taken, a server bot's move the bot's own choice, and the outcome the one
the engine reaches. It is the ``replay`` that ``playhall_protocol.recordcheck.verify_record``
takes, and what ``playhall verify`` passes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import playhall
from playhall.catalog import get_game
from playhall.games.contract import Applied, Game, Rejected, State
from playhall.games.rng import bot_state
from playhall.rooms import room_options
from playhall.rooms.table import game_options
from playhall_protocol.recordcheck import GAME_STEPS, Diverged


@dataclass(frozen=True)
class Replayed:
    """Game step ``index`` of the record's ``steps`` (``step``), from ``before`` to
    ``applied.state``."""

    index: int
    step: dict[str, Any]
    before: State
    applied: Applied


def game_of(record: dict[str, Any]) -> Game:
    """The engine of the record's game, or ``Diverged`` when this server has none."""
    game_id = record.get("game")
    game = get_game(game_id) if isinstance(game_id, str) else None
    if game is None:
        raise Diverged("record", "game", f"no game {record.get('game')!r} on this server")
    return game


def set_up(record: dict[str, Any], key: bytes) -> tuple[Game, State]:
    """The game and its state at the start: ``setup`` at the record's seats and options (the
    game's own, checked as the server checks a new room's) with ``key``."""
    game = game_of(record)
    seats = len(record["seats"])
    if not game.min_seats <= seats <= game.max_seats:
        raise Diverged("record", "seats", f"{game.title} is not played by {seats}")
    options = record.get("options")
    if not isinstance(options, dict):
        raise Diverged("record", "options", "not a map")
    own, room = room_options.split(options)
    try:
        game.normalize_options(own)
        room_options.normalize(room)
    except Rejected as exc:
        raise Diverged("record", "options", exc.reason) from None
    return game, game.setup(seats, game_options(options), key)


def replay_record(record: dict[str, Any], key: bytes) -> Iterator[Replayed]:
    """Each game step of ``record`` (``move``, ``bot_move``, ``auto``, ``leave_game``, in
    order) applied by the engine from :func:`set_up`. Raises ``Diverged`` naming the step and
    its field that the engine refuses (a game already over, a seat not to act, a move it does
    not allow)."""
    game, state = set_up(record, key)
    for index, step in enumerate(record["steps"]):
        kind = step.get("kind") if isinstance(step, dict) else None
        if kind not in GAME_STEPS:
            continue
        if game.outcome(state) is not None:
            raise Diverged.at_step(index, step, "kind", "the game was already over")
        seat, move = step.get("seat"), step.get("move")
        try:
            if kind == "auto":
                if game.auto_delay(state) is None:
                    raise Diverged.at_step(index, step, "kind", "no automatic step was pending")
                applied = game.apply_auto(state)
            elif kind == "leave_game":
                applied = game.leave(state, _seat(index, step), move)
            else:
                to_act = game.to_act(state)
                if _seat(index, step) not in to_act:
                    raise Diverged.at_step(
                        index, step, "seat", f"seat {seat} was not to act (to act: {to_act})"
                    )
                applied = game.apply(state, seat, move)
        except Rejected as exc:
            field = "seat" if exc.code == "not_your_turn" else "move"
            raise Diverged.at_step(
                index, step, field, f"the engine refuses it ({exc.code}: {exc.reason})"
            ) from None
        except Diverged:
            raise
        except Exception as exc:  # a move no game takes (a malformed one an engine trips on)
            raise Diverged.at_step(
                index, step, "move", f"the engine fails on it: {exc!r}"
            ) from None
        yield Replayed(index, step, state, applied)
        state = applied.state


def _seat(index: int, step: dict[str, Any]) -> int:
    seat = step["seat"]
    if type(seat) is not int:
        raise Diverged.at_step(index, step, "seat", "a player's step names its seat")
    return seat


def check_replay(record: dict[str, Any], key: bytes) -> list[str]:
    """Replay ``record`` with ``key`` and confirm it: every game step taken, each server bot's
    move (``bot_move``) the one the bot chooses from its own stream at that version, and the
    record's outcome the engine's. Returns what was checked, a line each; raises ``Diverged``."""
    game = game_of(record)
    state: State | None = None
    count = bots = 0
    for replayed in replay_record(record, key):
        step = replayed.step
        if step["kind"] == "bot_move":
            seat = step["seat"]
            chosen = game.bot_move(
                game.view(replayed.before, seat), seat,
                game.legal_moves(replayed.before, seat), bot_state(key, step["version"] - 1),
            )
            if chosen != step["move"]:
                raise Diverged.at_step(
                    replayed.index, step, "move", f"the server's bot would have chosen {chosen}"
                )
            bots += 1
        count += 1
        state = replayed.applied.state
    if state is None:
        state = set_up(record, key)[1]
    _check_outcome(game, state, record)
    return [
        f"replay: {game.title} set up for {len(record['seats'])} seats with the options and the "
        f"key; {count} game steps taken by the engine of playhall/{playhall.__version__} "
        f"(the record's: {record.get('server')})",
        f"server bots: {bots} moves, each the bot's own choice from its stream",
        "outcome: the one the engine reaches",
    ]


def _check_outcome(game: Game, state: State, record: dict[str, Any]) -> None:
    reached = game.outcome(state)
    recorded = record["outcome"]
    if recorded.get("reason") == "abandoned":
        if reached is not None:
            raise Diverged("outcome", "reason", "abandoned, but the engine's game was over")
        return
    if reached is None:
        raise Diverged(
            "outcome", "reason", "the engine's game is not over after the last step"
        )
    expected = reached.as_dict()
    for name in ("winners", "scores", "reason", "left"):
        if recorded.get(name) != expected.get(name):
            raise Diverged(
                "outcome", name,
                f"{recorded.get(name)!r}, but the engine's game ends with {expected.get(name)!r}",
            )
