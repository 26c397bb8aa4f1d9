"""The table's rules: what each request does to a room, as pure functions of its record.

Each function takes the room record (and the game, where the game decides) and returns the
record of the next version with the events it caused, or raises :class:`RoomError` with the
refusal. A function that changes nothing returns the record it was given, the very same object,
so the caller can tell by identity. Nothing here waits, reads a clock or draws a random number
(the caller passes the time, the new room's id and secret in: :func:`new_secret` draws one), or
touches Redis: the room's command handlers (:mod:`playhall.rooms.commands`) and its actor do the
storing and the broadcasting, in order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Container, Mapping
from dataclasses import replace
from typing import Any

from playhall.catalog import get_game
from playhall.games.contract import Event, Game, Rejected
from playhall.games.rng import bot_state
from playhall.rooms import clocks, room_options
from playhall.rooms.record import (
    FINISHED,
    PLAYING,
    WAITING,
    RoomRecord,
    Seat,
    played_by_players,
)
from playhall.rooms.replay import game_fields, played
from playhall_protocol import errors, fairness

Change = tuple[RoomRecord, list[Event]]


class RoomError(Exception):
    """A refused command; becomes an ``error`` reply."""

    def __init__(self, code: str, reason: str, **extra: Any) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.extra = extra


def retry_after(seconds: float) -> float:
    """A wait as an ``error``'s ``retry_after``: rounded up to a tenth of a second, so never
    0 (a client told 0 would try again at once, into the same refusal)."""
    return max(0.1, math.ceil(round(seconds * 10, 6)) / 10)


def no_such_room(room_id: str) -> RoomError:
    """The refusal for a room that does not exist, and for a private room to anyone without
    its code: the two must be indistinguishable."""
    return RoomError(errors.NO_SUCH_ROOM, f"no room {room_id!r}")


def new_secret() -> bytes:
    """A new room's secret (its commitment is shown from the start; see ``fairness``)."""
    return fairness.new_secret()


def room_key(record: RoomRecord) -> bytes:
    """The key the room's game draws from: its secret with the seats' contributions."""
    return fairness.room_key(record.secret, record.id, _contributions(record))


def _contributions(record: RoomRecord) -> tuple[bytes | None, ...]:
    """One contribution per seat (a record made before any was given has none)."""
    given = record.contributions
    return given + (None,) * (len(record.seats) - len(given))


# -- creating a room ---------------------------------------------------------------------------


def create(
    game_id: str,
    options: dict[str, Any],
    seats: int,
    creator: str,
    *,
    private: bool,
    room_id: str,
    secret: bytes,
    created: float,
    sitting: str | None = None,
    rated: bool | None = None,
) -> RoomRecord:
    """A new room of ``seats`` seats (version 0: storing it makes version 1): empty, or with
    its creator in seat 0 under the name ``sitting``, in the same first write, so a room that
    was made at all was made with its creator seated (a one-seat room then starts at once, at
    ``created``). A private room's join code is the store's to hand out; it is set on the
    record afterwards. ``rated`` None: a public room is rated, a private one not."""
    game = get_game(game_id)
    if game is None:
        raise RoomError(errors.NO_SUCH_GAME, f'no game {game_id!r}; see "games"')
    own, shared = room_options.split(options)
    try:
        normalized = {**game.normalize_options(own), **room_options.normalize(shared)}
    except Rejected as exc:
        raise RoomError(exc.code, exc.reason) from None
    low, high = game.seat_range(game_options(normalized))
    if not low <= seats <= high:
        raise RoomError(errors.BAD_SEATS, f"{game.title} takes {low} to {high} seats")
    first = () if sitting is None else (Seat(creator, sitting),)
    record = RoomRecord(
        id=room_id,
        game=game.id,
        options=normalized,
        seats=first + tuple(Seat() for _ in range(seats - len(first))),
        secret=secret,
        creator=creator,
        private=private,
        created=created,
        rated=not private if rated is None else rated,
    )
    return _set_up(record, game, created) if seats == len(first) else record


