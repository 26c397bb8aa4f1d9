"""A game record's game replayed through the engine: the state after each game step, and what
one viewer saw of it, step by step (``playhall replay``, the ``replay`` request).

A record (``playhall_protocol.gamerecord``, PROTOCOL.md "Game records") holds the revealed
fair-deal material and every stored step. The game's key follows from the material
(``playhall_protocol.fairness``), the engine sets the game up from it and applies the game
steps (``move``, ``bot_move``, ``auto``, ``leave_game``) in order: the states the room went
through, exactly (the engines are deterministic). Each state is then shown as the game's own
``view`` shows it to one seat (or to a spectator), with the events of the step that seat could
see, so a seat's replay holds only what that seat could see at each step.

:func:`replay_steps` is the walk itself, shared with the verifier (``playhall.record_check``):
each game step applied from :func:`set_up`'s state, or ``Diverged`` naming the step and the
field the engine does not take. This module checks only that the steps replay (each one the
engine takes, a move by a seat to act); whether the record is the one the server committed to
(the commitment, the hash chain, the outcome) is for the verifier to say.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from playhall.games.contract import Applied, Event, Game, Rejected, State
from playhall.rooms import room_options
from playhall.rooms.replay import STEPS
from playhall.rooms.table import game_options
from playhall.rooms.views import visible_events
from playhall_protocol import fairness, make_diff
from playhall_protocol.recordcheck import Diverged

#: The most positions a record may replay to: far beyond any game the engines end, so a
#: record made up to cost the server a long replay is refused instead.
MAX_POSITIONS: Final = 20_000


class RecordError(Exception):
    """A record that cannot be replayed, said for people (where, and why)."""


@dataclass(frozen=True)
class Position:
    """The game after one game step (or after its setup: ``step`` None): the state, and the
    events of the step that made it, with their ``visible_to`` marks."""

    step: Mapping[str, Any] | None
    state: State
    events: list[Event]


def positions(record: Mapping[str, Any], game: Game) -> list[Position]:
    """The game's setup, then the position after each of the record's game steps, in order
    (:func:`replay_steps`, at most :data:`MAX_POSITIONS`). Raises :class:`RecordError` when the
    record's material or a step does not replay."""
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise RecordError("the record has no list of steps")
    if not all(isinstance(step, dict) for step in steps):
        raise RecordError("a step is not a map")
    try:
        state = set_up(record, game, _key(record))
        out = [Position(None, state, [])]
        for replayed in replay_steps(game, state, steps):
            if len(out) > MAX_POSITIONS:
                raise RecordError(f"the record has more than {MAX_POSITIONS} game steps")
            out.append(Position(replayed.step, replayed.applied.state, replayed.applied.events))
    except Diverged as exc:
        raise RecordError(str(exc)) from None
    return out


@dataclass(frozen=True)
class Replayed:
    """Game step ``index`` of the record's ``steps`` (``step``), from ``before`` to
    ``applied.state``."""

    index: int
    step: dict[str, Any]
    before: State
    applied: Applied


def set_up(record: Mapping[str, Any], game: Game, key: bytes) -> State:
    """The game's state at the start: ``setup`` at the record's seats and options (the game's
    own, checked as the server checks a new room's) with ``key``. Raises ``Diverged`` (at
    ``record``) naming the field that does not fit the game."""
    options = record.get("options")
    if not isinstance(options, dict):
        raise Diverged("record", "options", "not a map")
    own, room = room_options.split(options)
    try:
        normalized = {**game.normalize_options(own), **room_options.normalize(room)}
    except Rejected as exc:
        raise Diverged("record", "options", exc.reason) from None
    seats = record.get("seats")
    if not isinstance(seats, list):
        raise Diverged("record", "seats", "not a list")
    low, high = game.seat_range(game_options(normalized))
    if not low <= len(seats) <= high:
        raise Diverged(
            "record", "seats", f"{game.title} is not played by {len(seats)} ({low} to {high})"
        )
    return game.setup(len(seats), game_options(options), key)


def replay_steps(game: Game, state: State, steps: Iterable[Any]) -> Iterator[Replayed]:
    """Each game step of ``steps`` (``move``, ``bot_move``, ``auto``, ``leave_game``, in
    order; the room's steps and anything not a map are passed over) applied by the engine from
    ``state`` (:func:`set_up`'s). Raises ``Diverged`` naming the step (its index in ``steps``,
    version and kind) and its field that the engine refuses: a game already over, no automatic
    step pending, a seat not to act, a move it does not allow or fails on."""
    for index, step in enumerate(steps):
        kind = step.get("kind") if isinstance(step, dict) else None
        if kind not in STEPS:
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


