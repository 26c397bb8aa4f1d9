"""The Python client: one connection to a Playhall server, its requests, and a local mirror of
each room's view kept by applying the server's diffs.

The client knows no game rules. It keeps, per room, the view and its version; an ``update``
whose ``from`` is not the mirror's version means something was missed, and the client asks for a
``sync`` (the server answers with the missed diffs or a snapshot).

If the connection drops, or the server restarts (close code 1012), the client reconnects with
its token, re-syncs every room it had, and retries requests that were in flight. A move keeps
its move id across the retry, so the server applies it at most once and answers it again if it
had already applied it. A reconnect's ``hello`` refused for a while (Redis away, too many new
players from one address) is said again on the same connection after a pause; one refused for
good (``bad_token``) ends the reconnecting (``reconnect_error``). The push queue also gets
notices of the client's own (no server sends them): ``{"t": "connection", "state": "lost"}``
when the connection drops and reconnecting starts, ``{"t": "connection", "state":
"retrying", "code": ..., "reason": ...}`` each time a reconnect's hello is refused for a while,
``{"t": "connection", "state": "back"}`` once it is back and every room is re-synced.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import itertools
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from playhall_client.fair import Seen, verify_deal
from playhall_protocol import SUPPORTED_VERSIONS, apply_diff, decode, encode


class ServerError(Exception):
    """The server refused a request: ``code`` (see PROTOCOL.md), ``reason``, and the reply."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(f"{reply.get('code')}: {reply.get('reason')}")
        self.code: str = reply.get("code", "")
        self.reason: str = reply.get("reason", "")
        self.reply = reply


#: A host site's signed token, or a function giving a fresh one (plain or async).
HostToken = str | Callable[[], str] | Callable[[], Awaitable[str]]

#: Refusals of a hello that say nothing about the hello itself (PROTOCOL.md section 10).
HELLO_AGAIN = frozenset({"rate_limited", "store_failed", "internal"})

#: Refusals of a move (or of the client's own sync) that say nothing about it (its room's server
#: busy, restarting, or moving to another process): sent again, a move with its id (applied at
#: most once).
MOVE_AGAIN = frozenset({"store_failed", "overloaded", "draining"})

#: How often a move refused with one of :data:`MOVE_AGAIN` is sent again (about ten seconds).
MOVE_RETRIES = 8

#: Seconds between tries (reconnecting, a hello said again): the first, doubling to the last.
BACKOFF_FIRST = 0.05
BACKOFF_MAX = 2.0

#: A pause before trying again is spread by up to this share of it (as the browser library's):
#: every client of a server process that died or drains loses its connection at the same
#: instant, and clients refused together (Redis away) are refused at once; on one schedule they
#: would all come back at the same instants, in waves on the balancer and the servers.
JITTER = 0.2


def pause(backoff: float, retry_after: float = 0.0) -> float:
    """The pause before trying again: ``backoff`` times a factor between 1 - JITTER and
    1 + JITTER, and never less than the server's ``retry_after`` (spread upwards by up to
    JITTER: a server gives many clients the same one)."""
    return max(backoff * random.uniform(1 - JITTER, 1 + JITTER),
               retry_after * random.uniform(1, 1 + JITTER))


class ConnectionLost(Exception):
    """The connection dropped before the reply came, and reconnecting is off or failed."""