# -- seats -------------------------------------------------------------------------------------


def join(
    record: RoomRecord,
    game: Game,
    player: str,
    name: str,
    *,
    wanted: int | None = None,
    watch: bool = False,
    code: Any = None,
) -> tuple[RoomRecord, list[Event], int | None]:
    """``player`` comes to the table: the seat they hold, the one they ask for, the first free
    one while the room waits for players, or none (watching; a full room's newcomers watch)."""
    seat = record.seat_of(player)
    if record.private and seat is None and code != record.code and player != record.creator:
        raise no_such_room(record.id)
    if watch:
        return record, [], None
    if seat is not None:
        if wanted is not None and wanted != seat:
            raise RoomError(errors.SEAT_TAKEN, f"you already hold seat {seat}")
        return record, [], seat
    if wanted is None and record.status != WAITING:
        return record, [], None
    return take_seat(record, game, player, name, wanted)


def take_seat(
    record: RoomRecord, game: Game, player: str, name: str, wanted: int | None
) -> tuple[RoomRecord, list[Event], int | None]:
    """``player`` sits down in ``wanted`` (None: the first free seat; none free: they watch).
    A solo room starts as soon as its seat is taken."""
    if record.status != WAITING:
        raise RoomError(errors.WRONG_STATUS, "seats can only be taken before the game starts")
    free = [i for i, s in enumerate(record.seats) if not s.taken]
    if wanted is None:
        if not free:
            return record, [], None
        wanted = free[0]
    _check_seat(record, wanted)
    if wanted not in free:
        raise RoomError(errors.SEAT_TAKEN, f"seat {wanted} is taken")
    new = record.evolve(seats=record.with_seat(wanted, Seat(player, name)))
    events: list[Event] = [{"type": "joined", "seat": wanted, "name": name}]
    if len(new.seats) == 1:
        new, events = _started(new, game, events)
    return new, events, wanted


def leave(record: RoomRecord, player: str, name: str) -> Change:
    """``player`` leaves. Before the game starts that gives their seat up, and everybody's
    "ready" with it (the table changed); once it has started the seat stays theirs."""
    seat = record.seat_of(player)
    if seat is None or record.status != WAITING:
        return record, []
    seats = record.with_seat(seat, Seat())
    seats = tuple(Seat(s.player, s.name, s.bot, s.bot) for s in seats)
    # Nobody is ready any more, so nobody's contribution stands: "ready" gives it again.
    new = record.evolve(seats=seats, contributions=())
    return new, [{"type": "left", "seat": seat, "name": name}]


def waits_with(record: RoomRecord, player: str) -> bool:
    """Whether the room still waits for players with ``player`` seated in it."""
    return record.status == WAITING and record.seat_of(player) is not None


def seated(record: RoomRecord, player: str) -> int:
    """The seat ``player`` holds; refused if none."""
    seat = record.seat_of(player)
    if seat is None:
        raise RoomError(errors.NOT_SEATED, "you hold no seat in this room")
    return seat


def ready(
    record: RoomRecord, game: Game, player: str, is_ready: bool, contribution: bytes | None = None
) -> Change:
    """A seated player is ready (or no longer), with the entropy they contribute to the deal
    (None or empty: none; taken back with their "ready"); the game starts once every seat is
    ready."""
    seat = seated(record, player)
    _waiting(record)
    if contribution is not None and len(contribution) > fairness.MAX_CONTRIBUTION:
        raise RoomError(
            errors.BAD_MESSAGE, f"a contribution is at most {fairness.MAX_CONTRIBUTION} bytes"
        )
    old = record.seats[seat]
    given = list(_contributions(record))
    given[seat] = (contribution or None) if is_ready else None
    new = record.evolve(
        seats=record.with_seat(seat, Seat(old.player, old.name, old.bot, is_ready)),
        contributions=tuple(given),
    )
    events: list[Event] = [{"type": "ready", "seat": seat, "ready": is_ready}]
    if all(s.taken and s.ready for s in new.seats):
        return _started(new, game, events)
    return new, events


