"""What each command does to a room: the handlers the room's actor (:mod:`playhall.rooms.actor`)
calls, one command at a time. Each asks the table's rules (:mod:`playhall.rooms.table`) for the
change, makes the store's side changes that go with it (a player's list of rooms, a join code,
a chat line), has the actor commit it, and answers: what the client's ``ok`` reply carries.

A handler sees its room through :class:`Room`, the contract named here; the actor is the one
that meets it. The actor imports this module, and this module imports nothing of the actor.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Protocol

import msgpack

from playhall.counters import Counters
from playhall.games.contract import Event, Game
from playhall.rooms import clocks, record_replay, spectators, table, views
from playhall.rooms.audience import Audience, Viewer
from playhall.rooms.game_record import build as build_record
from playhall.rooms.ids import new_room_id
from playhall.rooms.inbox import Command
from playhall.rooms.listing import Listing
from playhall.rooms.record import FINISHED, WAITING, RoomRecord
from playhall.rooms.table import RoomError
from playhall.store.redis_store import Store
from playhall.store.rooms import Placed
from playhall_protocol import errors


class Room(Protocol):
    """What a handler may use of its room (:class:`playhall.rooms.actor.Room` is the one):
    the record and the game it plays, the store for the side changes, the audience, the
    listing, and the actor's commit and timers. A handler changes the record only through
    :meth:`commit`."""

    record: RoomRecord
    game: Game
    store: Store
    audience: Audience
    listing: Listing
    lease: str
    log: Any
    #: The process's metrics, counted as the room's changes happen.
    counters: Counters
    #: When the room was last seen changed or its last viewer left (see ``expire``).
    active_at: float
    #: Stores a new room made by a rematch (asked by a player from a client address, under
    #: their caps) and starts its actor.
    create_room: Callable[[RoomRecord, str, str], Awaitable[None]]

    async def commit(
        self, new: RoomRecord, kind: str, seat: int | None = None, player: str | None = None,
        move: Any = None, events: list[Event] | None = None, mid: Any = None,
        answer: tuple[Command, dict[str, Any]] | None = None,
    ) -> None: ...

    def schedule(self) -> None: ...

    def arm_clock(self, to_act: Sequence[int] | None = None) -> None: ...

    def away_due(self, record: RoomRecord) -> dict[int, float]: ...

    def expiry_ttl(self) -> float | None: ...

    def placed(self) -> Placed: ...

    def code_ttl(self) -> int: ...

    async def discard(self) -> None: ...


# -- people at the table ------------------------------------------------------------------------


async def join(room: Room, command: Command) -> dict[str, Any]:
    session = command.viewer()
    args = command.args
    record = room.record
    new, events, seat = table.join(
        record, room.game, session.player, session.name,
        wanted=args.get("seat"), watch=bool(args.get("watch")), code=args.get("code"),
    )
    if new is not record:
        await room.store.players.add_player_room(session.player, record.id)
        await room.commit(new, "join", seat, session.player, events=events)
    await _came_back(room, seat, session.player)
    await _named(room, seat, session)
    room.audience.attach(room.record, session, seat)
    room.audience.send_snapshot(room.record, session)
    lines = [msgpack.unpackb(b) for b in await room.store.rooms.chat(record.id)]
    return {"room": record.id, "seat": seat, "version": room.record.version, "chat": lines}


async def sync(room: Room, command: Command) -> dict[str, Any]:
    """Attach (again) and catch up from ``version``: missed diffs if history has them all,
    else a snapshot."""
    session = command.viewer()
    record = room.record
    seat = record.seat_of(session.player)
    await _came_back(room, seat, session.player)
    await _named(room, seat, session)
    record = room.record
    room.audience.attach(record, session, seat)
    diffs = room.audience.catch_up(record, session, command.args.get("version"))
    caught_up = "diffs" if diffs else "snapshot"
    return {"room": record.id, "seat": seat, "version": record.version, "caught_up": caught_up}


async def _came_back(room: Room, seat: int | None, player: str) -> None:
    """A player whose seat the bot took while they were away has it back at once (before they
    are attached: they get the version that says so in their snapshot or catch-up)."""
    if seat is not None and room.record.seats[seat].stand_in == "away":
        new, events = table.take_back(room.record, room.game, seat, time.time())
        if new is not room.record:
            await room.commit(new, "take_back", seat, player, events=events)


async def _named(room: Room, seat: int | None, session: Viewer) -> None:
    """A seat shows the name its player goes by now: one renamed while the room was not in
    this process's memory (or by a ``hello`` with a new name) is renamed as they come back."""
    if seat is not None:
        await _rename_seat(room, seat, session.player, session.name)


