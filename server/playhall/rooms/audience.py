"""Who watches a room, and what each of them is sent: viewers, their presence and the away
grace, the views of each viewer key, update frames (diff or snapshot) and the frame history a
reconnecting client catches up from.

Synchronous, and it never changes the room: the actor (:mod:`playhall.rooms.actor`) hands it
each record it stored, and it sends that version to everybody watching.

Broadcasting: each viewer key (a seat, or ``None`` for spectators) gets its view computed once
per version, the diff from its previous view computed once, and the frame encoded once; every
session of that key receives the same bytes. Diffs are kept in a short history so a client that
reconnects with an old version catches up without a snapshot.
"""

from __future__ import annotations

import time
from typing import Any, Final, Protocol

from playhall.config import Config
from playhall.games.contract import Event, Game
from playhall.rooms import spectators, views
from playhall.rooms.history import FrameHistory
from playhall.rooms.record import PLAYING, RoomRecord
from playhall.rooms.views import NO_MOVES
from playhall_protocol import encode, packed_diff
from playhall_protocol.codec import frame_head, pack

ViewerKey = int | None  # a seat, or None for spectators

#: How many spectators a ``presence`` push names (``watching`` counts them all).
WATCHERS_NAMED: Final = 20


class Viewer(Protocol):
    """What a room needs of a connection (implemented by :class:`playhall.net.session.Session`)."""

    #: The connection's id in the process that holds it.
    id: int
    player: str
    name: str
    #: The client address the connection counts against (rooms it makes are capped by it).
    address: str

    def push(self, frame: bytes, room: str | None = None) -> None: ...

    def is_stale(self, room: str) -> bool: ...

    def clear_stale(self, room: str) -> None: ...


class UpdateParts:
    """What the update frames of one version have in common, packed once for all its viewers:
    the head (type, room, versions) and the events, when the viewer may see all of them (then
    ``visible_events`` gives the version's own list). A frame is these bytes around the
    viewer's own diff, byte for byte what ``encode`` makes of the whole message."""

    __slots__ = ("head", "events", "marked", "all_events")

    def __init__(self, room: str, version: int, events: list[Event]) -> None:
        # encode's bytes of {"t": "update", "room": room, "from": .., "to": .., "diff": ..,
        # "events": ..} up to the diff's value, the constant runs packed once.
        self.head = b"".join(
            (_UPDATE_HEAD, pack(room), _FROM_KEY, pack(version - 1), _TO_KEY, pack(version),
             _DIFF_KEY)
        )
        self.events = events
        #: Some event is for some seats only (else every viewer sees the version's own list).
        self.marked = views.visible_events(events, None) is not events
        self.all_events: bytes | None = None  # packed when a viewer first needs it

    def public(self, key: ViewerKey) -> bool:
        """Whether ``key`` sees every event of the version (so its frame is the diff's alone)."""
        return not self.marked or views.visible_events(self.events, key) is self.events

    def frame(self, diff: bytes, key: ViewerKey) -> bytes:
        """The frame of a viewer whose diff, packed, is ``diff``."""
        visible = views.visible_events(self.events, key) if self.marked else self.events
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


#: A key's view as last computed: its version, the view, and the template it was copied from
#: (``ViewMemo.template``).
_Shown = tuple[int, dict[str, Any], dict[str, Any] | None]


def _alike(old: _Shown, new: _Shown) -> tuple[int, ...]:
    """What the change from ``old`` to ``new``, a key's views at two consecutive versions, is
    made of when the key has no moves at either (a spectator, a seat not being waited on):
    two such keys whose views hold the very same objects (the template their views were copied
    from, the join code, the game's view) make the same diff, as their ``you`` differs but never
    changes, and so the same update frame. Objects, not values: equal values built apart could
    be ordered otherwise, and their ops with them. By ``id``, which is safe within one
    broadcast: the previous views' parts all existed before it began, and the new ones are held
    by the new views, so two equal ids there are one object."""
    old_view, new_view = old[1], new[1]
    return (id(old[2]), id(new[2]), id(old_view["state"]), id(new_view["state"]),
            id(old_view["code"]), id(new_view["code"]))


class ViewerState:
    """A session watching the room: its seat, and the version of the last view it was sent."""

    __slots__ = ("seat", "version")

    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.version = -1