def start(record: RoomRecord, game: Game, player: str) -> Change:
    """The creator starts the game before everybody is ready; every seat must be taken."""
    _waiting(record)
    if player != record.creator:
        raise RoomError(errors.NOT_CREATOR, "only the room's creator can start it early")
    empty = [i for i, s in enumerate(record.seats) if not s.taken]
    if empty:
        raise RoomError(errors.NOT_READY, f"seats {empty} are empty; fill them or add bots")
    return _started(record.evolve(), game, [])


def add_bot(record: RoomRecord, game: Game, player: str, seat: int) -> Change:
    """A server bot takes ``seat``, asked by the creator or a seated player; bots are always
    ready, so the last seat filled by a bot starts the game."""
    if player != record.creator:
        seated(record, player)
    _waiting(record)
    _check_seat(record, seat)
    if record.seats[seat].taken:
        raise RoomError(errors.SEAT_TAKEN, f"seat {seat} is taken")
    bots = sum(1 for s in record.seats if s.bot)
    new = record.evolve(
        seats=record.with_seat(seat, Seat(None, f"Bot {bots + 1}", bot=True, ready=True))
    )
    events: list[Event] = [{"type": "bot_added", "seat": seat}]
    if all(s.taken and s.ready for s in new.seats):
        return _started(new, game, events)
    return new, events


def _check_seat(record: RoomRecord, seat: int) -> None:
    if not 0 <= seat < len(record.seats):
        raise RoomError(errors.NO_SUCH_SEAT, f"seats are numbered 0 to {len(record.seats) - 1}")


def _waiting(record: RoomRecord) -> None:
    if record.status != WAITING:
        raise RoomError(errors.WRONG_STATUS, f"the room is {record.status}")


def game_options(options: dict[str, Any]) -> dict[str, Any]:
    """The game's own options among a room's (the clock's and the spectator delay are the
    room's business)."""
    return room_options.split(options)[0]


def _set_up(record: RoomRecord, game: Game, now: float) -> RoomRecord:
    """``record`` with its game set up at ``now``: state, status, deadline, clocks."""
    seats = len(record.seats)
    # The contributions are fixed from here on: the key is made of them, once.
    record = replace(record, contributions=_contributions(record))
    state = game.setup(seats, game_options(record.options), room_key(record))
    return replace(record, **game_fields(game, state, record.options, seats, now))


def _started(record: RoomRecord, game: Game, events: list[Event]) -> Change:
    """``record`` (already evolved) with the game set up and running."""
    return _set_up(record, game, time.time()), [*events, {"type": "started"}]


# -- chat --------------------------------------------------------------------------------------


def chat_line(
    record: RoomRecord, player: str, name: str, text: str, now: float
) -> dict[str, Any]:
    """The chat message a viewer's line becomes (the room's viewers get it as it is)."""
    if player in record.muted:
        raise RoomError(errors.MUTED, "an operator of this server has muted your chat in this room")
    text = text.strip()
    if not text:
        raise RoomError(errors.BAD_MESSAGE, "empty chat line")
    return {
        "t": "chat",
        "room": record.id,
        "player": player,
        "name": name,
        "seat": record.seat_of(player),
        "text": text,
        "at": now,
    }


# -- the game ----------------------------------------------------------------------------------


def move(
    record: RoomRecord, game: Game, seat: int, player: str, version: Any, mid: Any, the_move: Any
) -> Change:
    """A player's move at ``version``: the next record, with the move id remembered so a
    retry is answered again rather than applied twice. (A repeated id is the caller's to
    answer, before this: see ``RoomRecord.seen_version``.)"""
    state = record.state
    if record.status != PLAYING or state is None:
        code = errors.GAME_OVER if record.status == FINISHED else errors.WRONG_STATUS
        raise RoomError(code, f"the room is {record.status}", version=record.version)
    if version != record.version:
        raise RoomError(
            errors.STALE, f"the room is at version {record.version}", version=record.version
        )
    try:
        applied = game.apply(state, seat, the_move)
    except Rejected as exc:
        raise RoomError(exc.code, exc.reason, version=record.version) from None
    seen = record.remember(player, mid, record.version + 1)
    new = played(record, game, applied, seen, seat)
    if record.seats[seat].stand_in is None:
        return new, applied.events
    # The player acts again: the seat is theirs once more, from this move on.
    back = _stand_in_seats(new, seat, None)
    return back, [_took_back(seat), *applied.events]