async def _rename_seat(room: Room, seat: int, player: str, name: str) -> None:
    new, events = table.rename(room.record, seat, name)
    if new is not room.record:
        await room.commit(new, "rename", seat, player, events=events)


async def rename(room: Room, command: Command) -> dict[str, Any]:
    """The player renamed themselves (``rename``): their seat here shows the new name."""
    session = command.viewer()
    seat = room.record.seat_of(session.player)
    if seat is not None:
        await _rename_seat(room, seat, session.player, command.args["name"])
    return {"room": room.record.id}


async def resnapshot(room: Room, command: Command) -> dict[str, Any]:
    session = command.viewer()
    if session in room.audience.viewers:
        room.audience.send_snapshot(room.record, session)
    return {}


async def detach(room: Room, command: Command) -> dict[str, Any]:
    room.audience.detach(room.record, command.viewer())
    return {}


async def leave(room: Room, command: Command) -> dict[str, Any]:
    session = command.viewer()
    record = room.record
    new, events = table.leave(record, session.player, session.name)
    if new is not record:
        await room.store.players.remove_player_room(session.player, record.id)
        seat = record.seat_of(session.player)
        await room.commit(new, "leave", seat, session.player, events=events)
    room.audience.detach(room.record, session)
    return {"room": record.id}


async def ready(room: Room, command: Command) -> dict[str, Any]:
    player = command.viewer().player
    is_ready = bool(command.args.get("ready", True))
    entropy = command.args.get("entropy")
    new, events = table.ready(room.record, room.game, player, is_ready, entropy)
    await room.commit(new, "ready", room.record.seat_of(player), player, events=events)
    return {"room": room.record.id, "status": room.record.status}


async def start(room: Room, command: Command) -> dict[str, Any]:
    player = command.viewer().player
    new, events = table.start(room.record, room.game, player)
    await room.commit(new, "start", None, player, events=events)
    return {"room": room.record.id, "status": room.record.status}


async def add_bot(room: Room, command: Command) -> dict[str, Any]:
    player = command.viewer().player
    seat = command.args["seat"]
    new, events = table.add_bot(room.record, room.game, player, seat)
    await room.commit(new, "bot", seat, player, events=events)
    return {"room": room.record.id, "seat": seat}


async def chat(room: Room, command: Command) -> dict[str, Any]:
    session = command.viewer()
    if session not in room.audience.viewers:
        raise RoomError(errors.NOT_IN_ROOM, "join or watch the room to chat in it")
    text = command.args["text"]
    line = table.chat_line(room.record, session.player, session.name, text, time.time())
    await room.store.rooms.add_chat(room.record.id, msgpack.packb(line))
    room.audience.push_all(line)
    return {}


async def rematch(room: Room, command: Command) -> dict[str, Any]:
    """The first seated player to ask makes the rematch room: a room they make, under the same
    caps as a ``create`` (``too_many_rooms``), and stored before the finished room points to
    it."""
    session = command.viewer()
    player = session.player
    old = room.record
    if table.rematch_needed(old, player):
        new_room, new, events = table.rematch(
            old, room.game, player,
            room_id=new_room_id(), secret=table.new_secret(), created=time.time(),
        )
        await room.create_room(new_room, player, session.address)
        await room.commit(new, "rematch", old.seat_of(player), player, events=events)
    return {"room": room.record.rematch}


async def settle(room: Room, command: Command) -> dict[str, Any]:
    """Nothing but what the actor does before every command: settle a change whose reply from
    Redis was lost (``Room.unsettled``). The room posts it to itself, so that it settles once
    Redis answers again without waiting for a client's request."""
    return {}


#: The most versions a ``history`` answer looks back over.
HISTORY: Final = 100