def _seats(record: Mapping[str, Any]) -> list[Any]:
    seats = record.get("seats")
    if not isinstance(seats, list) or not seats:
        raise RecordError("the record has no seats")
    return seats


def _key(record: Mapping[str, Any]) -> bytes:
    """The game's key from the record's revealed material."""
    fair = record.get("fair")
    try:
        assert isinstance(fair, Mapping)
        secret = bytes.fromhex(fair["secret"])
        contributions = [None if c is None else bytes.fromhex(c) for c in fair["contributions"]]
        room = record["room"]
        assert isinstance(room, str)
    except (AssertionError, KeyError, TypeError, ValueError):
        raise RecordError("the record's fair-deal material (room, secret, contributions) is "
                          "missing or not hex") from None
    return fairness.room_key(secret, room, contributions)


def frames(
    record: Mapping[str, Any], game: Game, replayed: list[Position], seat: int | None
) -> list[dict[str, Any]]:
    """What ``seat`` (None: a spectator) saw at each position: per position, the step that made
    it (``version``, ``kind``, ``seat``, ``move``, ``time``; None for the setup), the events of
    it ``seat`` could see, and ``view``: a room view (PROTOCOL.md section 6) with the game's
    view for ``seat``, no moves, and the outcome at the last position only, so a client draws
    it with the renderer it draws a live room with. The record's steps carry every seat's
    moves, but a move may hold what its seat alone knows (a deck composed in secret): a
    seat's frames show its own moves, and the others' only as the events and views show
    them; a spectator's frames show none."""
    seats = [
        {"player": None, "name": s.get("name"), "bot": bool(s.get("bot")), "ready": True,
         "stand_in": None}
        for s in _seats(record) if isinstance(s, Mapping)
    ]
    fair = record.get("fair")
    hidden_fair = {
        "commitment": fair.get("commitment") if isinstance(fair, Mapping) else None,
        "secret": None,
        "contributions": None,
    }
    last = len(replayed) - 1
    out = []
    for index, position in enumerate(replayed):
        state = position.state
        outcome = game.outcome(state)
        final = index == last
        shown_outcome = record.get("outcome") if final else (
            None if outcome is None else outcome.as_dict()
        )
        finished = shown_outcome is not None
        view = {
            "room": record.get("room"),
            "game": game.id,
            "status": "finished" if finished else "playing",
            "options": record.get("options"),
            "private": False,
            "rated": False,
            "code": None,
            "creator": None,
            "seats": seats,
            "you": seat,
            "to_act": [] if finished else game.to_act(state),
            "moves": [],
            "state": game.view(state, seat),
            "outcome": shown_outcome,
            "deadline": None,
            "clock": None,
            "rematch": None,
            "rematch_of": record.get("rematch_of"),
            # The secret and the contributions were revealed only when the game ended.
            "fair": record.get("fair") if finished else hidden_fair,
        }
        step = position.step
        out.append({
            "step": None if step is None else {
                name: step.get(name) for name in ("version", "kind", "seat", "time")
            } | {"move": _shown_move(step, seat)},
            "events": visible_events(position.events, seat),
            "view": view,
        })
    return out


def _shown_move(step: Mapping[str, Any], seat: int | None) -> Any:
    """A step's move as ``seat`` may read it: its own, or a leave's reason; any other seat's
    move (a player's or a bot's) only through the events and the views, which the game made to
    show that seat what it may see of it (a card played face down stays face down)."""
    if step.get("kind") == "leave_game" or (seat is not None and step.get("seat") == seat):
        return step.get("move")
    return None


def as_diffs(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`frames` as the ``replay`` request sends them: the first with its ``view``, each
    later one with ``diff`` instead, the operations (PROTOCOL.md section 7) that turn the view
    before it into its own. Consecutive views differ in little: a reply a third to a half
    of the whole views' size (PROTOCOL.md, ``replay``, gives an example)."""
    out = []
    previous: dict[str, Any] | None = None
    for frame in shown:
        view = frame["view"]
        sent = {name: value for name, value in frame.items() if name != "view"}
        if previous is None:
            sent["view"] = view
        else:
            sent["diff"] = make_diff(previous, view)
        previous = view
        out.append(sent)
    return out
