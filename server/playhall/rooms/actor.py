"""The room actor: one asyncio task per live room, the only code that changes that room.

Everything that changes a room (join, leave, ready, start, bot, move, automatic step, rematch)
is a :class:`Command` in the room's bounded inbox, handled one at a time. For each accepted
change the actor builds the new record, stores it in Redis (record, version, log entry, lobby
index — atomically, fenced by the room's lease), and only then replies and broadcasts. A crash
at any instant therefore loses nothing a client was told about.

Broadcasting: each viewer key (a seat, or ``None`` for spectators) gets its view computed once
per version, the diff from its previous view computed once, and the frame encoded once; every
session of that key receives the same bytes. Diffs are kept in a short history so a client that
reconnects with an old version catches up without a snapshot.

Overload policy: a full inbox refuses new commands with ``overloaded`` (the client may retry);
internal commands (timers, bots) are retried a little later instead of being dropped.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Protocol

import msgpack

from playhall import log
from playhall.config import Config
from playhall.games.contract import Applied, Event, Game, Rejected
from playhall.rooms import views
from playhall.rooms.history import FrameHistory
from playhall.rooms.ids import new_room_id
from playhall.rooms.inbox import Inbox
from playhall.rooms.record import FINISHED, PLAYING, WAITING, RoomRecord, Seat
from playhall.rooms.replay import STEPS, game_fields, played, step_entry
from playhall.store.outage import is_store_error, outcome_unknown
from playhall.store.redis_store import Commit, Fenced, Store, VersionConflict
from playhall_protocol import encode, errors, packed_diff
from playhall_protocol.codec import frame_head, pack

if TYPE_CHECKING:
    from playhall.lobby import Lobby

logger = log.get("playhall.room")

ViewerKey = int | None  # a seat, or None for spectators


class Viewer(Protocol):
    """What a room needs of a connection (implemented by :class:`playhall.net.session.Session`)."""

    player: str
    name: str

    def push(self, frame: bytes, room: str | None = None) -> None: ...

    def is_stale(self, room: str) -> bool: ...

    def clear_stale(self, room: str) -> None: ...


class RoomError(Exception):
    """A refused command; becomes an ``error`` reply."""

    def __init__(self, code: str, reason: str, **extra: Any) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.extra = extra


def no_such_room(room_id: str) -> RoomError:
    """The refusal for a room that does not exist, and for a private room to anyone without
    its code: the two must be indistinguishable."""
    return RoomError(errors.NO_SUCH_ROOM, f"no room {room_id!r}")


#: Told how a command ended: its result, or the error that refused it.
Done = Callable[[dict[str, Any] | None, RoomError | None], None]


class Command:
    """One change asked of a room. (A plain class, not a dataclass: one is made per move, and
    in the compiled build a dataclass's generated ``__init__`` stays interpreted.)"""

    __slots__ = ("kind", "session", "args", "request", "done")

    def __init__(
        self,
        kind: str,
        session: Viewer | None,
        args: dict[str, Any],
        request: int | None = None,
        done: Done | None = None,
    ) -> None:
        self.kind = kind
        self.session = session
        self.args = args
        self.request = request
        #: Told the outcome, in the actor's own pass of the loop (so a reply leaves with the
        #: updates it caused); None for internal commands, which nobody waits for.
        self.done = done

    def finish(self, result: dict[str, Any] | None, error: RoomError | None = None) -> None:
        if self.done is not None:
            done, self.done = self.done, None
            try:
                done(result, error)
            except Exception:  # the waiter's bug must not take the room's task down with it
                logger.exception("reply_failed", command=self.kind, req=self.request)


class _UpdateParts:
    """What the update frames of one version have in common, packed once for all its viewers:
    the head (type, room, versions) and the events, when the viewer may see all of them (then
    ``visible_events`` gives the version's own list). A frame is these bytes around the
    viewer's own diff, byte for byte what ``encode`` makes of the whole message."""

    __slots__ = ("head", "events", "all_events")

    def __init__(self, room: str, version: int, events: list[Event]) -> None:
        # encode's bytes of {"t": "update", "room": room, "from": .., "to": .., "diff": ..,
        # "events": ..} up to the diff's value, the constant runs packed once.
        self.head = b"".join(
            (_UPDATE_HEAD, pack(room), _FROM_KEY, pack(version - 1), _TO_KEY, pack(version),
             _DIFF_KEY)
        )
        self.events = events
        self.all_events: bytes | None = None  # packed when a viewer first needs it

    def frame(self, diff: bytes, key: ViewerKey) -> bytes:
        """The frame of a viewer whose diff, packed, is ``diff``."""
        visible = views.visible_events(self.events, key)
        if visible is self.events:
            if self.all_events is None:
                self.all_events = _EVENTS_KEY + pack(visible)
            tail = self.all_events
        else:  # some events are hidden from this viewer: its own list
            tail = _EVENTS_KEY + pack(visible)
        return b"".join((self.head, diff, tail))


_DIFF_KEY: Final = pack("diff")
_EVENTS_KEY: Final = pack("events")
#: An update is a map of six: t, room, from, to, diff, events (fewer than 16: a fixmap).
_UPDATE_HEAD: Final = frame_head({"t": "update"}, 5) + pack("room")
_FROM_KEY: Final = pack("from")
_TO_KEY: Final = pack("to")


@dataclass
class _ViewerState:
    seat: int | None
    version: int = -1  # the version of the last view this session was sent


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
        self.viewers: dict[Viewer, _ViewerState] = {}
        self._views: dict[ViewerKey, tuple[int, dict[str, Any]]] = {}
        # The frame sent to each viewer key, by version: replayed as is to a client catching
        # up. Encoded bytes, a few hundred per key, not diffs as Python objects (ten times that).
        self._history: FrameHistory[ViewerKey] = FrameHistory(config.history)
        self._away_since: dict[int, float] = {}
        # The keys of the viewers now, worked out again only when one comes or goes (None).
        self._viewer_keys: set[ViewerKey] | None = None
        # key -> (version, bytes) of the last snapshot encoded for it
        self._snapshot_size: dict[ViewerKey, tuple[int, int]] = {}
        self._last_presence: dict[str, Any] = {}
        # The lobby summary Redis holds for this room (None: not listed). A room starts
        # unlisted: a new one is stored unlisted, a loaded one lists itself again (_relist).
        self._listed: dict[str, Any] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        #: A change whose commit reply was lost, not yet known to be stored or not, and what
        #: adopts it if it was (see _settle).
        self._unsettled: tuple[RoomRecord, Callable[[], None]] | None = None
        self.log = logger.bind(room=record.id, game=record.game)
        self._debug = log.debug_enabled()

    # -- lifecycle -----------------------------------------------------------------------------

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

    async def submit(
        self, kind: str, session: Viewer | None, args: dict[str, Any], request: int | None = None
    ) -> dict[str, Any]:
        """Queue a command and wait for its reply; raises :class:`RoomError` when refused."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def done(result: dict[str, Any] | None, error: RoomError | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result or {})

        self._queue(Command(kind, session, args, request, done))
        return await future

    def offer(
        self,
        kind: str,
        session: Viewer | None,
        args: dict[str, Any],
        request: int | None,
        done: Done,
    ) -> None:
        """Queue a command whose outcome goes to ``done``; raises :class:`RoomError` at once
        when the room cannot take it (closing, or its inbox is full)."""
        self._queue(Command(kind, session, args, request, done))

    def _queue(self, command: Command) -> None:
        if self._closed:
            raise RoomError(errors.DRAINING, "the room is closing; reconnect to resume")
        if not self.inbox.put(command):
            raise RoomError(errors.OVERLOADED, "the room is busy; retry shortly")

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
                if self.record.private:
                    self._hide_from_outsiders(command)
                if self._unsettled is not None:
                    await self._settle()
                result = await handler(self, command)
            except RoomError as refusal:
                # (A name of its own: compiled, one name bound in two except clauses has the
                # first clause's type, and any other exception then fails the assignment.)
                command.finish(None, refusal)
                if refusal.code == errors.STORE_FAILED:
                    self._retry_later(command)
                continue
            except Fenced:
                self.log.warning("room_fenced", command=command.kind)
                lost = "this server no longer owns the room; reconnect"
                self._let_go(command, lost)
                continue
            except VersionConflict as conflict:
                # Redis holds another version than this process does: never serve that room
                # from memory again; it is loaded afresh (viewers get a snapshot).
                self.log.warning("room_out_of_date", command=command.kind, stored=str(conflict))
                self._let_go(command, "the room changed under this server; sync and retry")
                continue
            except Exception as exc:
                self._failed(command, exc)
                continue
            command.finish(result)
            self._check_idle()

    def _failed(self, command: Command, exc: Exception) -> None:
        """A command that raised: Redis failing (``store_failed``, counted in the outage
        log, tried again if the room posted it itself) or a bug (``internal``, logged with
        its traceback). Either way the change was not made."""
        if is_store_error(exc):
            self.store.outage.failed(exc, room=self.record.id, command=command.kind)
            command.finish(None, RoomError(errors.STORE_FAILED, "the change was not made"))
            self._retry_later(command)
            return
        self.log.exception(
            "room_command_failed",
            command=command.kind,
            player=getattr(command.session, "player", None),
            req=command.request,
        )
        command.finish(None, RoomError(errors.INTERNAL, "the change was not made"))

    def _let_go(self, command: Command, reason: str) -> None:
        """Refuse ``command`` and close the room: this process may no longer serve it from
        memory. The manager loads it again from Redis if anyone watches or it has work."""
        command.finish(None, RoomError(errors.STORE_FAILED, reason))
        self._closed = True
        self._on_idle(self)

    def _retry_later(self, command: Command) -> None:
        """An automatic step or a bot's turn that could not be stored is tried again shortly:
        nobody else would ask for it, and the room would stand still."""
        if command.done is None and command.kind in _SELF_DRIVEN:
            delay = min(1.0, self.config.lease_ms / 10_000)
            asyncio.get_running_loop().call_later(delay, self._post, command.kind, command.args)

    async def _settle(self) -> None:
        """Resolve a change whose commit reply was lost (the connection to Redis dropped after
        the script was sent): it may or may not have been stored. Redis says which: its
        version is the new one (stored: adopt and broadcast it, as if the reply had come) or
        still the old one (not stored). This process's lease token still being there proves
        nobody else wrote the room meanwhile. Raises :class:`RoomError` (``store_failed``,
        outcome unknown) while Redis cannot be asked; the room then answers nothing from
        memory until it can."""
        assert self._unsettled is not None
        new, adopt = self._unsettled
        try:
            version, token = await asyncio.wait_for(
                self.store.version_and_lease(self.record.id), _SETTLE_TIMEOUT
            )
        except Exception as exc:
            if not (is_store_error(exc) or isinstance(exc, TimeoutError)):
                raise
            self.store.outage.failed(exc, room=self.record.id, during="settling a commit")
            raise RoomError(errors.STORE_FAILED, _OUTCOME_UNKNOWN) from None
        self._unsettled = None
        if token != self.lease:
            raise Fenced(f"lease now {token!r}")
        if version == new.version:
            self.log.info("commit_settled", version=version, stored=True)
            adopt()
        elif version != self.record.version:
            raise VersionConflict(f"VERSION {version}")
        else:
            self.log.info("commit_settled", version=version, stored=False)

    def _hide_from_outsiders(self, command: Command) -> None:
        """A private room does not exist for anyone outside it: neither seated in it nor
        viewing it (after a ``join`` with its code). Every request of theirs is answered
        exactly as one about a room that does not exist, so nothing (the room's existence, its
        status, who created it) can be learnt without the code."""
        session = command.session
        if (
            session is None
            or command.kind in _OPEN_TO_OUTSIDERS
            or session in self.viewers
            or self.record.seat_of(session.player) is not None
        ):
            return
        raise no_such_room(self.record.id)

    # -- storing a change ----------------------------------------------------------------------

    async def _commit(
        self,
        new: RoomRecord,
        kind: str,
        seat: int | None = None,
        player: str | None = None,
        move: Any = None,
        events: list[Event] | None = None,
        mid: Any = None,
    ) -> None:
        """Store ``new`` (whose version is the current one + 1), then adopt and broadcast it.

        A game step (``kind`` in ``STEPS``) that leaves the status as it was is stored as its
        log entry only, unless ``checkpoint_every`` steps have passed since the record was
        last stored whole: loading the room replays the steps since (see ``replay``)."""
        old = self.record
        # The lobby lists public rooms with people in them, until they finish. Most changes (every
        # move) leave the summary as it was: then neither Redis nor lobby watchers hear of it.
        # It follows from the seats and the status only (the rest never changes).
        seats_changed = new.seats is not old.seats
        previous = self._listed
        if seats_changed or new.status != old.status:
            summary = self._lobby_entry(new)
        else:
            summary = previous
        # (A dict compares entry by entry even with itself: the identity test spares every move.)
        lobby_changed = summary is not previous and summary != previous
        unlist = summary is None and previous is not None
        checkpoint = (
            kind not in STEPS
            or new.status != old.status
            or new.version - self._checkpoint >= self.config.checkpoint_every
        )
        change = Commit(
            room=new.id,
            lease=self.lease,
            prev_version=old.version,
            version=new.version,
            record=new.pack() if checkpoint else b"",
            log=step_entry(new, kind, seat, player, move, mid),
            lobby=msgpack.packb(summary) if summary is not None and lobby_changed else None,
            unlist=unlist,
            active=_needs_server(new, self.game),
            expire=self.config.finished_ttl if new.status == FINISHED else 0,
            code=new.code,
            game=new.game,
            order=_lobby_order(summary if not unlist else previous) if lobby_changed else "",
        )
        reply_lost = False
        try:
            await self.store.commit(change)
        except Exception as exc:
            if not outcome_unknown(exc):
                raise
            reply_lost = True
        # (Settled outside the except block: a compiled coroutine that awaits while handling an
        # exception can leave that exception to surface in another task.)
        if reply_lost:
            self._unsettled = (
                new,
                lambda: self._adopt(new, kind, seat, player, events, checkpoint, summary),
            )
            await self._settle()
            if self.record is not new:
                raise RoomError(errors.STORE_FAILED, "the change was not made")
            return
        self._adopt(new, kind, seat, player, events, checkpoint, summary)

    def _adopt(
        self,
        new: RoomRecord,
        kind: str,
        seat: int | None,
        player: str | None,
        events: list[Event] | None,
        checkpoint: bool,
        summary: dict[str, Any] | None,
    ) -> None:
        """Make ``new``, stored, the room's record, and tell everyone."""
        old = self.record
        seats_changed = new.seats is not old.seats
        lobby_changed = summary is not self._listed and summary != self._listed
        self.record = new
        if checkpoint:
            self._checkpoint = new.version
        self._listed = summary
        if self._debug:
            self.log.debug("committed", kind=kind, seat=seat, player=player, version=new.version)
        if lobby_changed:
            self.lobby.changed(new.id, summary, new.game)
        self._broadcast(events or [])
        if seats_changed:  # a seat taken, left or given to a bot; viewers coming and going
            self._push_presence()  # push presence themselves
        self._schedule()

    def _lobby_entry(self, record: RoomRecord) -> dict[str, Any] | None:
        listed = (
            not record.private
            and record.status != FINISHED
            and any(s.taken and not s.bot for s in record.seats)
        )
        return views.lobby_summary(record, self.game.title) if listed else None

    async def _relist(self, command: Command) -> dict[str, Any]:
        """List the room again as it is now (the first command of a room loaded from Redis:
        an evicted room left the listing)."""
        await self._write_listing(self._lobby_entry(self.record))
        return {}

    async def unlist(self) -> None:
        """Leave the listing, once the room's task has stopped (it is evicted: nobody viewed
        it for idle_evict, or the process is draining). A waiting room whose people all went
        away does not stay listed; loading it again lists it again."""
        if self._listed is not None:
            await self._write_listing(None)

    async def _write_listing(self, summary: dict[str, Any] | None) -> None:
        entry = summary if summary is not None else views.lobby_summary(self.record, "")
        written = await self.store.set_listing(
            self.record.id,
            self.record.game,
            self.lease,
            msgpack.packb(summary) if summary is not None else None,
            views.lobby_order(entry),
        )
        if written and summary != self._listed:
            self.lobby.changed(self.record.id, summary, self.record.game)
        self._listed = summary

    def relist(self) -> None:
        """Queue :meth:`_relist` (a room just loaded: before any client's command)."""
        self._post("_relist")

    def needs_server(self) -> bool:
        """Whether the room has work to do with no client asking (timers, bots)."""
        return _needs_server(self.record, self.game)

    # -- views and broadcast -------------------------------------------------------------------

    def _view(self, key: ViewerKey) -> dict[str, Any]:
        version = self.record.version
        cached = self._views.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        view = views.room_view(self.record, self.game, key)
        self._views[key] = (version, view)
        return view

    def _live_keys(self) -> set[ViewerKey]:
        """Keys whose views are kept up to date: watched ones, and seats whose player dropped
        recently (so their reconnect is a short diff, not a snapshot). Asked on every move: while
        nobody is away, that is the viewers' keys as last worked out."""
        keys = self._viewer_keys
        if keys is None:
            keys = self._viewer_keys = {v.seat for v in self.viewers.values()}
        if not self._away_since:
            return keys
        keys = set(keys)
        now = time.monotonic()
        for seat, since in list(self._away_since.items()):
            if now - since <= self.config.away_grace:
                keys.add(seat)
            else:
                del self._away_since[seat]
        return keys

    def _broadcast(self, events: list[Event]) -> None:
        """Send this version to every viewer: the update frame of its key (encoded once per
        key), or a snapshot if it was not at the previous version. The frames are kept as they
        were sent: a client catching up later gets exactly those bytes again."""
        version = self.record.version
        frames: dict[ViewerKey, bytes] = {}
        shared: dict[Any, Any] = {}  # what the views share is diffed once (see packed_diff)
        parts: _UpdateParts | None = None  # and what their frames share is packed once
        for key in self._live_keys():
            previous = self._views.get(key)
            new_view = self._view(key)
            if previous is not None and previous[0] == version - 1:
                diff = packed_diff(previous[1], new_view, shared)
                if parts is None:
                    parts = _UpdateParts(self.record.id, version, events)
                frame = parts.frame(diff, key)
                frames[key] = self._update_or_snapshot(key, version, frame, events)
        self._history.record(version, frames)
        for session, state in self.viewers.items():
            if session.is_stale(self.record.id):
                continue  # its outbox overflowed; it gets a snapshot once it drains
            if state.version == version - 1 and state.seat in frames:
                session.push(frames[state.seat], self.record.id)
            else:
                session.push(self._snapshot_frame(state.seat, events), self.record.id)
            state.version = version

    def _update_or_snapshot(
        self, key: ViewerKey, version: int, frame: bytes, events: list[Event]
    ) -> bytes:
        """``frame``, the key's update, or its snapshot if that is no larger."""
        # A diff never costs more than the snapshot it replaces. Encoding the snapshot to
        # compare costs as much as the diff saves, so it is done only when the diff is not
        # clearly smaller than the snapshot this key was last measured at, or that measure is
        # 16 versions old (views change size slowly; the margin and re-measuring cover it).
        measured = self._snapshot_size.get(key)
        if measured is not None and version - measured[0] < 16:
            if len(frame) * 4 < measured[1] * 3:
                return frame
        snapshot = self._snapshot_frame(key, events)
        return snapshot if len(snapshot) <= len(frame) else frame

    def _snapshot_frame(self, key: ViewerKey, events: list[Event] | None = None) -> bytes:
        frame = encode(
            {
                "t": "snapshot",
                "room": self.record.id,
                "version": self.record.version,
                "view": self._view(key),
                "presence": self._presence(),
                "events": views.visible_events(events or [], key),
            }
        )
        self._snapshot_size[key] = (self.record.version, len(frame))
        return frame

    def _presence(self) -> list[bool]:
        online = {self.record.seat_of(v.player) for v in self.viewers}
        return [seat.bot or index in online for index, seat in enumerate(self.record.seats)]

    def _push_all(self, message: dict[str, Any]) -> None:
        frame = encode(message)
        for session in self.viewers:
            session.push(frame)

    def _presence_push(self) -> dict[str, Any]:
        """Who is here: each seat's presence, and how many people watch without a seat."""
        watching = {v.player for v in self.viewers if self.record.seat_of(v.player) is None}
        return {"t": "presence", "room": self.record.id, "presence": self._presence(),
                "watching": len(watching)}

    def _push_presence(self) -> None:
        """Tell every viewer who is here, when that changed (a player came or went, a seat was
        taken or given to a bot, a spectator came or went)."""
        message = self._presence_push()
        if message != self._last_presence:
            self._last_presence = message
            self._push_all(message)

    def _attach(self, session: Viewer, seat: int | None) -> None:
        self.viewers[session] = _ViewerState(seat)
        self._viewer_keys = None
        if seat is not None:
            self._away_since.pop(seat, None)
        self._push_presence()

    def _send_snapshot(self, session: Viewer) -> None:
        state = self.viewers[session]
        session.clear_stale(self.record.id)
        session.push(self._snapshot_frame(state.seat), self.record.id)
        state.version = self.record.version

    # -- commands from clients -------------------------------------------------------------------

    def _require_viewer(self, command: Command) -> Viewer:
        assert command.session is not None
        return command.session

    async def _join(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        record = self.record
        if (
            record.private
            and record.seat_of(session.player) is None
            and command.args.get("code") != record.code
        ):
            raise no_such_room(record.id)
        seat = record.seat_of(session.player)
        wanted = command.args.get("seat")
        if command.args.get("watch"):
            seat = None
        elif seat is not None:
            if wanted is not None and wanted != seat:
                raise RoomError(errors.SEAT_TAKEN, f"you already hold seat {seat}")
        elif wanted is not None or record.status == WAITING:
            seat = await self._take_seat(session, wanted)
        self._attach(session, seat)
        self._send_snapshot(session)
        return {
            "room": record.id,
            "seat": seat,
            "version": self.record.version,
            "chat": await self._chat_history(),
        }

    async def _take_seat(self, session: Viewer, wanted: int | None) -> int | None:
        record = self.record
        if record.status != WAITING:
            raise RoomError(errors.WRONG_STATUS, "seats can only be taken before the game starts")
        free = [i for i, s in enumerate(record.seats) if not s.taken]
        if wanted is None:
            if not free:
                return None  # a full room: watch instead
            wanted = free[0]
        if not 0 <= wanted < len(record.seats):
            raise RoomError(errors.NO_SUCH_SEAT, f"seats are numbered 0 to {len(record.seats) - 1}")
        if wanted not in free:
            raise RoomError(errors.SEAT_TAKEN, f"seat {wanted} is taken")
        new = record.evolve(seats=record.with_seat(wanted, Seat(session.player, session.name)))
        await self.store.add_player_room(session.player, record.id)
        events: list[Event] = [{"type": "joined", "seat": wanted, "name": session.name}]
        if self._single_seat(new):
            new, events = self._started(new, events)
        await self._commit(new, "join", wanted, session.player, events=events)
        return wanted

    def _single_seat(self, record: RoomRecord) -> bool:
        """Solo rooms (one seat) start as soon as the seat is taken."""
        return len(record.seats) == 1 and record.seats[0].taken and record.status == WAITING

    async def _sync(self, command: Command) -> dict[str, Any]:
        """Attach (again) and catch up from ``version``: missed diffs if history has them all,
        else a snapshot."""
        session = self._require_viewer(command)
        seat = self.record.seat_of(session.player)
        have = command.args.get("version")
        self._attach(session, seat)
        current = self.record.version
        replay = self._history.since(seat, have, current) if isinstance(have, int) else None
        session.clear_stale(self.record.id)
        if replay is None:
            self._send_snapshot(session)
        else:
            for frame in replay:
                session.push(frame, self.record.id)
            self.viewers[session].version = current
            # Frames carry no presence; who is here now may differ from then.
            session.push(encode(self._presence_push()))
        return {
            "room": self.record.id,
            "seat": seat,
            "version": current,
            "caught_up": "snapshot" if replay is None else "diffs",
        }

    async def _resnapshot(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        if session in self.viewers:
            self._send_snapshot(session)
        return {}

    async def _detach(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        state = self.viewers.pop(session, None)
        if state is not None:
            self._viewer_keys = None
            if state.seat is not None and all(v.seat != state.seat for v in self.viewers.values()):
                self._away_since[state.seat] = time.monotonic()
            self._push_presence()
        return {}

    async def _leave(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        seat = self.record.seat_of(session.player)
        if seat is not None and self.record.status == WAITING:
            seats = self.record.with_seat(seat, Seat())
            # Someone leaving changes the table: earlier "ready"s no longer stand.
            seats = tuple(Seat(s.player, s.name, s.bot, s.bot) for s in seats)
            await self.store.remove_player_room(session.player, self.record.id)
            await self._commit(
                self.record.evolve(seats=seats),
                "leave",
                seat,
                session.player,
                events=[{"type": "left", "seat": seat, "name": session.name}],
            )
        await self._detach(command)
        return {"room": self.record.id}

    def _seated(self, session: Viewer) -> int:
        seat = self.record.seat_of(session.player)
        if seat is None:
            raise RoomError(errors.NOT_SEATED, "you hold no seat in this room")
        return seat

    def _waiting(self) -> None:
        if self.record.status != WAITING:
            raise RoomError(errors.WRONG_STATUS, f"the room is {self.record.status}")

    async def _ready(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        seat = self._seated(session)
        self._waiting()
        ready = bool(command.args.get("ready", True))
        old = self.record.seats[seat]
        new = self.record.evolve(
            seats=self.record.with_seat(seat, Seat(old.player, old.name, old.bot, ready))
        )
        events: list[Event] = [{"type": "ready", "seat": seat, "ready": ready}]
        if all(s.taken and s.ready for s in new.seats):
            new, events = self._started(new, events)
        await self._commit(new, "ready", seat, session.player, events=events)
        return {"room": self.record.id, "status": self.record.status}

    async def _start(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        self._waiting()
        if session.player != self.record.creator:
            raise RoomError(errors.NOT_CREATOR, "only the room's creator can start it early")
        empty = [i for i, s in enumerate(self.record.seats) if not s.taken]
        if empty:
            raise RoomError(errors.NOT_READY, f"seats {empty} are empty; fill them or add bots")
        new, events = self._started(self.record.evolve(), [])
        await self._commit(new, "start", None, session.player, events=events)
        return {"room": self.record.id, "status": self.record.status}

    def _started(self, record: RoomRecord, events: list[Event]) -> tuple[RoomRecord, list[Event]]:
        """``record`` (already evolved) with the game set up and running."""
        state = self.game.setup(len(record.seats), record.options, record.seed)
        return replace(record, **game_fields(self.game, state)), [*events, {"type": "started"}]

    async def _add_bot(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        if session.player != self.record.creator:
            self._seated(session)  # seated players and the creator may seat bots
        self._waiting()
        seat = command.args["seat"]
        if not 0 <= seat < len(self.record.seats):
            raise RoomError(
                errors.NO_SUCH_SEAT, f"seats are numbered 0 to {len(self.record.seats) - 1}"
            )
        if self.record.seats[seat].taken:
            raise RoomError(errors.SEAT_TAKEN, f"seat {seat} is taken")
        bots = sum(1 for s in self.record.seats if s.bot)
        new = self.record.evolve(
            seats=self.record.with_seat(seat, Seat(None, f"Bot {bots + 1}", bot=True, ready=True))
        )
        events: list[Event] = [{"type": "bot_added", "seat": seat}]
        if all(s.taken and s.ready for s in new.seats):
            new, events = self._started(new, events)
        await self._commit(new, "bot", seat, session.player, events=events)
        return {"room": self.record.id, "seat": seat}

    async def _chat(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        if session not in self.viewers:
            raise RoomError(errors.NOT_IN_ROOM, "join or watch the room to chat in it")
        text = command.args["text"].strip()
        if not text:
            raise RoomError(errors.BAD_MESSAGE, "empty chat line")
        line = {
            "t": "chat",
            "room": self.record.id,
            "player": session.player,
            "name": session.name,
            "seat": self.record.seat_of(session.player),
            "text": text,
            "at": time.time(),
        }
        await self.store.add_chat(self.record.id, msgpack.packb(line))
        self._push_all(line)
        return {}

    async def _chat_history(self) -> list[dict[str, Any]]:
        return [msgpack.unpackb(b) for b in await self.store.chat(self.record.id)]

    async def _rematch(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        self._seated(session)
        if self.record.status != FINISHED:
            raise RoomError(errors.WRONG_STATUS, "a rematch needs a finished game")
        if self.record.rematch is None:
            old = self.record
            new_id = new_room_id()
            seats = tuple(Seat(s.player, s.name, s.bot, s.bot) for s in old.seats)
            rematch = RoomRecord(
                id=new_id,
                game=old.game,
                options=old.options,
                seats=seats,
                seed=new_seed(),
                creator=old.creator,
                private=old.private,
                code=await self.store.claim_code(new_id) if old.private else None,
                rematch_of=old.id,
                created=time.time(),
            )
            if len(seats) == 1:  # a solo room starts at once, its rematch too
                state = self.game.setup(1, rematch.options, rematch.seed)
                rematch = replace(rematch, **game_fields(self.game, state))
            await self._create_room(rematch)
            await self._commit(
                old.evolve(rematch=new_id),
                "rematch",
                old.seat_of(session.player),
                session.player,
                events=[{"type": "rematch", "room": new_id}],
            )
        return {"room": self.record.rematch}

    # -- moves, bots and automatic steps ---------------------------------------------------------

    async def _move(self, command: Command) -> dict[str, Any]:
        session = self._require_viewer(command)
        args = command.args
        player = session.player
        seat = self._seated(session)
        earlier = self.record.seen_version(player, args["mid"])
        if earlier is not None:
            # The same move sent again (a retry after a lost reply): same answer, applied once.
            return {"room": self.record.id, "version": earlier}
        if self.record.status != PLAYING or self.record.state is None:
            code = errors.GAME_OVER if self.record.status == FINISHED else errors.WRONG_STATUS
            raise RoomError(code, f"the room is {self.record.status}", version=self.record.version)
        if args["version"] != self.record.version:
            raise RoomError(
                errors.STALE,
                f"the room is at version {self.record.version}",
                version=self.record.version,
            )
        applied = self._apply(seat, args["move"])
        version = self.record.version + 1
        seen = self.record.remember(player, args["mid"], version)
        new = played(self.record, self.game, applied, seen)
        await self._commit(new, "move", seat, player, args["move"], applied.events, args["mid"])
        return {"room": self.record.id, "version": version}

    def _apply(self, seat: int, move: dict[str, Any]) -> Applied:
        assert self.record.state is not None
        try:
            return self.game.apply(self.record.state, seat, move)
        except Rejected as exc:
            raise RoomError(exc.code, exc.reason, version=self.record.version) from None

    async def _bot_turn(self, command: Command) -> dict[str, Any]:
        record = self.record
        seat = command.args["seat"]
        if (
            record.status != PLAYING
            or record.state is None
            or not record.seats[seat].bot
            or seat not in self.game.to_act(record.state)
        ):
            return {}  # the game moved on since this was scheduled
        moves = self.game.legal_moves(record.state, seat)
        view = self.game.view(record.state, seat)
        move = self.game.bot_move(view, seat, moves, (record.seed + record.version) & (2**63 - 1))
        applied = self._apply(seat, move)
        await self._commit(
            played(record, self.game, applied),
            "bot_move",
            seat,
            None,
            move,
            applied.events,
        )
        return {}

    async def _auto(self, command: Command) -> dict[str, Any]:
        record = self.record
        if record.status != PLAYING or record.state is None or record.deadline is None:
            return {}
        if time.time() < record.deadline:
            self._schedule()  # woken early (clock adjustments): wait again
            return {}
        applied = self.game.apply_auto(record.state)
        await self._commit(
            played(record, self.game, applied),
            "auto",
            None,
            None,
            None,
            applied.events,
        )
        return {}

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
        if not self.viewers and self._timer is None and not self._closed:
            # A finished room only changes by a rematch or a chat line, which need a viewer;
            # kept for idle_evict, the finished rooms of a busy server would be most of its
            # memory (about half of each is frame history) and of what its collector walks.
            delay = (
                self.config.finished_evict
                if self.record.status == FINISHED
                else self.config.idle_evict
            )
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
    "_relist": Room._relist,
}


#: What a private room takes from anyone outside it: ``join`` (which checks the code itself)
#: and the connection's own bookkeeping.
_OPEN_TO_OUTSIDERS: Final = frozenset({"join", "detach", "resnapshot"})


def _lobby_order(summary: dict[str, Any] | None) -> str:
    return views.lobby_order(summary) if summary is not None else ""


def _needs_server(record: RoomRecord, game: Game) -> bool:
    """Whether a room must be loaded even if no client asks for it (after a restart, or after
    its lease was lost): an automatic step is due, or a bot is to move."""
    if record.status != PLAYING or record.state is None:
        return False
    if record.deadline is not None:
        return True
    return any(record.seats[s].bot for s in game.to_act(record.state))


_OUTCOME_UNKNOWN: Final = (
    "Redis did not answer whether the change was stored; retry the same request (a move's"
    " mid makes that safe)"
)

#: Seconds the room waits for Redis to say whether a change was stored, before it answers
#: that the outcome is unknown (the room's other commands wait behind it).
_SETTLE_TIMEOUT: Final = 2.0

#: Commands the room posts to itself (no client waits for them).
_SELF_DRIVEN: Final = frozenset({"_auto", "_bot_turn"})


def new_seed() -> int:
    return int.from_bytes(os.urandom(8), "big") >> 1