async def history(room: Room, command: Command) -> dict[str, Any]:
    """The events of the room's last versions (at most ``limit``, up to :data:`HISTORY`) as the
    asker may see them: from their seat, or as a spectator (the seat they view it from, when
    they view it). Read from the room's log in Redis, where each change keeps its events with
    their visibility marks, so a page reloaded or a client that caught up by a snapshot gets
    its game log back; versions with no event the asker may see are left out, and so are a
    spectator's versions newer than the room's spectator delay shows them (``spectators``)."""
    session = command.viewer()
    record = room.record
    viewing = room.audience.viewers.get(session)
    key = viewing.seat if viewing is not None else record.seat_of(session.player)
    wanted = min(command.args.get("limit", HISTORY), HISTORY)
    newest = record.version if key is not None else spectators.newest_shown(record)
    lines = []
    for entry in await room.store.rooms.recent_log(record.id, max(1, wanted)):
        if "e" not in entry or int(entry["v"]) > newest:
            continue
        events = views.visible_events(msgpack.unpackb(entry["e"]), key)
        if events:
            lines.append({"version": int(entry["v"]), "events": events})
    return {"room": record.id, "version": record.version, "log": lines}


async def game_record(room: Room, command: Command) -> dict[str, Any]:
    """The finished room's game record (refused before the end: it would show hidden facts)."""
    record = room.record
    if record.status != FINISHED:
        raise table.RoomError(
            errors.WRONG_STATUS, f"the room is {record.status}: its record is shown once the "
            "game is over",
        )
    log = await room.store.rooms.timed_log(record.id)
    return {"room": record.id, "record": build_record(record, room.game.title, log)}


async def game_replay(room: Room, command: Command) -> dict[str, Any]:
    """What one seat (or a spectator) saw of the finished game, step by step, replayed from the
    room's record through the engine (``record_replay``); refused before the end as ``record``
    is, since it holds every seat's views."""
    record = room.record
    if record.status != FINISHED:
        raise table.RoomError(
            errors.WRONG_STATUS, f"the room is {record.status}: its replay is shown once the "
            "game is over",
        )
    seat = command.args.get("seat")
    if seat is not None and not 0 <= seat < len(record.seats):
        last = len(record.seats) - 1
        raise table.RoomError(errors.NO_SUCH_SEAT, f"the room has seats 0 to {last}")
    log = await room.store.rooms.timed_log(record.id)
    built = build_record(record, room.game.title, log)
    try:
        replayed = record_replay.positions(built, room.game)
    except record_replay.RecordError as exc:  # the engine no longer plays this log the same
        reason = f"the room's record does not replay: {exc}"
        raise table.RoomError(errors.INTERNAL, reason) from None
    frames = record_replay.frames(built, room.game, replayed, seat)
    return {"room": record.id, "seat": seat, "frames": record_replay.as_diffs(frames)}


async def reindex(room: Room, command: Command) -> dict[str, Any]:
    """Put the room's entries in the shared indexes as they should be now (see
    ``Room.reindex``): its listing, its place in the active set and the expiry index (a room
    due and not there is checked a whole ttl from now), its join code's expiry."""
    summary = views.lobby_entry(room.record, room.game.title)
    await room.listing.write(room.record, room.lease, summary)
    ttl = room.expiry_ttl()
    due = time.time() + (ttl or 0)
    await room.store.rooms.put_indexes(room.placed(), due, room.code_ttl())
    return {}


def hide_from_outsiders(room: Room, command: Command) -> None:
    """A private room does not exist for anyone outside it: neither seated in it, nor viewing
    it (after a ``join`` with its code), nor its creator (who was given the code). Every
    request of theirs is answered exactly as one about a room that does not exist, so nothing
    (the room's existence, its status, who created it) can be learnt without the code. A
    ``sync`` that carries the code is let in: it is how a spectator, who holds no seat, comes
    back on a new connection."""
    session = command.session
    if (
        session is None
        or command.kind in _OPEN_TO_OUTSIDERS
        or session in room.audience.viewers
        or room.record.seat_of(session.player) is not None
        or room.record.creator == session.player
        or (command.kind == "sync" and command.args.get("code") == room.record.code)
    ):
        return
    raise table.no_such_room(room.record.id)


#: What a private room takes from anyone outside it: ``join`` (which checks the code itself)
#: and the connection's own bookkeeping.
_OPEN_TO_OUTSIDERS: Final = frozenset({"join", "detach", "resnapshot"})


# -- moves, bots and automatic steps -------------------------------------------------------------