@dataclass
class RoomMirror:
    """The client's copy of one room's view."""

    room: str
    version: int = -1
    view: dict[str, Any] = field(default_factory=dict)
    presence: list[bool] = field(default_factory=list)
    #: People viewing the room without a seat, as the last ``presence`` push said, and the
    #: names of the first of them.
    watching: int = 0
    watchers: list[str] = field(default_factory=list)
    #: Per seat: the server time from which an absent player's stand-in is due, or None.
    stand_in_at: list[float | None] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Chat lines: the history given on join, then each line as it arrives.
    chat: list[dict[str, Any]] = field(default_factory=list)
    #: The join code this client came in with (or was given by ``create``): a spectator of a
    #: private room holds no seat, so a new connection's ``sync`` needs it.
    code: str | None = None
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    #: The commitment to the room's secret as first seen (hex), and the entropy this client
    #: gave with its last ``ready``: what :meth:`verify_deal` checks the revealed secret against.
    commitment: str | None = None
    entropy: bytes | None = None

    @property
    def seat(self) -> int | None:
        return self.view.get("you")

    @property
    def my_turn(self) -> bool:
        return self.seat is not None and self.seat in self.view.get("to_act", [])

    def verify_deal(self) -> bytes:
        """Check the finished game's revealed secret and this client's contribution
        (:func:`playhall_client.fair.verify_deal`); the room's key."""
        return verify_deal(self.view, seen_commitment=self.commitment, own=self.entropy)

    def seen(self) -> Seen:
        """What this client saw of the room apart from its record, for
        :func:`playhall_client.fair.verify_record`: the first commitment, its seat, the bytes it
        sent with ``ready``."""
        return Seen(self.commitment, self.seat, self.entropy)

    def note_commitment(self) -> None:
        """Keep the first commitment the view shows (called with every change)."""
        if self.commitment is None:
            fair = self.view.get("fair")
            if isinstance(fair, dict):
                self.commitment = fair.get("commitment")

    async def wait(self, predicate: Callable[[RoomMirror], bool], timeout: float = 10.0) -> None:
        """Wait until ``predicate(mirror)`` holds (checked after every change)."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation.
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: predicate(self))


def replay_views(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ``replay`` reply's frames with every ``view`` whole: the first carries it, each later
    one the ``diff`` from the view before it."""
    out: list[dict[str, Any]] = []
    view: Any = None
    for frame in frames:
        if "view" in frame:
            view = frame["view"]
        else:
            view = apply_diff(copy.deepcopy(view), frame["diff"])
        out.append({**{k: v for k, v in frame.items() if k != "diff"}, "view": view})
    return out