# -- stand-ins and clocks -----------------------------------------------------------------------


def _stand_in_seats(record: RoomRecord, seat: int, reason: str | None) -> RoomRecord:
    """``record`` (same version) with the stand-in mark of ``seat`` set to ``reason``."""
    old = record.seats[seat]
    return replace(
        record, seats=record.with_seat(seat, Seat(old.player, old.name, old.bot, old.ready, reason))
    )


def rename(record: RoomRecord, seat: int, name: str) -> Change:
    """The player of ``seat`` goes by ``name`` from now on (no change if they already do, or
    once the game is over: a finished room does not change)."""
    old = record.seats[seat]
    if record.status == FINISHED or old.name == name:
        return record, []
    renamed = Seat(old.player, name, old.bot, old.ready, old.stand_in)
    new = record.evolve(seats=record.with_seat(seat, renamed))
    return new, [{"type": "renamed", "seat": seat, "name": name}]


def _took_back(seat: int) -> Event:
    return {"type": "took_back", "seat": seat}


def stand_in(record: RoomRecord, game: Game, seat: int, reason: str, now: float) -> Change:
    """The server's bot stands in for the player of ``seat`` at ``now``: their clock ran out
    under the ``bot`` policy (``reason`` ``"timeout"``) or they have been away (``"away"``).
    The player keeps the seat and takes it back by acting again (or, when away, by coming
    back). The clocks are measured at ``now``, the room's last change; a clock that ran out
    stops (the stand-in's move is not timed)."""
    if record.status != PLAYING or record.state is None or record.seats[seat].stand_in is not None:
        return record, []
    to_act = game.to_act(record.state)
    timed = [s for s in to_act if s != seat] if reason == "timeout" else to_act
    new = _stand_in_seats(record.evolve(clocks=_clocks_at(record, timed, now)), seat, reason)
    return new, [{"type": "stand_in", "seat": seat, "reason": reason}]


def take_back(record: RoomRecord, game: Game, seat: int, now: float) -> Change:
    """The player of ``seat`` plays for themselves again at ``now`` (no change if they already
    do, or if the game is no longer being played: a finished game changes no more). The clocks
    are measured at ``now``; a seat the game waits for whose clock stopped when it ran out
    starts it again: its player has the seat back, and a turn to play."""
    if record.status != PLAYING or record.state is None or record.seats[seat].stand_in is None:
        return record, []
    new = record.evolve(clocks=_clocks_at(record, game.to_act(record.state), now))
    return _stand_in_seats(new, seat, None), [_took_back(seat)]


def _clocks_at(record: RoomRecord, to_act: list[int], now: float) -> clocks.Clocks | None:
    """``record``'s clocks after a change at ``now`` that is no game step, running for
    ``to_act`` (see :func:`clocks.advance`: nobody moved)."""
    return clocks.advance(clocks.Rules(record.options), record.clocks, to_act, None, now)


def refused_at(refusal: RoomError, record: RoomRecord) -> RoomError:
    """A move's ``refusal`` as it reads once ``record`` is the room's: a refusal carries the
    room's current version, and the refused move may have changed it (it took the seat back
    from its stand-in)."""
    if "version" not in refusal.extra:
        return refusal
    reason = refusal.reason
    if refusal.code == errors.STALE:
        reason = f"the room is at version {record.version}"
    return RoomError(refusal.code, reason, **{**refusal.extra, "version": record.version})


def plays_itself(record: RoomRecord, seat: int) -> bool:
    """Whether the server moves for ``seat``: a bot sits there, or stands in for its player."""
    held = record.seats[seat]
    return held.bot or held.stand_in is not None