async def move(room: Room, command: Command) -> dict[str, Any]:
    args = command.args
    player = command.viewer().player
    record = room.record
    seat = table.seated(record, player)
    earlier = record.seen_version(player, args["mid"])
    if earlier is not None:
        # The same move sent again (a retry after a lost reply): same answer, applied once.
        return {"room": record.id, "version": earlier}
    taken_back: RoomError | None = None
    try:
        new, events = table.move(
            record, room.game, seat, player, args["version"], args["mid"], args["move"]
        )
    except RoomError as refusal:
        # Acting again takes a seat back from its stand-in even if this move came too late
        # (the bot moved first): the next one is the player's own. The refusal then carries
        # the version the take-back made. (Committed after the handler, never inside it:
        # docs/operations.md, "The compiled build".)
        back, events = table.take_back(record, room.game, seat, time.time())
        if back is record:
            raise
        taken_back = table.refused_at(refusal, back)
    if taken_back is not None:
        await room.commit(back, "take_back", seat, player, events=events)
        raise taken_back
    answer = {"room": record.id, "version": new.version}
    await room.commit(
        new, "move", seat, player, args["move"], events, args["mid"], (command, answer)
    )
    return answer


async def resign(room: Room, command: Command) -> dict[str, Any]:
    """A seated player leaves the game being played (``Game.leave``, reason
    ``resignation``)."""
    player = command.viewer().player
    record = room.record
    seat = table.seated(record, player)
    new, events = table.leave_game(record, room.game, seat, "resignation", time.time())
    room.log.info("resigned", seat=seat, player=player, version=new.version)
    answer = {"room": record.id, "version": new.version}
    await room.commit(
        new, "leave_game", seat, player, "resignation", events, answer=(command, answer)
    )
    room.counters.forfeited("resignation")
    return answer


async def clock(room: Room, command: Command) -> dict[str, Any]:
    """A clock ran out, or a player has been away too long: apply the room's policy to each
    such seat, one change at a time (a forfeit may end the game and stop the other clocks)."""
    now = time.time()
    policy = clocks.Rules(room.record.options).on_timeout
    while True:
        record = room.record
        late = table.timed_out(record, now)
        away = [seat for seat, due in room.away_due(record).items() if due <= now]
        if late and policy == "forfeit":
            seat, why = late[0], "timeout"
            new, events = table.leave_game(record, room.game, seat, "timeout", now)
            kind, move = "leave_game", "timeout"
        elif late or away:
            seat, why = (late[0], "timeout") if late else (away[0], "away")
            new, events = table.stand_in(record, room.game, seat, why, now)
            kind, move = "stand_in", None
        else:
            break
        if new is record:
            break
        room.log.info("clock_ran_out" if late else "player_away", seat=seat, kind=kind)
        await room.commit(new, kind, seat, None, move, events)
        _count_clock(room.counters, bool(late), kind, why)
    room.arm_clock()  # woken early, or nothing (more) to do: wait for the next
    return {}


def _count_clock(counters: Counters, late: bool, kind: str, reason: str) -> None:
    """Count what :func:`clock` just stored: a clock that ran out, and the forfeit or the
    stand-in it (or a player away) led to."""
    if late:
        counters.clock_timeouts += 1
    if kind == "stand_in":
        counters.stood_in(reason)
    else:
        counters.forfeited(reason)


async def bot_turn(room: Room, command: Command) -> dict[str, Any]:
    seat = command.args["seat"]
    new, events, chosen = table.bot_move(room.record, room.game, seat)
    if new is not room.record:
        await room.commit(new, "bot_move", seat, None, chosen, events)
    return {}


async def auto(room: Room, command: Command) -> dict[str, Any]:
    record = room.record
    new, events = table.auto_step(record, room.game, time.time())
    if new is not record:
        await room.commit(new, "auto", None, None, None, events)
    elif record.deadline is not None:
        room.schedule()  # woken early (clock adjustments): wait again
    return {}


async def expire(room: Room, command: Command) -> dict[str, Any]:
    """The room is due for its expiry check (``command.args["due"]``: when it was due): a
    waiting room nobody has viewed for ``waiting_ttl`` is closed and deleted; a game with no
    change and no viewer for ``abandoned_ttl`` is ended (reason ``abandoned``) and then expires
    as a finished room. A room that was not left alone that long is checked again later."""
    record = room.record
    ttl = room.expiry_ttl()
    if ttl is None:
        await room.store.expiry.drop_due(record.id)
        return {}
    now = time.time()
    if room.audience.viewers:
        await room.store.expiry.set_due(record.id, now + ttl)
        return {}
    alone_since = max(room.active_at, command.args["due"] - ttl)
    if now < alone_since + ttl:
        await room.store.expiry.set_due(record.id, alone_since + ttl)
        return {}
    if record.status == WAITING:
        room.log.info("room_closed", version=record.version, alone_s=round(now - alone_since))
        await room.discard()
        return {}
    new, events = table.abandon(record, now)
    room.log.info("game_abandoned", version=new.version, alone_s=round(now - alone_since))
    await room.commit(new, "abandon", None, None, None, events)
    return {}