class Client:
    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        host_token: HostToken | None = None,
        reconnect: bool = True,
        max_frame: int = 4 * 1024 * 1024,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        #: The host site's signed token (PROTOCOL.md section 3), or a function that gets a
        #: fresh one, asked at every hello (a reconnect may come after the last one expired).
        #: With it, ``token`` is not sent: the site says who the player is.
        self.host_token = host_token
        self.player = ""
        self.reconnect = reconnect
        self.max_frame = max_frame
        self.rooms: dict[str, RoomMirror] = {}
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.welcome: dict[str, Any] = {}
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._online = asyncio.Event()
        self._closing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.reconnects = 0
        self._greeted_before = False
        self.reconnect_error: ServerError | None = None
        self._reconnecting = False  # one reconnect loop at a time, however many sockets close
        #: The server's clock minus this machine's, in seconds (``measure_clock_offset``).
        self.clock_offset = 0.0
        self._lost_told = False  # a "lost" notice is out and no "back" has followed it
        #: Called with every frame as it arrived, before it is decoded (to record a session).
        self.on_frame: Callable[[bytes | str], None] | None = None

    # -- connection ----------------------------------------------------------------------------

    @classmethod
    async def connect(cls, url: str, **kwargs: Any) -> Client:
        """Connect and say hello; a refused hello (``ServerError``) closes the socket again."""
        client = cls(url, **kwargs)
        try:
            await client._open()
        except BaseException:
            await client.close()
            raise
        return client

    async def _open(self) -> None:
        self._ws = await connect(
            self.url, max_size=self.max_frame, compression=None, open_timeout=10
        )
        self._reader = asyncio.create_task(self._read_forever(self._ws))
        self.welcome = await self._hello()
        self.player = self.welcome["player"]
        self.name = self.welcome["name"]
        self.token = self.welcome.get("token", self.token)
        if self._greeted_before:
            self.reconnects += 1  # counted before the re-syncs, whose snapshots may wake waiters
        self._greeted_before = True
        self._online.set()
        for mirror in list(self.rooms.values()):
            await self._resync(mirror)
        if self._lost_told:
            self._lost_told = False
            self.pushes.put_nowait({"t": "connection", "state": "back"})

    async def _fresh_host_token(self) -> str:
        token: object = self.host_token
        if callable(token):
            token = token()
            if inspect.isawaitable(token):
                token = await token
        if not isinstance(token, str):
            raise TypeError(f"host_token gave {type(token).__name__}, not a str")
        return token

    async def _hello(self) -> dict[str, Any]:
        """Say hello. A reconnect's hello refused for a while is said again on the same socket
        after a pause (at least the ``retry_after`` the server gave): giving up would leave the
        client offline for good over a Redis restart. A first connect's refusal goes to the
        caller, who may not want to wait."""
        hello: dict[str, Any] = {"protocol": list(SUPPORTED_VERSIONS)}
        if self.host_token is not None:
            hello["host_token"] = await self._fresh_host_token()
        elif self.token:
            hello["token"] = self.token
        # The name given is said by the first hello (and by a new player's): a reconnect's would
        # rename the player back, undoing a rename made since on another connection.
        if self.name and (not self._greeted_before or not self.token):
            hello["name"] = self.name
        delay = BACKOFF_FIRST
        while True:
            try:
                return await self._send("hello", hello)
            except ServerError as exc:
                if not self._greeted_before or exc.code not in HELLO_AGAIN or self._closing:
                    raise
                self.pushes.put_nowait(
                    {"t": "connection", "state": "retrying", "code": exc.code, "reason": exc.reason}
                )
                retry_after = exc.reply.get("retry_after")
                wait = float(retry_after) if isinstance(retry_after, (int, float)) else 0.0
                await asyncio.sleep(pause(delay, wait))
                delay = min(delay * 2, BACKOFF_MAX)

    @property
    def online(self) -> bool:
        """Connected and greeted (False while reconnecting)."""
        return self._online.is_set()

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _read_forever(self, ws: ClientConnection) -> None:
        close_code = None
        try:
            async for frame in ws:
                if self.on_frame is not None:
                    self.on_frame(frame)
                self._receive(decode(frame))
        except ConnectionClosed:
            pass
        finally:
            close_code = ws.close_code
            self._online.clear()
            if not self._closing and self.reconnect and not self._lost_told:
                # A client-side notice in the push queue (never sent by a server), so a UI can
                # say at once that the connection is gone and being re-established; once per
                # outage, however many attempts fail on the way back.
                self._lost_told = True
                self.pushes.put_nowait({"t": "connection", "state": "lost", "code": close_code})
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionLost(f"connection closed ({close_code})"))
            self._pending.clear()
        # A socket that closes while a reconnect loop is trying (it opened it) is that loop's
        # to replace: a second loop would open a second connection.
        if not self._closing and self.reconnect and not self._reconnecting:
            self._spawn(self._reconnect())

    async def _reconnect(self) -> None:
        self._reconnecting = True
        try:
            delay = BACKOFF_FIRST
            while not self._closing:
                try:
                    await self._open()
                    if self._reader is not None and not self._reader.done():
                        return  # from here the socket's reader starts the next reconnect
                    # Closed again while re-syncing: this loop goes on, as its reader did not.
                except ServerError as exc:
                    self.reconnect_error = exc  # e.g. our token refused: retrying cannot help
                    return
                except (OSError, InvalidHandshake, ConnectionClosed, ConnectionLost, TimeoutError):
                    pass  # down, or draining (503): back off and try again
                await asyncio.sleep(pause(delay))
                delay = min(delay * 2, BACKOFF_MAX)
        finally:
            self._reconnecting = False

    def _receive(self, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind in ("ok", "error") and message.get("re") in self._pending:
            future = self._pending.pop(message["re"])
            if not future.done():
                if kind == "ok":
                    future.set_result(message)
                else:
                    future.set_exception(ServerError(message))
            return
        if kind == "update":
            self._apply_update(message)
        elif kind == "snapshot":
            mirror = self._mirror(message["room"])
            mirror.view = message["view"]
            mirror.version = message["version"]
            mirror.presence = message.get("presence", [])
            mirror.events.extend(message.get("events", []))
            self._notify(mirror)
        elif kind == "chat" and message.get("room") in self.rooms:
            mirror = self.rooms[message["room"]]
            mirror.chat.append(message)
            self._notify(mirror)
        elif kind == "presence":
            mirror = self._mirror(message["room"])
            mirror.presence = message["presence"]
            mirror.watching = message.get("watching", mirror.watching)
            mirror.watchers = message.get("watchers", mirror.watchers)
            mirror.stand_in_at = message.get("stand_in_at", mirror.stand_in_at)
            self._notify(mirror)
        self.pushes.put_nowait(message)

    def _apply_update(self, message: dict[str, Any]) -> None:
        mirror = self._mirror(message["room"])
        if message["to"] <= mirror.version:
            return  # already have it (a replay overlapping a snapshot)
        if message["from"] != mirror.version:
            self._spawn(self._resync(mirror))
            return
        try:
            mirror.view = apply_diff(mirror.view, message["diff"])
        except ValueError:
            # apply_diff may have changed part of the view before failing: only a snapshot
            # can be trusted now, so forget the version and ask for one.
            mirror.version = -1
            self._spawn(self._resync(mirror))
            return
        mirror.version = message["to"]
        mirror.events.extend(message.get("events", []))
        self._notify(mirror)

    def _notify(self, mirror: RoomMirror) -> None:
        mirror.note_commitment()

        async def wake() -> None:
            async with mirror.changed:
                mirror.changed.notify_all()

        self._spawn(wake())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resync(self, mirror: RoomMirror) -> None:
        """Sync the mirror again: a refusal that says nothing about the sync (the room's
        server busy, restarting, or the room moving to another process) is asked again, as
        a move is (:data:`MOVE_AGAIN`); a lost connection's reconnect syncs by itself."""
        for attempt in itertools.count(1):
            try:
                await self._send("sync", self._sync_fields(mirror))
                return
            except ConnectionLost:
                return
            except ServerError as exc:
                if exc.code not in MOVE_AGAIN or attempt > MOVE_RETRIES or self._closing:
                    return
            await asyncio.sleep(min(0.1 * 2**attempt, BACKOFF_MAX))

    @staticmethod
    def _sync_fields(mirror: RoomMirror) -> dict[str, Any]:
        """A sync names the version the mirror has, if it has one (else it gets a snapshot),
        and, when watching without a seat, the join code the client came in with (a private
        room lets a spectator in again only with it)."""
        fields: dict[str, Any] = {"room": mirror.room}
        if mirror.version >= 0:
            fields["version"] = mirror.version
        if mirror.code is not None and mirror.seat is None:
            fields["code"] = mirror.code
        return fields

    def _mirror(self, room: str) -> RoomMirror:
        mirror = self.rooms.get(room)
        if mirror is None:
            mirror = self.rooms[room] = RoomMirror(room)
        return mirror

    # -- requests ------------------------------------------------------------------------------

    async def _send(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        if self._ws is None:
            raise ConnectionLost("not connected")
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        try:
            await self._ws.send(encode({"t": kind, "id": rid, **fields}))
        except ConnectionClosed as exc:
            self._pending.pop(rid, None)
            raise ConnectionLost(str(exc)) from None
        return await future

    async def request(self, kind: str, *, retry: bool = True, **fields: Any) -> dict[str, Any]:
        """Send a request and return the ``ok`` reply; raises :class:`ServerError` on refusal.

        With ``retry``, a request cut off by a dropped connection is sent again once the client
        has reconnected (safe for every request: moves carry their id)."""
        while True:
            try:
                return await self._send(kind, fields)
            except ConnectionLost:
                if not (retry and self.reconnect) or self._closing:
                    raise
                await asyncio.wait_for(self._online.wait(), 30)

    async def send_raw(self, frame: bytes | str) -> None:
        """Send bytes as they are (for tests of bad input)."""
        assert self._ws is not None
        await self._ws.send(frame)

    # -- lobby ---------------------------------------------------------------------------------

    async def games(self) -> list[dict[str, Any]]:
        return list((await self.request("games"))["games"])

    async def list_rooms(self, game: str | None = None) -> list[dict[str, Any]]:
        """The lobby's first page (see :meth:`lobby_page` for the others)."""
        return list((await self.lobby_page(game))["rooms"])

    async def lobby_page(
        self, game: str | None = None, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, Any]:
        """A page of the lobby: ``rooms`` and ``next`` (pass it as ``after`` for the next
        page; None after the last)."""
        fields: dict[str, Any] = {"game": game} if game else {}
        if limit is not None:
            fields["limit"] = limit
        if after is not None:
            fields["after"] = after
        return await self.request("rooms", **fields)

    async def my_rooms(self) -> list[dict[str, Any]]:
        """This player's rooms (seated in or created), private ones included, with whom each
        waits for (``my_rooms``)."""
        return list((await self.request("my_rooms"))["rooms"])

    async def watch_lobby(self, game: str | None = None) -> list[dict[str, Any]]:
        fields: dict[str, Any] = {"game": game} if game else {}
        return list((await self.request("lobby.watch", **fields))["rooms"])

    async def create(
        self,
        game: str,
        seats: int,
        *,
        options: dict[str, Any] | None = None,
        private: bool = False,
        sit: bool = True,
        rated: bool | None = None,
    ) -> RoomMirror:
        """Make a room (and sit in seat 0 unless ``sit`` is false); ``rated`` None leaves it to
        the server (public rooms rated, private ones not). When Redis did not say whether it
        was made, the client finds out (:meth:`_find_created`)."""
        extra: dict[str, Any] = {} if rated is None else {"rated": rated}
        try:
            reply = await self.request(
                "create", game=game, seats=seats, options=options or {}, private=private,
                sit=sit, **extra,
            )
        except ServerError as refused:
            reply = await self._find_created(refused, sit)
        mirror = self._mirror(reply["room"])
        mirror.code = reply["code"]
        await mirror.wait(lambda m: m.version >= reply["version"])
        return mirror

    async def _find_created(self, refused: ServerError, sit: bool) -> dict[str, Any]:
        """A ``create`` refused with an unknown outcome (``store_failed`` naming the ``room``,
        PROTOCOL.md section 10): a room that was made at all was made whole, its creator
        seated unless they asked ``sit: false``, so a ``join`` (watching, then) finds out.
        Made: the join's reply. Not made (``no_such_room``), or the join cannot tell either:
        the create's refusal is raised, whose ``room`` may be joined later (the next hello's
        ``rooms`` lists it if it was made)."""
        room = refused.reply.get("room")
        if refused.code != "store_failed" or not isinstance(room, str):
            raise refused
        fields: dict[str, Any] = {"room": room} if sit else {"room": room, "watch": True}
        try:
            joined = await self.request("join", retry=False, **fields)
        except (ServerError, ConnectionLost):
            raise refused from None
        self._mirror(room).chat = list(joined.get("chat", []))
        # A join's reply names no code: a private room's is in the refusal.
        return {**joined, "code": refused.reply.get("join_code")}

    async def join(
        self,
        room: str | None = None,
        *,
        code: str | None = None,
        seat: int | None = None,
        watch: bool = False,
    ) -> RoomMirror:
        fields: dict[str, Any] = {}
        if room is not None:
            fields["room"] = room
        if code is not None:
            fields["code"] = code
        if seat is not None:
            fields["seat"] = seat
        if watch:
            fields["watch"] = True
        reply = await self.request("join", **fields)
        mirror = self._mirror(reply["room"])
        mirror.chat = list(reply.get("chat", []))
        if code is not None:
            mirror.code = code
        await mirror.wait(lambda m: m.version >= reply["version"])
        return mirror

    async def seek(
        self,
        game: str,
        seats: tuple[int, int],
        *,
        options: dict[str, Any] | None = None,
        rating: tuple[int, int] | None = None,
        bots_after: int | None = None,
    ) -> RoomMirror:
        """Quick play: a seat at the best open public table of ``game`` with ``options`` and
        a seat count in ``seats`` (and, with ``rating``, players rated in that range), or a
        new table; seated and ready. With ``bots_after`` the table's empty seats go to bots
        that many seconds after it opened. Asking again returns the same seat until the game
        starts."""
        fields = _given(options=options, bots_after=bots_after)
        if rating is not None:
            fields["rating"] = list(rating)
        reply = await self.request("seek", game=game, seats=list(seats), **fields)
        mirror = self._mirror(reply["room"])
        await mirror.wait(lambda m: m.version >= reply["version"])
        return mirror

    async def cancel_seek(self) -> str | None:
        """Give up the seat a seek holds at a table that has not started; the room, if any."""
        room = (await self.request("cancel_seek")).get("room")
        if room is not None:
            self.rooms.pop(room, None)
        return room

    async def leave(self, room: str) -> None:
        await self.request("leave", room=room)
        self.rooms.pop(room, None)

    async def ready(
        self,
        room: str,
        ready: bool = True,
        *,
        entropy: bytes | None = None,
        contribute: bool = True,
    ) -> dict[str, Any]:
        """Say ready (or not). Being ready contributes ``entropy`` to the room's deal: 16 random
        bytes unless given, none with ``contribute=False`` (PROTOCOL.md, "Fair deals")."""
        fields: dict[str, Any] = {"room": room, "ready": ready}
        if ready and contribute:
            fields["entropy"] = secrets.token_bytes(16) if entropy is None else entropy
        reply = await self.request("ready", **fields)
        self._mirror(room).entropy = fields.get("entropy")
        return reply

    async def start(self, room: str) -> dict[str, Any]:
        return await self.request("start", room=room)

    async def add_bot(self, room: str, seat: int) -> dict[str, Any]:
        return await self.request("bot", room=room, seat=seat)

    async def chat(self, room: str, text: str) -> None:
        await self.request("chat", room=room, text=text)

    async def sync(self, room: str) -> dict[str, Any]:
        return await self.request("sync", **self._sync_fields(self._mirror(room)))

    async def history(self, room: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The events of the room's last versions that this player may see, oldest first:
        ``{"version": int, "events": [...]}`` each (``history``)."""
        fields: dict[str, Any] = {"room": room}
        if limit is not None:
            fields["limit"] = limit
        return list((await self.request("history", **fields))["log"])

    async def games_played(
        self, player: str | None = None, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, Any]:
        """A page of a player's finished games (this player's if ``player`` is None), newest
        first: ``games`` and ``next`` (pass it as ``after``; absent after the last page)."""
        fields = _given(player=player, limit=limit, after=after)
        return await self.request("games_played", **fields)

    async def profile(self, player: str | None = None) -> dict[str, Any]:
        """A player's name, ratings and counts per game and recent games (``profile``)."""
        return await self.request("profile", **_given(player=player))

    async def leaderboard(
        self, game: str, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, Any]:
        """A page of ``game``'s leaderboard, best first: ``players`` and ``next``."""
        return await self.request("leaderboard", game=game, **_given(limit=limit, after=after))

    async def rename(self, name: str) -> str:
        """Go by ``name`` from now on, in every room where this player sits (the name in use
        is returned: ``name`` trimmed). Later hellos say it too."""
        reply = await self.request("rename", name=name)
        self.name = str(reply["name"])
        return self.name

    async def rematch(self, room: str) -> str:
        return str((await self.request("rematch", room=room))["room"])

    async def measure_clock_offset(self, tries: int = 3) -> float:
        """Estimate how far the server's clock is ahead of this machine's (seconds), from the
        ``ping`` with the shortest round trip, and keep it as ``clock_offset``: a view's
        ``clock`` counts down by it (PROTOCOL.md, "Clocks")."""
        best: tuple[float, float] | None = None
        for _ in range(tries):
            sent = time.time()
            server = float((await self.request("ping"))["time"])
            back = time.time()
            if best is None or back - sent < best[0]:
                best = (back - sent, server - (sent + back) / 2)
        assert best is not None
        self.clock_offset = best[1]
        return self.clock_offset

    async def record(self, room: str) -> dict[str, Any]:
        """A finished room's game record (PROTOCOL.md, "Game records"); refused before the end
        (``wrong_status``)."""
        reply = await self.request("record", room=room)
        result: dict[str, Any] = reply["record"]
        return result

    async def replay(self, room: str, seat: int | None = None) -> list[dict[str, Any]]:
        """What ``seat`` (None: a spectator) saw of a finished room's game, one frame per step
        from the setup (PROTOCOL.md, ``replay``); refused before the end (``wrong_status``)."""
        fields: dict[str, Any] = {"room": room}
        if seat is not None:
            fields["seat"] = seat
        reply = await self.request("replay", **fields)
        return replay_views(reply["frames"])

    async def resign(self, room: str) -> dict[str, Any]:
        """Leave the game being played (the other player wins; in Mantis with three or more
        the seat drops out). Returns the ok reply (with the new version)."""
        return await self.request("resign", room=room)

    async def move(
        self, room: str, move: dict[str, Any], *, mid: str | None = None,
        version: int | None = None, retry: bool = True,
    ) -> dict[str, Any]:
        """Make a move against the mirror's current version (or ``version``). Returns the ok
        reply (with the new version); raises :class:`ServerError` if refused. A refusal that
        says nothing about the move (:data:`MOVE_AGAIN`) is retried with the same move id, up
        to :data:`MOVE_RETRIES` times, backing off (``retry=False``: sent once, the refusal
        raised as it came)."""
        mirror = self._mirror(room)
        fields: dict[str, Any] = {
            "room": room,
            "version": mirror.version if version is None else version,
            "mid": mid or secrets.token_hex(6),
            "move": move,
        }
        for attempt in itertools.count(1):
            try:
                return await self.request("move", **fields)
            except ServerError as exc:
                again = retry and exc.code in MOVE_AGAIN and attempt <= MOVE_RETRIES
                if not again or self._closing:
                    raise
                await asyncio.sleep(min(0.1 * 2**attempt, BACKOFF_MAX))
        raise AssertionError("unreachable")


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that have a value (a request leaves the others out)."""
    return {name: value for name, value in fields.items() if value is not None}