def away_due(
    record: RoomRecord,
    game: Game,
    limit: float,
    watched: Container[int | None],
    gone: Mapping[int, float],
    since: float,
) -> dict[int, float]:
    """Seat -> when the bot stands in for its player, for each seat the game waits for whose
    player plays for themselves and has no connection viewing the room (``watched``): ``limit``
    seconds after the player went (``gone``), or after ``since`` (the room was loaded) for a
    seat nobody has viewed since. Empty when ``limit`` is not positive: nobody stands in."""
    if limit <= 0 or record.status != PLAYING or record.state is None:
        return {}
    due: dict[int, float] = {}
    for seat in game.to_act(record.state):
        if record.seats[seat].player is None or plays_itself(record, seat) or seat in watched:
            continue
        due[seat] = gone.get(seat, since) + limit
    return due


def timed_out(record: RoomRecord, now: float) -> list[int]:
    """The seats whose clocks have run out at ``now`` and that the server does not already
    move for (a stand-in's move stops the clock soon)."""
    if record.status != PLAYING:
        return []
    return [s for s in clocks.expired(record.clocks, now) if not plays_itself(record, s)]


def next_timeout(record: RoomRecord) -> float | None:
    """When the next clock of a seat :func:`timed_out` would list runs out."""
    if record.clocks is None or record.status != PLAYING:
        return None
    due = [
        d for s, d in enumerate(record.clocks["deadlines"])
        if d is not None and not plays_itself(record, s)
    ]
    return min(due) if due else None


def bot_move(record: RoomRecord, game: Game, seat: int) -> tuple[RoomRecord, list[Event], Any]:
    """The bot in ``seat`` (or standing in for its player) moves, if it is still its turn (the
    game may have moved on since the turn was scheduled: then nothing changes). Also returns
    the move, for the room's log."""
    state = record.state
    if (
        record.status != PLAYING
        or state is None
        or not plays_itself(record, seat)
        or seat not in game.to_act(state)
    ):
        return record, [], None
    moves = game.legal_moves(state, seat)
    view = game.view(state, seat)
    chosen = game.bot_move(view, seat, moves, bot_state(room_key(record), record.version))
    try:
        applied = game.apply(state, seat, chosen)
    except Rejected as exc:
        raise RoomError(exc.code, exc.reason, version=record.version) from None
    return played(record, game, applied, None, seat), applied.events, chosen


def needs_server(record: RoomRecord, game: Game) -> bool:
    """Whether a room must be loaded even if no client asks for it (after a restart, or after
    its lease was lost): an automatic step is due, or a bot is to move."""
    if record.status != PLAYING or record.state is None:
        return False
    if record.deadline is not None:
        return True
    if record.clocks is not None and clocks.next_deadline(record.clocks) is not None:
        return True
    seats = record.seats
    for seat in game.to_act(record.state):  # plays_itself, inline: asked with every change
        if seats[seat].bot or seats[seat].stand_in is not None:
            return True
    return False


def auto_step(record: RoomRecord, game: Game, now: float) -> Change:
    """The game's automatic step, if one is due at ``now``."""
    state = record.state
    if record.status != PLAYING or state is None or record.deadline is None:
        return record, []
    if now < record.deadline:
        return record, []
    applied = game.apply_auto(state)
    return played(record, game, applied, now=now), applied.events


def leave_game(record: RoomRecord, game: Game, seat: int, reason: str, now: float) -> Change:
    """``seat`` leaves the game being played (``Game.leave``: it resigned, or its clock ran out
    under the ``forfeit`` policy) at ``now``."""
    state = record.state
    if record.status != PLAYING or state is None:
        code = errors.GAME_OVER if record.status == FINISHED else errors.WRONG_STATUS
        raise RoomError(code, f"the room is {record.status}", version=record.version)
    try:
        applied = game.leave(state, seat, reason)
    except Rejected as exc:
        raise RoomError(exc.code, exc.reason, version=record.version) from None
    return played(record, game, applied, now=now), applied.events