# -- an operator's commands (playhall admin, through playhall.net.admin) -------------------------


async def operator_end(room: Room, command: Command) -> dict[str, Any]:
    """An operator ends the room (``args``: ``operator``, who did): its game, or its wait for
    one, is over with reason ``closed_by_operator``, a version every viewer gets."""
    record = room.record
    new, events = table.close_by_operator(record, time.time())
    room.log.info(
        "room_closed_by_operator", operator=command.args["operator"], status=record.status,
        version=new.version,
    )
    await room.commit(new, "close", None, None, None, events)
    return {"room": record.id, "version": new.version, "status": new.status}


async def operator_mute(room: Room, command: Command) -> dict[str, Any]:
    """An operator mutes (``args["muted"]``) or unmutes ``args["player"]``'s chat in the room:
    a version whose event every viewer gets; their chat is refused (``muted``) meanwhile."""
    args = command.args
    player, muted = args["player"], bool(args["muted"])
    record = room.record
    stored = await room.store.players.player(player)
    seat = record.seat_of(player)
    if stored is None and seat is None:
        raise RoomError(errors.NO_SUCH_PLAYER, f"no player has the id {player!r}")
    name = stored.name if stored is not None else record.seats[seat or 0].name
    new, events = table.mute(record, player, name, muted)
    if new is not record:
        room.log.info(
            "chat_muted" if muted else "chat_unmuted", operator=args["operator"],
            player=player, version=new.version,
        )
        await room.commit(new, "mute" if muted else "unmute", seat, player, events=events)
    return {"room": record.id, "version": room.record.version, "muted": list(room.record.muted)}


async def quick_start(room: Room, command: Command) -> dict[str, Any]:
    """A quick-play table starts (playhall.matchmaking asks): once its wait is over, its empty
    seats going to the server's bots (``bots``, the default); or once every seat is taken,
    even if someone's "ready" was reset by a player who left (its players asked for any table
    that fits: a changed table needs no second "ready"). Each bot is its own change, as a
    ``bot`` request would make it. Nothing if it started already or nobody is seated any more
    (a table of bots alone is not a game anyone asked for)."""
    record = room.record
    if record.status != WAITING or not any(s.player and not s.bot for s in record.seats):
        return {"status": record.status}
    if not command.args.get("bots", True) and not all(s.taken for s in record.seats):
        return {"status": record.status}
    creator = record.creator
    for seat in range(len(record.seats)):
        if not room.record.seats[seat].taken:
            new, events = table.add_bot(room.record, room.game, creator, seat)
            await room.commit(new, "bot", seat, creator, events=events)
    if room.record.status == WAITING:  # a seated player was not ready: start all the same
        new, events = table.start(room.record, room.game, creator)
        await room.commit(new, "start", None, creator, events=events)
    return {"status": room.record.status}


async def table_state(room: Room, command: Command) -> dict[str, Any]:
    """What quick play asks of one of its tables, on whichever process holds it: its status,
    its seat count, its free seats and the players seated (bots left out)."""
    record = room.record
    return {
        "status": record.status,
        "seats": len(record.seats),
        "free": sum(1 for s in record.seats if not s.taken),
        "players": [s.player for s in record.seats if s.player and not s.bot],
    }


#: What each kind of command does.
HANDLERS: Final[dict[str, Callable[[Room, Command], Awaitable[dict[str, Any]]]]] = {
    "join": join,
    "sync": sync,
    "leave": leave,
    "ready": ready,
    "start": start,
    "bot": add_bot,
    "chat": chat,
    "move": move,
    "rematch": rematch,
    "rename": rename,
    "history": history,
    "detach": detach,
    "resnapshot": resnapshot,
    "resign": resign,
    "record": game_record,
    "replay": game_replay,
    "_auto": auto,
    "_bot_turn": bot_turn,
    "_reindex": reindex,
    "_settle": settle,
    "_clock": clock,
    "_expire": expire,
    "_quick_start": quick_start,
    "_table": table_state,
    "_operator_end": operator_end,
    "_operator_mute": operator_mute,
}
