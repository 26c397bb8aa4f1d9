"""The engine's part of checking a game record (``playhall_protocol.gamerecord``): its steps
applied through the game's engine from ``setup`` with the record's key.

:func:`replay_record` yields each game step with the state before and after it, and raises
``Diverged`` (``playhall_protocol.recordcheck``) naming the step (its index, version and kind)
and the field at the first one the engine does not take: the walk of
``playhall.rooms.record_replay``, which the replay's views are made from too.
:func:`check_replay` is the verifier's use of it: every step taken, a server bot's move the
bot's own choice, and the outcome the one the engine reaches. It is the ``replay`` that
``playhall_protocol.recordcheck.verify_record`` takes, and what ``playhall verify`` passes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import playhall
from playhall.catalog import get_game
from playhall.games.contract import Game, State
from playhall.games.rng import bot_state
from playhall.rooms.record_replay import Replayed, replay_steps, set_up
from playhall_protocol.recordcheck import Diverged


def game_of(record: dict[str, Any]) -> Game:
    """The engine of the record's game, or ``Diverged`` when this server has none."""
    game_id = record.get("game")
    game = get_game(game_id) if isinstance(game_id, str) else None
    if game is None:
        raise Diverged("record", "game", f"no game {record.get('game')!r} on this server")
    return game


def replay_record(record: dict[str, Any], key: bytes) -> Iterator[Replayed]:
    """Each game step of ``record`` applied by its game's engine from the setup with ``key``
    (``rooms.record_replay.replay_steps``); raises ``Diverged`` naming the step and its field
    that the engine refuses."""
    game = game_of(record)
    yield from replay_steps(game, set_up(record, game, key), record["steps"])


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
        state = set_up(record, game, key)
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