def abandon(record: RoomRecord, now: float) -> Change:
    """End a game nobody plays or watches any more (reason ``abandoned``: no winners, no
    scores); the record then expires as any finished room does."""
    if record.status != PLAYING:
        return record, []
    return _ended_without_result(record, "abandoned", now)


#: The reason of a room an operator ended (``playhall admin end``).
CLOSED_BY_OPERATOR = "closed_by_operator"


def close_by_operator(record: RoomRecord, now: float) -> Change:
    """An operator ends the room (reason ``closed_by_operator``: no winners, no scores),
    whether its game is being played or it still waits for one; it then expires as any
    finished room does. A finished room is refused: there is nothing left to end."""
    if record.status == FINISHED:
        raise RoomError(errors.GAME_OVER, "the room is finished already", version=record.version)
    return _ended_without_result(record, CLOSED_BY_OPERATOR, now)


def _ended_without_result(record: RoomRecord, reason: str, now: float) -> Change:
    """``record`` finished for ``reason`` with nobody winning, its clocks stopped."""
    stopped = (
        clocks.advance(clocks.Rules(record.options), record.clocks, [], None, now)
        if record.status == PLAYING else record.clocks
    )
    outcome = {"winners": [], "scores": [], "reason": reason}
    new = record.evolve(
        status=FINISHED, outcome=outcome, deadline=None, clocks=stopped,
        seats=played_by_players(record.seats),
    )
    return new, [{"type": "game_over", **outcome}]


def mute(record: RoomRecord, player: str, name: str | None, muted: bool) -> Change:
    """An operator mutes (or unmutes) ``player``'s chat in the room (``name``: theirs, for the
    event); no change if they already are (or are not)."""
    if (player in record.muted) == muted:
        return record, []
    if muted:
        now_muted = (*record.muted, player)
    else:
        now_muted = tuple(p for p in record.muted if p != player)
    event: Event = {
        "type": "chat_muted" if muted else "chat_unmuted", "player": player, "name": name,
        "seat": record.seat_of(player),
    }
    return record.evolve(muted=now_muted), [event]


def expiry_ttl(record: RoomRecord, waiting_ttl: float, abandoned_ttl: float) -> float | None:
    """How long ``record`` may be left alone (no change, no viewer) before it goes: None for a
    finished room (its keys expire by themselves) or when the setting is 0 (never)."""
    if record.status == FINISHED:
        return None
    ttl = waiting_ttl if record.status == WAITING else abandoned_ttl
    return ttl if ttl > 0 else None


# -- rematch -----------------------------------------------------------------------------------


def rematch_needed(record: RoomRecord, player: str) -> bool:
    """Whether a seated player's rematch request makes a new room (the first one does; later
    ones are told the same room)."""
    seated(record, player)
    if record.status != FINISHED:
        raise RoomError(errors.WRONG_STATUS, "a rematch needs a finished game")
    return record.rematch is None


def rematch(
    record: RoomRecord,
    game: Game,
    player: str,
    *,
    room_id: str,
    secret: bytes,
    created: float,
) -> tuple[RoomRecord, RoomRecord, list[Event]]:
    """The rematch room (the same table; a new secret, so a new commitment; people not ready,
    bots ready; a solo room already started) and the finished room's next version, which
    points to it. A private room's join code is the store's to hand out; it is set on the new
    room afterwards."""
    seats = tuple(Seat(s.player, s.name, s.bot, s.bot) for s in record.seats)
    new_room = RoomRecord(
        id=room_id,
        game=record.game,
        options=record.options,
        seats=seats,
        secret=secret,
        creator=record.creator,
        private=record.private,
        rematch_of=record.id,
        created=created,
        rated=record.rated,
        muted=record.muted,  # an operator's mute holds at the same table
    )
    if len(seats) == 1:
        new_room = _set_up(new_room, game, created)
    events: list[Event] = [{"type": "rematch", "room": room_id}]
    return new_room, record.evolve(rematch=room_id), events
