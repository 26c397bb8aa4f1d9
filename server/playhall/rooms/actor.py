"""The room actor: one asyncio task per live room, the only code that changes that room.

Everything that changes a room (join, leave, ready, start, bot, move, automatic step, rematch)
is a :class:`Command` in the room's bounded inbox, handled one at a time. For each accepted
change the actor asks the table's rules (:mod:`playhall.rooms.table`) for the new record, stores
it in Redis (record, version, log entry, lobby index — atomically, fenced by the room's lease),
and only then replies and hands it to the audience (:mod:`playhall.rooms.audience`), which
sends it to the viewers. A crash at any instant therefore loses nothing a client was told about.

Two ways in: :meth:`Room.submit` from outside (a full inbox refuses with ``overloaded``, which
the client may retry; :meth:`Room.ask` is submit and wait for the answer), and ``_post`` for the
room's own timers and bots, which a full inbox delays a little instead of dropping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import msgpack

from playhall import log
from playhall.config import Config
from playhall.games.contract import Event, Game
from playhall.rooms import table, views
from playhall.rooms.audience import Audience, Viewer
from playhall.rooms.inbox import Command, Done, Inbox, settle
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall.rooms.replay import STEPS, step_entry
from playhall.rooms.table import RoomError
from playhall.store.redis_store import Commit, Fenced, Store
from playhall_protocol import errors

if TYPE_CHECKING:
    from playhall.lobby import Lobby

logger = log.get("playhall.room")


class Room:
    def __init__(
        self,
        record: RoomRecord,
        game: Game,
        *,
        store: Store,
        config: Config,
        lobby: Lobby,
        lease: str,
        create_room: Callable[[RoomRecord], Awaitable[None]],
        on_idle: Callable[[Room], None],
        checkpoint: int | None = None,
    ) -> None:
        self.record = record
        #: The version of the record as last stored whole (see _commit); ``record``'s own
        #: unless the room was loaded from an older checkpoint and its log.
        self._checkpoint = record.version if checkpoint is None else checkpoint
        self.game = game
        self.store = store
        self.config = config
        self.lobby = lobby
        self.lease = lease
        self._create_room = create_room
        self._on_idle = on_idle
        self.inbox: Inbox[Command] = Inbox(config.room_inbox)
        self.audience = Audience(record.id, game, config)
        # The lobby summary Redis holds for this room (None: not listed).
        self._listed = views.lobby_entry(record, game.title)
        self._timer: asyncio.TimerHandle | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.log = logger.bind(room=record.id, game=record.game)
        self._debug = log.debug_enabled()

    # -- lifecycle and the inbox ---------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"room:{self.record.id}")
        self._schedule()

    async def stop(self) -> None:
        """Finish the command in hand, refuse the rest, and stop."""
        self._closed = True
        for handle in (self._timer, self._idle):
            if handle is not None:
                handle.cancel()
        if self._task is not None:
            self.inbox.put(Command("_stop", None, {}), force=True)
            await self._task
        for command in self.inbox.take_all():
            command.finish(None, RoomError(errors.DRAINING, "the room is closing"))

    def submit(
        self, kind: str, session: Viewer | None, args: dict[str, Any],
        request: int | None = None, done: Done | None = None,
    ) -> None:
        """Queue a command whose outcome goes to ``done``; raises :class:`RoomError` at once
        when the room cannot take it (closing, or its inbox is full)."""
        if self._closed:
            raise RoomError(errors.DRAINING, "the room is closing; reconnect to resume")
        if not self.inbox.put(Command(kind, session, args, request, done)):
            raise RoomError(errors.OVERLOADED, "the room is busy; retry shortly")

    async def ask(
        self, kind: str, session: Viewer | None, args: dict[str, Any], request: int | None = None
    ) -> dict[str, Any]:
        """:meth:`submit`, and wait for the answer; raises :class:`RoomError` when refused."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.submit(kind, session, args, request, partial(settle, future))
        return await future

    def _post(self, kind: str, args: dict[str, Any] | None = None) -> None:
        """Queue an internal command; a full inbox is retried shortly, never dropped."""
        if self._closed:
            return
        if not self.inbox.put(Command(kind, None, args or {})):
            asyncio.get_running_loop().call_later(0.05, self._post, kind, args)

    async def _run(self) -> None:
        while True:
            command = await self.inbox.get()
            if command.kind == "_stop":
                return
            handler = _HANDLERS[command.kind]
            try:
                result = await handler(self, command)
            except RoomError as exc:
                command.finish(None, exc)
                continue
            except Fenced:
                self.log.warning("room_fenced", command=command.kind)
                lost = "this server no longer owns the room; reconnect"
                command.finish(None, RoomError(errors.STORE_FAILED, lost))
                self._closed = True
                self._on_idle(self)
                continue
            except Exception as exc:
                player = getattr(command.session, "player", None)
                self.log.exception(
                    "room_command_failed", command=command.kind, player=player, req=command.request
                )
                code = errors.STORE_FAILED if _is_store_error(exc) else errors.INTERNAL
                command.finish(None, RoomError(code, "the change was not made"))
                continue
            command.finish(result)
            self._check_idle()

    # -- storing a change ----------------------------------------------------------------------

    async def _commit(
        self, new: RoomRecord, kind: str, seat: int | None = None, player: str | None = None,
        move: Any = None, events: list[Event] | None = None, mid: Any = None,
    ) -> None:
        """Store ``new`` (whose version is the current one + 1), then adopt and broadcast it.

        A game step (``kind`` in ``STEPS``) that leaves the status as it was is stored as its
        log entry only, unless ``checkpoint_every`` steps have passed since the record was
        last stored whole: loading the room replays the steps since (see ``replay``)."""
        old = self.record
        # The lobby's summary follows from the seats and the status only: most changes (every
        # move) leave it as it was, and then neither Redis nor lobby watchers hear of it. (A
        # dict compares entry by entry even with itself: the identity test spares every move.)
        seats_changed = new.seats is not old.seats
        previous = self._listed
        summary = previous
        if seats_changed or new.status != old.status:
            summary = views.lobby_entry(new, self.game.title)
        lobby_changed = summary is not previous and summary != previous
        checkpoint = (
            kind not in STEPS
            or new.status != old.status
            or new.version - self._checkpoint >= self.config.checkpoint_every
        )
        await self.store.commit(Commit(
            room=new.id,
            lease=self.lease,
            prev_version=old.version,
            version=new.version,
            record=new.pack() if checkpoint else b"",
            log=step_entry(new, kind, seat, player, move, mid),
            lobby=msgpack.packb(summary) if summary is not None and lobby_changed else None,
            unlist=summary is None and previous is not None,
            active=table.needs_server(new, self.game),
            expire=self.config.finished_ttl if new.status == FINISHED else 0,
            code=new.code,
        ))
        self.record = new
        if checkpoint:
            self._checkpoint = new.version
        self._listed = summary
        if self._debug:
            self.log.debug("committed", kind=kind, seat=seat, player=player, version=new.version)
        if lobby_changed:
            self.lobby.changed(new.id, summary, new.game)
        self.audience.broadcast(new, events or [])
        if seats_changed:  # a seat taken, left or given to a bot; viewers coming and going
            self.audience.push_presence(new)  # push presence themselves
        self._schedule()

    # -- commands from clients -------------------------------------------------------------------

    async def _join(self, command: Command) -> dict[str, Any]:
        session = command.viewer()
        args = command.args
        record = self.record
        new, events, seat = table.join(
            record, self.game, session.player, session.name,
            wanted=args.get("seat"), watch=bool(args.get("watch")), code=args.get("code"),
        )
        if new is not record:
            await self.store.add_player_room(session.player, record.id)
            await self._commit(new, "join", seat, session.player, events=events)
        self.audience.attach(self.record, session, seat)
        self.audience.send_snapshot(self.record, session)
        chat = [msgpack.unpackb(b) for b in await self.store.chat(record.id)]
        return {"room": record.id, "seat": seat, "version": self.record.version, "chat": chat}

    async def _sync(self, command: Command) -> dict[str, Any]:
        """Attach (again) and catch up from ``version``: missed diffs if history has them all,
        else a snapshot."""
        session = command.viewer()
        record = self.record
        seat = record.seat_of(session.player)
        if record.private and seat is None and session not in self.audience.viewers:
            raise RoomError(errors.NOT_IN_ROOM, "join this private room with its code first")
        self.audience.attach(record, session, seat)
        diffs = self.audience.catch_up(record, session, command.args.get("version"))
        caught_up = "diffs" if diffs else "snapshot"
        return {"room": record.id, "seat": seat, "version": record.version, "caught_up": caught_up}

    async def _resnapshot(self, command: Command) -> dict[str, Any]:
        session = command.viewer()
        if session in self.audience.viewers:
            self.audience.send_snapshot(self.record, session)
        return {}

    async def _detach(self, command: Command) -> dict[str, Any]:
        self.audience.detach(self.record, command.viewer())
        return {}

    async def _leave(self, command: Command) -> dict[str, Any]:
        session = command.viewer()
        record = self.record
        new, events = table.leave(record, session.player, session.name)
        if new is not record:
            await self.store.remove_player_room(session.player, record.id)
            seat = record.seat_of(session.player)
            await self._commit(new, "leave", seat, session.player, events=events)
        self.audience.detach(self.record, session)
        return {"room": record.id}

    async def _ready(self, command: Command) -> dict[str, Any]:
        player = command.viewer().player
        ready = bool(command.args.get("ready", True))
        new, events = table.ready(self.record, self.game, player, ready)
        await self._commit(new, "ready", self.record.seat_of(player), player, events=events)
        return {"room": self.record.id, "status": self.record.status}

    async def _start(self, command: Command) -> dict[str, Any]:
        player = command.viewer().player
        new, events = table.start(self.record, self.game, player)
        await self._commit(new, "start", None, player, events=events)
        return {"room": self.record.id, "status": self.record.status}

    async def _add_bot(self, command: Command) -> dict[str, Any]:
        player = command.viewer().player
        seat = command.args["seat"]
        new, events = table.add_bot(self.record, self.game, player, seat)
        await self._commit(new, "bot", seat, player, events=events)
        return {"room": self.record.id, "seat": seat}

    async def _chat(self, command: Command) -> dict[str, Any]:
        session = command.viewer()
        if session not in self.audience.viewers:
            raise RoomError(errors.NOT_IN_ROOM, "join or watch the room to chat in it")
        text = command.args["text"]
        line = table.chat_line(self.record, session.player, session.name, text, time.time())
        await self.store.add_chat(self.record.id, msgpack.packb(line))
        self.audience.push_all(line)
        return {}

    async def _rematch(self, command: Command) -> dict[str, Any]:
        player = command.viewer().player
        old = self.record
        if table.rematch_needed(old, player):
            room_id = table.new_room_id()
            code = await self.store.claim_code(room_id) if old.private else None
            rematch, new, events = table.rematch(
                old, self.game, player,
                room_id=room_id, seed=table.new_seed(), code=code, created=time.time(),
            )
            await self._create_room(rematch)
            await self._commit(new, "rematch", old.seat_of(player), player, events=events)
        return {"room": self.record.rematch}

    # -- moves, bots and automatic steps ---------------------------------------------------------

    async def _move(self, command: Command) -> dict[str, Any]:
        args = command.args
        player = command.viewer().player
        record = self.record
        seat = table.seated(record, player)
        earlier = record.seen_version(player, args["mid"])
        if earlier is not None:
            # The same move sent again (a retry after a lost reply): same answer, applied once.
            return {"room": record.id, "version": earlier}
        new, events = table.move(
            record, self.game, seat, player, args["version"], args["mid"], args["move"]
        )
        await self._commit(new, "move", seat, player, args["move"], events, args["mid"])
        return {"room": record.id, "version": new.version}

    async def _bot_turn(self, command: Command) -> dict[str, Any]:
        seat = command.args["seat"]
        new, events, move = table.bot_move(self.record, self.game, seat)
        if new is not self.record:
            await self._commit(new, "bot_move", seat, None, move, events)
        return {}

    async def _auto(self, command: Command) -> dict[str, Any]:
        record = self.record
        new, events = table.auto_step(record, self.game, time.time())
        if new is not record:
            await self._commit(new, "auto", None, None, None, events)
        elif record.deadline is not None:
            self._schedule()  # woken early (clock adjustments): wait again
        return {}

    # -- timers --------------------------------------------------------------------------------

    def _schedule(self) -> None:
        """Arm the one timer the room needs now: its automatic step, or a bot's turn."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        record = self.record
        if self._closed or record.status != PLAYING or record.state is None:
            return
        # The loop is asked for only when a timer is armed: on Python 3.11 that is a getpid()
        # system call, and most moves (a person's turn next) arm none.
        if record.deadline is not None:
            delay = max(0.0, record.deadline - time.time())
            self._timer = asyncio.get_running_loop().call_later(delay, self._post, "_auto")
            return
        for seat in self.game.to_act(record.state):
            if record.seats[seat].bot:
                self._timer = asyncio.get_running_loop().call_later(
                    self.config.bot_delay, self._post, "_bot_turn", {"seat": seat}
                )
                return

    def _check_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if not self.audience.viewers and self._timer is None and not self._closed:
            # A finished room only changes by a rematch or a chat line, which need a viewer: it
            # goes sooner (finished rooms nobody watches would be most of a busy server's memory).
            finished = self.record.status == FINISHED
            delay = self.config.finished_evict if finished else self.config.idle_evict
            self._idle = asyncio.get_running_loop().call_later(delay, self._on_idle, self)


#: What each kind of command does: a method of :class:`Room`, called with the room. One table
#: for every room: a table of bound methods made per room would be some two dozen more objects
#: per room for the cyclic collector to walk (docs/benchmarks.md, "Collector pauses").
_HANDLERS: Final[dict[str, Callable[[Room, Command], Awaitable[dict[str, Any]]]]] = {
    "join": Room._join,
    "sync": Room._sync,
    "leave": Room._leave,
    "ready": Room._ready,
    "start": Room._start,
    "bot": Room._add_bot,
    "chat": Room._chat,
    "move": Room._move,
    "rematch": Room._rematch,
    "detach": Room._detach,
    "resnapshot": Room._resnapshot,
    "_auto": Room._auto,
    "_bot_turn": Room._bot_turn,
}


def _is_store_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("redis")