class Audience:
    def __init__(self, room: str, game: Game, config: Config) -> None:
        self.room = room
        self.game = game
        self.config = config
        self.viewers: dict[Viewer, ViewerState] = {}
        self._views: dict[ViewerKey, _Shown] = {}
        self._memo = views.ViewMemo()
        #: What spectators see under the room's ``spectator_delay`` (``rooms.spectators``).
        self._delay = spectators.SpectatorDelay()
        # The frame sent to each viewer key, by version: replayed as is to a client catching
        # up. Encoded bytes, a few hundred per key, not diffs as Python objects (ten times that).
        self._history: FrameHistory[ViewerKey] = FrameHistory(config.history)
        self._away_since: dict[int, float] = {}
        #: Seat -> when (Unix time) its player's last connection stopped viewing the room; a
        #: seat with no viewer and no entry has had none since the room was loaded.
        self.gone: dict[int, float] = {}
        #: When this process loaded the room: seats nobody has viewed since count as gone since.
        self.loaded = time.time()
        # The keys of the viewers now, worked out again only when one comes or goes (None).
        self._viewer_keys: set[ViewerKey] | None = None
        # key -> (version, bytes) of the last snapshot encoded for it
        self._snapshot_size: dict[ViewerKey, tuple[int, int]] = {}
        self._last_presence: dict[str, Any] = {}
        # The presence push :meth:`presence_moves` worked out, and the record it is of: the
        # :meth:`push_presence` of that record that follows (once the change is stored) sends
        # it rather than working it out again. Dropped whenever a viewer comes or goes.
        self._next_presence: tuple[RoomRecord, dict[str, Any]] | None = None
        #: The kinds of viewer whose frames may go before the change is stored, because what
        #: they are handed is published only once it is (see :meth:`broadcast`'s ``held``).
        self.early_kinds: tuple[type, ...] = ()
        # Whether a viewer is of those kinds, worked out again only when one comes or goes.
        self._early_here: bool | None = None

    # -- coming and going ----------------------------------------------------------------------

    def attach(self, record: RoomRecord, session: Viewer, seat: int | None) -> None:
        """``session`` watches the room from ``seat`` (None: as a spectator)."""
        self.viewers[session] = ViewerState(seat)
        self._viewer_keys = None
        self._next_presence = None
        self._early_here = None
        if seat is not None:
            self._away_since.pop(seat, None)
            self.gone.pop(seat, None)
        self.push_presence(record)

    def detach(self, record: RoomRecord, session: Viewer) -> None:
        """``session`` stops watching. A seat nobody watches any more is kept up to date for
        ``away_grace`` seconds, so its player's reconnect is a short catch-up."""
        state = self.viewers.pop(session, None)
        if state is None:
            return
        self._viewer_keys = None
        self._next_presence = None
        self._early_here = None
        if state.seat is not None and not self.watching(state.seat):
            self._away_since[state.seat] = time.monotonic()
            self.gone[state.seat] = time.time()
        self.push_presence(record)

    def watching(self, seat: int) -> bool:
        """Whether some connection views the room from ``seat``."""
        return seat in self.watched()

    def watched(self) -> set[ViewerKey]:
        """The seats (and None, for spectators) the room is viewed from now: asked after every
        change, so the set as last worked out when a viewer came or went."""
        keys = self._viewer_keys
        if keys is None:
            keys = self._viewer_keys = {v.seat for v in self.viewers.values()}
        return keys

    def presence(self, record: RoomRecord) -> list[bool]:
        online = {record.seat_of(v.player) for v in self.viewers}
        return [seat.bot or index in online for index, seat in enumerate(record.seats)]

    def presence_push(self, record: RoomRecord) -> dict[str, Any]:
        """Who is here: each seat's presence, how many people watch without a seat and the
        names of the first of them, and when the server's bot would stand in for each absent
        player (see :meth:`stand_in_at`)."""
        watchers: dict[str, str] = {}
        for viewer in self.viewers:
            if record.seat_of(viewer.player) is None:
                watchers.setdefault(viewer.player, viewer.name)
        present = self.presence(record)
        return {"t": "presence", "room": self.room, "presence": present,
                "watching": len(watchers), "watchers": sorted(watchers.values())[:WATCHERS_NAMED],
                "stand_in_at": self.stand_in_at(record, present)}

    def stand_in_at(self, record: RoomRecord, present: list[bool]) -> list[float | None]:
        """Per seat, the Unix time from which the server's bot stands in for its player while
        the game waits for them (``away_takeover`` seconds after their last connection went,
        or after the room was loaded here); None for an empty seat, a bot, a seat a stand-in
        already plays, a player who is here, a game not being played, or when the server never
        stands in."""
        limit = self.config.away_takeover
        if limit <= 0 or record.status != PLAYING:
            return [None] * len(record.seats)
        return [
            None
            if here or seat.player is None or seat.bot or seat.stand_in is not None
            else self.gone.get(index, self.loaded) + limit
            for index, (seat, here) in enumerate(zip(record.seats, present, strict=True))
        ]

    def presence_moves(self, record: RoomRecord) -> bool:
        """Whether :meth:`push_presence` of ``record`` would push anything (asked before
        ``record`` is stored; the push, once it is, reuses what was worked out here)."""
        message = self.presence_push(record)
        self._next_presence = (record, message)
        return message != self._last_presence

    def push_presence(self, record: RoomRecord) -> None:
        """Tell every viewer who is here, when that changed (a player came or went, a seat was
        taken or given to a bot, a spectator came or went)."""
        pending, self._next_presence = self._next_presence, None
        if pending is not None and pending[0] is record:
            message = pending[1]
        else:
            message = self.presence_push(record)
        if message != self._last_presence:
            self._last_presence = message
            self.push_all(message)

    def push_all(self, message: dict[str, Any]) -> None:
        frame = encode(message)
        for session in self.viewers:
            session.push(frame)

    # -- snapshots and catching up -------------------------------------------------------------

    def send_snapshot(self, record: RoomRecord, session: Viewer) -> None:
        state = self.viewers[session]
        session.clear_stale(self.room)
        session.push(self._snapshot_frame(record, state.seat), self.room)
        state.version = record.version

    def catch_up(self, record: RoomRecord, session: Viewer, have: Any) -> bool:
        """Bring an attached ``session`` that has version ``have`` to the record's: the frames
        it missed if the history holds them all (True), else a snapshot (False)."""
        state = self.viewers[session]
        current = record.version
        replay = self._history.since(state.seat, have, current) if isinstance(have, int) else None
        session.clear_stale(self.room)
        if replay is None:
            self.send_snapshot(record, session)
            return False
        for frame in replay:
            session.push(frame, self.room)
        state.version = current
        # Frames carry no presence; who is here now may differ from then.
        session.push(encode(self.presence_push(record)))
        return True

    # -- views and broadcast -------------------------------------------------------------------

    def view(self, record: RoomRecord, key: ViewerKey) -> dict[str, Any]:
        """The view of ``key`` at the record's version (computed once per version and key)."""
        version = record.version
        cached = self._views.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        if key is None and spectators.delayed(record):
            # The delayed view is no copy of this version's template: never alike another's.
            view, template = self._delay.view(record, self.game), None
        else:
            view = views.room_view(record, self.game, key, self._memo)
            template = self._memo.template
        self._views[key] = (version, view, template)
        return view

    def _live_keys(self) -> set[ViewerKey]:
        """Keys whose views are kept up to date: watched ones, and seats whose player dropped
        recently (so their reconnect is a short diff, not a snapshot). Asked on every move: while
        nobody is away, that is the viewers' keys as last worked out."""
        keys = self.watched()
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

    def has_early(self) -> bool:
        """Whether some viewer is of :attr:`early_kinds` (asked at every change)."""
        here = self._early_here
        if here is None:
            kinds = self.early_kinds
            here = self._early_here = bool(kinds) and any(
                isinstance(viewer, kinds) for viewer in self.viewers
            )
        return here

    def broadcast(
        self, record: RoomRecord, events: list[Event],
        held: list[tuple[Viewer, bytes]] | None = None,
    ) -> None:
        """Send ``record``'s version to every viewer: the update frame of its key (encoded once
        per key, and once for all the keys whose views changed alike: see :func:`_alike`), or a
        snapshot if it was not at the previous version. The frames are kept as they were sent:
        a client catching up later gets exactly those bytes again.

        With ``held``, ``record`` is not stored yet: only viewers of :attr:`early_kinds` are
        handed their frames now, the others' go into ``held`` for :meth:`deliver` once it is
        stored, or are dropped with :meth:`forget` if it is not."""
        version = record.version
        # The events spectators see with this version: ``events`` itself unless delayed.
        watched = self._delay.note(record, events)
        frames: dict[ViewerKey, bytes] = {}
        shared: dict[Any, Any] = {}  # what the views share is diffed once (see packed_diff)
        parts: UpdateParts | None = None  # and what their frames share is packed once
        alike: dict[tuple[int, ...], bytes] = {}  # the update of each kind of idle key
        none = NO_MOVES  # (a local: compiled, a module's global is a dict lookup each time)
        keys = self._live_keys()
        # Sharing takes two idle keys, and a key with moves is never idle: with two keys (a
        # duel, where the turn passes at every move) it is not looked for at all.
        share = len(keys) > 2
        for key in keys:
            previous = self._views.get(key)
            new_view = self.view(record, key)
            if previous is not None and previous[0] == version - 1:
                if parts is None:
                    parts = UpdateParts(self.room, version, events)
                seen = watched if key is None else events
                # (Tested here, not in _alike: a key with moves pays a lookup or two for it.)
                kind = (
                    _alike(previous, self._views[key])
                    if share and new_view["moves"] is none and previous[1]["moves"] is none
                    and seen is events and parts.public(key)
                    else None
                )
                frame = alike.get(kind) if kind is not None else None
                if frame is None:
                    diff = packed_diff(previous[1], new_view, shared)
                    if seen is events:
                        update = parts.frame(diff, key)
                    else:  # spectators under a delay: another version's events
                        update = UpdateParts(self.room, version, seen).frame(diff, key)
                    frame = self._update_or_snapshot(record, key, update, seen)
                    if kind is not None and frame is update:
                        alike[kind] = frame
                frames[key] = frame
        self._history.record(version, frames)
        kinds = self.early_kinds  # (asked only with held)
        for session, state in self.viewers.items():
            if session.is_stale(self.room):
                continue  # its outbox overflowed; it gets a snapshot once it drains
            if state.version == version - 1 and state.seat in frames:
                frame = frames[state.seat]
            else:
                seen = watched if state.seat is None else events
                frame = self._snapshot_frame(record, state.seat, seen)
            if held is not None and not isinstance(session, kinds):
                held.append((session, frame))
            else:
                session.push(frame, self.room)
            state.version = version

    def deliver(self, held: list[tuple[Viewer, bytes]]) -> None:
        """Hand the frames :meth:`broadcast` held to their viewers: the change is stored."""
        for session, frame in held:
            session.push(frame, self.room)

    def forget(self) -> None:
        """The change a broadcast with ``held`` sent was not stored: forget the views and
        frames made for it, so every viewer gets a snapshot of the next version stored (and
        the presence push worked out for it, which no push will send)."""
        self._views.clear()
        self._history = FrameHistory(self.config.history)
        self._next_presence = None
        for state in self.viewers.values():
            state.version = -1

    def _update_or_snapshot(
        self, record: RoomRecord, key: ViewerKey, frame: bytes, events: list[Event]
    ) -> bytes:
        """``frame``, the key's update, or its snapshot if that is no larger."""
        # A diff never costs more than the snapshot it replaces. Encoding the snapshot to
        # compare costs as much as the diff saves, so it is done only when the diff is not
        # clearly smaller than the snapshot this key was last measured at, or that measure is
        # 16 versions old (views change size slowly; the margin and re-measuring cover it).
        measured = self._snapshot_size.get(key)
        if measured is not None and record.version - measured[0] < 16:
            if len(frame) * 4 < measured[1] * 3:
                return frame
        snapshot = self._snapshot_frame(record, key, events)
        return snapshot if len(snapshot) <= len(frame) else frame

    def _snapshot_frame(
        self, record: RoomRecord, key: ViewerKey, events: list[Event] | None = None
    ) -> bytes:
        frame = encode(
            {
                "t": "snapshot",
                "room": self.room,
                "version": record.version,
                "view": self.view(record, key),
                "presence": self.presence(record),
                "events": views.visible_events(events or [], key),
            }
        )
        self._snapshot_size[key] = (record.version, len(frame))
        return frame
