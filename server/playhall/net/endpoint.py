"""The websocket endpoint: takes each connection's requests (decoded and checked once, as they
arrive: :class:`playhall.net.session.Request`) and dispatches them to the lobby, the player
registry or a room. Every request gets exactly one reply; bad input gets an ``error`` reply
with a code and a reason and changes nothing.

A room is reached only through its handle (:class:`playhall.rooms.handle.RoomHandle`, handed
out by the room manager): ``ask`` for a request the connection's task waits on, ``submit`` for
a move, whose answer comes back later by address, (connection id, request id), through the
reply router (``net/replies.py``), not through a callback.

Requests of one connection are handled in order, one at a time: replies come back in request
order and a flooding client slows only itself. A move for a room that takes requests at once
(``RoomManager.ready``: one this process holds) is handed to it from the callback that read it
(``Session.message_received`` calls :meth:`Endpoint._fast_move`); any other request goes
through the connection's task. Either way the move then waits in the room's inbox
(``rooms/inbox.py``) for the room's task.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Final

from websockets.datastructures import Headers
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response

from playhall import __version__, log
from playhall.caps import Caps
from playhall.catalog import all_games, plugin_packages
from playhall.config import Config
from playhall.games.contract import Rejected
from playhall.host_identity import HostTokens
from playhall.lobby import Lobby
from playhall.matchmaking import Matchmaker
from playhall.net.admission import Admission
from playhall.net.metrics import PATH as METRICS_PATH
from playhall.net.metrics import close_reason
from playhall.net.ratelimit import AddressBuckets
from playhall.net.refusals import RefusalLog
from playhall.net.replies import ReplyRouter, refuse
from playhall.net.rules import load_pages, plugin_pages
from playhall.net.session import Request, Session, error_frame, ok_frame
from playhall.net.web import (
    WebFiles,
    is_websocket_upgrade,
    load_files,
    plugin_renderers,
    too_many_requests,
)
from playhall.net.websocket import WebSocket, WriteBatch
from playhall.players import Players
from playhall.results import results_of, results_request
from playhall.rooms import views
from playhall.rooms.handle import ReplyTo, RoomHandle
from playhall.rooms.ids import is_room_id
from playhall.rooms.manager import RoomManager
from playhall.rooms.mine import my_rooms
from playhall.rooms.table import RoomError, no_such_room, retry_after
from playhall.store.code_tries import CodeTries, Try
from playhall.store.codes import normalise_code
from playhall.store.outage import failure_of, is_store_error, report
from playhall.store.redis_store import Store
from playhall.tasks import Tasks, pause
from playhall_protocol import SUPPORTED_VERSIONS, ProtocolError, errors
from playhall_protocol.messages import CLIENT_MESSAGES

logger = log.get("playhall.net")

TOO_MANY_CONNECTIONS = "too many connections from your address\n"


class Endpoint:
    def __init__(
        self, config: Config, store: Store, rooms: RoomManager, lobby: Lobby, replies: ReplyRouter
    ) -> None:
        self.config = config
        self.store = store
        self.rooms = rooms
        self.lobby = lobby
        self.replies = replies
        self.players = Players(store.players, config.player_ttl, config.unused_player_ttl)
        self.results = results_of(store, config)
        self.matchmaker = Matchmaker(store, config, rooms)
        self.host_tokens = HostTokens.from_config(config)
        self.caps = Caps(store.players, config)
        self.sessions: set[Session] = set()
        self.draining = False
        self._ids = itertools.count(1)
        self._background = Tasks("connection task", logger)
        self.counters = rooms.counters  # what the process counts (playhall.counters)
        # Every connection's frames of a loop pass, one callback.
        self.writes = WriteBatch(self.counters)
        self._releases: set[asyncio.Future[Any]] = set()  # see _uncount
        self.admission = Admission(config.connections_per_address, config.forwarded_header)
        self.http_rate = AddressBuckets(config.http_rate, config.http_burst)
        # Refusals a client can repeat at will are logged once per address and window.
        self.connections_refused = RefusalLog(logger, "connection_refused")
        self.requests_refused = RefusalLog(logger, "http_refused")
        self.addresses_refused = RefusalLog(logger, "address_refused")
        self.code_tries = CodeTries(
            store.redis, store.keys.p,
            config.code_tries, config.code_backoff, config.code_backoff_max,
        )
        # The web client and the games' rules pages, for browsers' plain GETs; a plugin's own
        # renderer and rules page from its package.
        plugins = plugin_packages()
        self.web = WebFiles(
            {
                **plugin_renderers(plugins),
                **load_files(),
                **load_pages(all_games(), own=plugin_pages(plugins)),
            }
        )
        #: Whether the fleet registry lists this process (``Heartbeat.listed``, wired by
        #: ``app.start``): not yet at start, nor once its heartbeats stop reaching Redis.
        self.listed: Callable[[], bool] = lambda: True
        #: The embedded Redis died and is being started again (see ``app.supervise``).
        self.redis_restarting = False
        #: Answers ``GET /metrics`` on this port: set only when that is allowed (behind a
        #: token, see playhall.net.metrics); else the path is unknown here (404).
        self.metrics: Callable[[HttpRequest], Response] | None = None

    # -- HTTP on the same port -----------------------------------------------------------------

    def process_request(self, request: HttpRequest) -> Response | tuple[HTTPStatus, str] | None:
        """Plain HTTP answers on the websocket port: ``/healthz``, the web client's files and
        the rules pages for any other request that is not a websocket handshake
        (playhall.net.web, playhall.net.rules), and 503 to
        handshakes while draining (reconnecting clients then go to the next process instead of
        being closed again). None accepts the handshake."""
        if request.path == "/healthz":
            unready = self.unready()
            if unready:
                return HTTPStatus.SERVICE_UNAVAILABLE, unready + "\n"
            return HTTPStatus.OK, "ok\n"
        if request.path == METRICS_PATH and self.metrics is not None:
            return self.metrics(request)
        if not is_websocket_upgrade(request):
            return self.web.answer(request)
        if self.draining:
            return HTTPStatus.SERVICE_UNAVAILABLE, "server restarting\n"
        return None

    def unready(self) -> str:
        """Why this process should take no traffic now (``/healthz`` answers 503 with it);
        empty while it serves."""
        if self.draining:
            return "draining"
        if self.redis_restarting:
            return "embedded redis restarting"
        silent = time.monotonic() - self.store.answered_at
        if silent > self.config.lease_ms / 1000:
            return f"redis silent for {silent:.0f}s"
        if not self.listed():
            return "not registered"
        return ""

    # -- one connection ------------------------------------------------------------------------

    def _accepted(self, ws: WebSocket) -> bool:
        """Count a connection against its peer's address from the moment it is accepted, so
        connections that never finish a handshake count too. Past ``connections_per_address``
        its request is answered 429 (:meth:`_admit`), or, past the few such an address may
        have waiting (playhall.net.admission), it is dropped at once. Behind a configured
        proxy the client's address comes with the request, so a connection is counted at its
        handshake instead (a proxy passes a connection on only once it has a request)."""
        if self.admission.forwarded_header:
            return True
        address = ws.client_address = self.admission.address(ws.remote_address, Headers())
        if not self.admission.full(address):
            self.admission.opened(address)
            ws.admission = "open"
        elif self.admission.refusing(address):
            ws.admission = "refusing"
        else:
            self.connections_refused.refused(address, peer=ws.remote_address)
            ws.abort()
            return False
        return True

    def _lost(self, ws: WebSocket) -> None:
        if ws.admission == "open":
            self.admission.closed(ws.client_address)
        elif ws.admission == "refusing":
            self.admission.refused(ws.client_address)
        ws.admission = ""

    def _admit(
        self, ws: WebSocket, request: HttpRequest
    ) -> Response | tuple[HTTPStatus, str] | None:
        """The request's answer: 429 to a connection past its address's cap, and to a plain
        HTTP request past its address's ``http_rate``; else :meth:`process_request`'s; None
        accepts a handshake."""
        address = ws.client_address or self.admission.address(ws.remote_address, request.headers)
        upgrade = is_websocket_upgrade(request)
        if ws.admission == "refusing" or (
            upgrade and not ws.admission and self.admission.full(address)
        ):
            self.connections_refused.refused(address, peer=ws.remote_address)
            return HTTPStatus.TOO_MANY_REQUESTS, TOO_MANY_CONNECTIONS
        if request.path != "/healthz" and not upgrade:
            wait = self.http_rate.take(address)
            if wait > 0:
                self.requests_refused.refused(address, peer=ws.remote_address)
                return too_many_requests(wait)
        answer = self.process_request(request)
        if answer is None and not ws.admission:  # a handshake behind a proxy: counted now
            ws.client_address = address
            self.admission.opened(address)
            ws.admission = "open"
        return answer

    def websocket(self) -> WebSocket:
        """A new connection (the protocol factory of the listening socket)."""
        ws = WebSocket(
            on_request=lambda request: self._admit(ws, request),
            on_open=self._opened,
            max_size=self.config.max_frame,
            batch=self.writes,
            on_connect=self._accepted,
            on_lost=self._lost,
        )
        return ws

    def _opened(self, ws: WebSocket) -> Session:
        session = Session(
            ws, self.config, self._resnapshot, self._fast_move, self.counters,
            on_closed=self._uncount,
        )
        session.address = ws.client_address
        session.id = next(self._ids)
        session.log = logger.bind(conn=session.id, peer=ws.remote_address, address=session.address)
        self.sessions.add(session)
        self.replies.add(session)
        self._background.spawn(self._serve(session))
        return session

    async def _serve(self, session: Session) -> None:
        """Handle one connection's requests in order, one at a time, until it is gone."""
        clog = session.log
        clog.debug("connected")
        # What ends the loop is kept and the leaving awaited after the handler, never inside it
        # (nor in a finally): docs/operations.md, "The compiled build".
        ended: BaseException | None = None
        try:
            while (request := await session.next_request()) is not None:
                session.busy = True
                try:
                    await self._handle(session, request, clog)
                finally:
                    session.busy = False
        except BaseException as exc:
            ended = exc
        await self._closed(session, clog)
        if ended is not None:
            raise ended

    async def _closed(self, session: Session, clog: Any) -> None:
        """The connection is gone: it leaves the lobby's watchers and every room it was in."""
        if session.flooded:
            clog.warning("flooding_closed", player=session.player)
        self.counters.connection_closed(close_reason(session.ws))
        self.sessions.discard(session)
        self.replies.remove(session)  # nothing is in flight now: next_request saw to it
        self.lobby.unwatch(session)
        for room_id in list(session.rooms):
            room = self.rooms.ready(room_id)
            if room is not None:
                try:
                    await room.ask("detach", session, {})
                except RoomError:
                    pass
            elif (elsewhere := self.rooms.elsewhere(room_id)) is not None:
                elsewhere.submit("detach", session, {})  # nobody waits for the answer
        if self.rooms.fleet is not None:
            self.rooms.fleet.forget(session.id)
        clog.debug("disconnected", player=session.player)

    async def _handle(self, session: Session, request: Request, clog: Any) -> None:
        rid = request.rid
        message = request.message
        kind = request.kind
        try:
            if request.error is not None:
                raise request.error
            assert rid is not None  # checked: every request has one
            if kind != "hello" and not session.greeted:
                raise ProtocolError(errors.NOT_HELLO, 'say "hello" first')
            if kind == "hello" and session.greeted:
                # One connection is one player: switching identity would leave its seats and
                # presence pointing at the wrong player.
                raise ProtocolError(errors.BAD_MESSAGE, "hello was already said on this connection")
            if kind == "move":
                await self._move(session, request)
                return
            started = time.perf_counter()
            result = await self._dispatch(session, kind, message)
            session.reply(ok_frame(rid, result))
            self.counters.request(kind, "ok")
            if kind != "ping":
                clog.debug(
                    "request",
                    kind=kind,
                    req=rid,
                    player=session.player,
                    room=message.get("room"),
                    ms=round((time.perf_counter() - started) * 1e3, 2),
                )
        except (ProtocolError, RoomError, Rejected) as exc:
            self._refused(session, rid, exc, message)
        except Exception as failure:  # (named apart: docs/operations.md, "The compiled build")
            if is_store_error(failure):  # Redis away: retryable, and logged as one outage
                self.store.outage.failed(failure, req=rid, player=session.player)
                unreachable = RoomError(errors.STORE_FAILED, "Redis is unreachable; retry shortly")
                self._refused(session, rid, unreachable, message)
                return
            clog.exception(
                "request_failed",
                req=rid,
                player=session.player,
                kind=message.get("t") if isinstance(message, dict) else None,
                room=message.get("room") if isinstance(message, dict) else None,
            )
            session.reply(error_frame(rid, errors.INTERNAL, "internal error; nothing was changed"))
            self.counters.request(_request_type(message), errors.INTERNAL)

    # -- moves ---------------------------------------------------------------------------------

    def _fast_move(self, session: Session, request: Request) -> bool:
        """Take a move for a room this process holds, or forwards to the process that holds
        it, from the callback that read it: no task switch on the way in, and a room held
        here answers it in the same pass of the loop as it broadcasts the update. Anything
        else (not a move, refused, room being loaded, draining) is left to the connection's
        task."""
        if request.kind != "move" or request.error is not None or not session.greeted:
            return False
        if request.message["room"] not in session.rooms:  # looked up first (_look_up)
            return False
        room = self.rooms.at_once(request.message["room"])
        if room is None or self.draining:
            return False
        self._submit_move(session, room, request)
        return True

    async def _move(self, session: Session, request: Request) -> None:
        """A move the fast path left: its room is loaded first."""
        if self.draining:
            raise RoomError(errors.DRAINING, "the server is restarting; reconnect shortly")
        room_id = request.message["room"]
        if room_id not in session.rooms:
            await self._look_up(room_id)
        room = await self.rooms.handle(room_id)
        self._submit_move(session, room, request)

    def _submit_move(self, session: Session, room: RoomHandle, request: Request) -> None:
        """The one way a move reaches its room, already decoded and checked: the room answers
        it when it is stored (or refused), through the reply router, and until then the
        connection's next request waits (``in_flight``)."""
        rid = request.rid
        assert rid is not None
        message = request.message
        session.in_flight = True
        try:
            # The message itself as the command's arguments: the move's handler reads its
            # fields by name, so "t" and "id" are left in rather than copied out on every move.
            room.submit("move", session, message, ReplyTo(session.id, rid))
        except RoomError as exc:
            session.in_flight = False
            self._refused(session, rid, exc, message)

    def _refused(
        self,
        session: Session,
        rid: int | None,
        exc: ProtocolError | RoomError | Rejected,
        message: Any,
    ) -> None:
        self.counters.request(_request_type(message), exc.code)
        refuse(session, rid, exc, message.get("room") if isinstance(message, dict) else None)

    # -- everything else -----------------------------------------------------------------------

    async def _dispatch(
        self, session: Session, kind: str, message: dict[str, Any]
    ) -> dict[str, Any]:
        if kind == "hello":
            return await self._hello(session, message)
        if kind == "ping":
            return {"time": time.time()}
        if kind == "games":
            return {"games": [views.game_entry(g) for g in all_games().values()]}
        if kind == "rooms":
            return await self.lobby.rooms(
                message.get("game"), message.get("after", ""), message.get("limit")
            )
        if kind == "lobby.watch":
            self.lobby.watch(session, message.get("game"))
            return await self.lobby.rooms(message.get("game"))
        if kind == "lobby.unwatch":
            self.lobby.unwatch(session)
            return {}
        if kind == "my_rooms":
            return {"rooms": await my_rooms(self.rooms, session.player)}
        if kind in ("games_played", "profile", "leaderboard"):
            return await results_request(self.results, session.player, kind, message)
        if self.draining:
            raise RoomError(errors.DRAINING, "the server is restarting; reconnect shortly")
        if kind == "rename":
            return await self._rename(session, message["name"])
        if kind == "create":
            result = await self._create(session, message)
        elif kind in ("seek", "cancel_seek"):
            result = await self._seek(session, kind, message)
        else:
            result = await self._room_command(session, kind, message)
        await self._note_use(session, kind, result)
        return result

    async def _room_command(
        self, session: Session, kind: str, message: dict[str, Any]
    ) -> dict[str, Any]:
        args = {k: v for k, v in message.items() if k not in ("t", "id")}
        if "code" not in args:
            return await self._to_room(session, kind, args, message["id"])
        # A join with a code is a try, counted per player and per address before the code is
        # looked up (in Redis, so concurrent tries of any number of connections and processes
        # cannot outrun the count); past code_tries each makes the next wait longer. A try
        # that proves not to be a wrong code is given back.
        code = normalise_code(args["code"])
        guessers = [f"player:{session.player}", f"address:{session.address}"]
        taken = await self.code_tries.take(guessers)
        if taken.wait > 0:
            raise RoomError(
                errors.TOO_MANY_TRIES,
                f"too many wrong join codes; try again in {math.ceil(taken.wait)} s",
                retry_after=retry_after(taken.wait),
            )
        args["code"] = code
        # The outcome is kept and the try given back after the handler, never inside it (nor
        # in a finally): docs/operations.md, "The compiled build".
        failure: BaseException | None = None
        try:
            result = await self._to_room(session, kind, args, message["id"])
        except BaseException as exc:
            failure = exc
        wrong = (errors.NO_SUCH_ROOM, errors.BAD_CODE)
        if isinstance(failure, RoomError) and failure.code in wrong:
            self._wrong_code(session, taken)
        else:
            await self._give_back(session, guessers, taken)
        if failure is not None:
            raise failure
        return result

    def _wrong_code(self, session: Session, taken: Try) -> None:
        session.log.info(
            "wrong_code", player=session.player, wrong=taken.tries, backoff=taken.backoff
        )
        if taken.tries == self.config.code_tries:
            session.log.warning("code_backoff", player=session.player, wrong=taken.tries)

    async def _give_back(self, session: Session, guessers: list[str], taken: Try) -> None:
        """Give back a try that was not a wrong code; if Redis is away it stays counted."""
        try:
            await self.code_tries.give_back(guessers, taken)
        except Exception as failure:
            if not is_store_error(failure):
                raise
            self.store.outage.failed(failure, player=session.player)

    async def _to_room(
        self, session: Session, kind: str, args: dict[str, Any], request: int
    ) -> dict[str, Any]:
        """Hand a request to its room (found by its join code if it names none)."""
        room_id = args.get("room")
        if room_id is None and "code" in args:
            room_id = await self.store.rooms.room_for_code(args["code"])
            if room_id is None:
                raise RoomError(errors.BAD_CODE, "no room has that join code")
        if room_id is None:
            raise ProtocolError(errors.BAD_MESSAGE, f'{kind!r} needs "room" (or "code")')
        if room_id not in session.rooms:
            await self._look_up(room_id)
        room = await self.rooms.handle(room_id)
        result = await room.ask(kind, session, args, request)
        if kind in ("join", "sync"):
            session.rooms.add(room_id)
        elif kind == "leave":
            session.rooms.discard(room_id)
            await self.matchmaker.left(session.player, room_id)
        return result

    async def _look_up(self, room_id: str) -> None:
        """Refuse an id that names no stored room (``no_such_room``), with one read of Redis.

        Every request about a room its connection is not in (``join`` or ``sync`` put it
        there) pays this read, whether this process holds the room or not: a private room
        held in memory refuses an outsider exactly as a room that does not exist, and without
        the read it would do so sooner than an unknown id is found unknown (an answer's time
        would tell the two apart)."""
        if not is_room_id(room_id) or not await self.store.rooms.room_exists(room_id):
            raise no_such_room(room_id)

    async def _hello(self, session: Session, message: dict[str, Any]) -> dict[str, Any]:
        rid = message["id"]
        offered = message["protocol"]
        offered = [offered] if isinstance(offered, int) else offered
        common = [v for v in SUPPORTED_VERSIONS if v in offered]
        if not common:
            raise ProtocolError(
                errors.UNSUPPORTED_VERSION,
                f"this server speaks protocol versions {list(SUPPORTED_VERSIONS)}",
            )
        await self._not_refused(session)
        if not session.counted:
            try:
                counted = await self.caps.connection(session.address, self._member(session))
            except RoomError:
                peer = session.ws.remote_address
                self.connections_refused.refused(session.address, peer=peer, at="hello")
                raise
            session.counted = counted
            if counted and session.gone:  # closed while it was being counted
                self._uncount(session)
        name = message.get("name") or ""
        if "host_token" in message:
            if "token" in message:
                raise ProtocolError(errors.BAD_MESSAGE, 'hello carries "token" or "host_token"')
            member = await self.host_tokens.verify(message["host_token"])
            who = await self.players.arrive(member.player, member.name or name)
        else:
            if message.get("token") is None:
                await self.caps.new_player(session.address, session.log, rid)
            who = await self.players.identify(message.get("token"), name)
        session.player, session.name, session.protocol = who.player, who.name, max(common)
        session.used = who.used
        reply: dict[str, Any] = {
            "player": who.player,
            "name": who.name,
            "protocol": session.protocol,
            "server": f"playhall/{__version__}",
            "rooms": await self.players.rooms(who.player),
            "limits": {
                "max_frame": self.config.max_frame,
                "rate": self.config.rate,
                "burst": self.config.burst,
            },
        }
        if self.config.public_url:
            reply["public_url"] = self.config.public_url
        if who.token is not None:
            reply["token"] = who.token
        return reply

    async def _not_refused(self, session: Session) -> None:
        """Refuse the ``hello`` of a connection from an address an operator refuses
        (``address_refused``, with the seconds left as ``retry_after``), on every process
        together (playhall.store.refused); logged once per address and window."""
        address = session.address
        refusal = await self.store.refused.check(address) if address else None
        if refusal is None:
            return
        left = max(0.0, refusal.until - time.time())
        self.addresses_refused.refused(
            address, peer=session.ws.remote_address, by=refusal.by, until=refusal.until
        )
        why = f" ({refusal.reason})" if refusal.reason else ""
        raise RoomError(
            errors.ADDRESS_REFUSED,
            f"this server refuses connections from your address for {math.ceil(left)} s "
            f"more{why}",
            retry_after=retry_after(left),
        )

    async def _rename(self, session: Session, wanted: str) -> dict[str, Any]:
        """The player goes by ``wanted`` from now on: stored, on every connection of theirs
        here, and on their seat in every room this process holds (each a new version its
        viewers see). A room held elsewhere, or not in memory, shows it when they next
        ``join`` or ``sync`` it."""
        name = wanted.strip()
        if not name:
            raise ProtocolError(errors.BAD_MESSAGE, "a name needs a character other than a space")
        player = session.player
        await self.caps.rename(player)
        await self.store.players.rename_player(player, name)
        for other in self.sessions:
            if other.player == player:
                other.name = name
        renamed = []
        for room in self.rooms.seated(player):
            try:
                await room.ask("rename", session, {"name": name})
            except RoomError:  # closing, or busy: it shows the name at their next sync
                continue
            renamed.append(room.id)
        return {"name": name, "rooms": sorted(renamed)}

    async def _note_use(self, session: Session, kind: str, result: dict[str, Any]) -> None:
        """The player is used once they first sit down, create a room or chat (see
        :class:`playhall.players.Players`)."""
        if session.used:
            return
        if kind in ("create", "chat") or result.get("seat") is not None:
            await self.players.used(session.player)
            session.used = True

    async def _seek(
        self, session: Session, kind: str, message: dict[str, Any]
    ) -> dict[str, Any]:
        """Quick play (playhall.matchmaking), as the session's own ``create``, ``join``,
        ``ready`` and ``leave``."""
        rid = message["id"]

        async def ask(what: str, args: dict[str, Any]) -> dict[str, Any]:
            return await self._to_room(session, what, args, rid)

        if kind == "cancel_seek":
            return await self.matchmaker.cancel(session.player, ask)

        async def create(fields: dict[str, Any]) -> dict[str, Any]:
            return await self._create(session, {**fields, "id": rid})

        return await self.matchmaker.seek(session.player, message, create, ask)

    async def _create(self, session: Session, message: dict[str, Any]) -> dict[str, Any]:
        sit = bool(message.get("sit", True))
        room, code = await self.rooms.open(
            message["game"],
            message.get("options") or {},
            message["seats"],
            session.player,
            private=bool(message.get("private", False)),
            sitting=session.name if sit else None,
            address=session.address,
            request=message["id"],
            rated=message.get("rated"),
            room_id=message.get("room_id"),  # (never from the wire: quick play's own id)
        )
        # The creator already sits in seat 0 (if they asked to): this join only views the room.
        args: dict[str, Any] = {"code": code}
        if sit:
            args["seat"] = 0
        else:
            args["watch"] = True
        joined = await room.ask("join", session, args, message["id"])
        session.rooms.add(room.id)
        return {
            "room": room.id, "code": code, "seat": joined["seat"],
            "version": joined["version"],
        }

    # -- outbox drained after overflow ---------------------------------------------------------

    def _resnapshot(self, session: Session, room_id: str) -> None:
        room = self.rooms.ready(room_id)
        if room is None:
            elsewhere = self.rooms.elsewhere(room_id)
            if elsewhere is None:
                session.clear_stale(room_id)
            else:  # its owner sends the snapshot (and clears the mark first)
                elsewhere.submit("resnapshot", session, {})
            return

        async def ask() -> None:
            try:
                await room.ask("resnapshot", session, {})
            except RoomError:
                pass

        self._background.spawn(ask())

    # -- connections counted on every process together (playhall.caps) -------------------------

    def _member(self, session: Session) -> str:
        return f"{self.config.instance}:{session.id}"

    def _uncount(self, session: Session) -> None:
        """The connection closed: stop counting it against its address (queued at once, so a
        connection made after it is counted after it has gone)."""
        if not session.counted:
            return
        session.counted = False
        release = self.store.players.release_connection(session.address, self._member(session))
        pending = asyncio.ensure_future(release)
        self._releases.add(pending)
        pending.add_done_callback(self._released)

    def _released(self, release: asyncio.Future[Any]) -> None:
        """A release settled. Redis away counts in the outage log (the count lapses within
        ``lease_ms`` anyway); anything else is a bug, logged."""
        self._releases.discard(release)
        failure_of(release, "connection release", logger, self.store.outage)

    async def keep_counted(self) -> None:
        """Renew the count of this process's connections every third of ``lease_ms``: a count
        not renewed for ``lease_ms`` lapses (that of a process that died)."""
        ttl = self.config.lease_ms
        while True:
            await pause(ttl / 3000)
            held: dict[str, list[str]] = {}
            for session in self.sessions:
                if session.counted:
                    held.setdefault(session.address, []).append(self._member(session))
            if not held:
                continue
            try:
                await asyncio.gather(*self.store.players.renew_connections(held, ttl))
            except Exception as exc:
                report(exc, "connection renewal", logger, self.store.outage)

    # -- addresses an operator refuses (playhall.store.refused) --------------------------------

    async def keep_refused(self) -> None:
        """Close the greeted connections from an address an operator has refused since they
        said hello (through any process), with 1008: checked every third of ``lease_ms``, one
        read of Redis a pass unless a refusal was made or lifted (then one more)."""
        seen: int | None = None
        while True:
            await pause(self.config.lease_ms / 3000)
            try:
                stamp = await self.store.refused.stamp()
                if stamp == seen:
                    continue
                addresses = sorted({s.address for s in self.sessions if s.greeted and s.address})
                refused = await self.store.refused.refused_among(addresses) if addresses else set()
                seen = stamp
            except Exception as exc:
                if not is_store_error(exc):
                    logger.exception("refusal_check_failed")
                else:
                    self.store.outage.failed(exc, during="refusal check")
                continue
            for session in [s for s in self.sessions if s.greeted and s.address in refused]:
                self.addresses_refused.refused(
                    session.address, peer=session.ws.remote_address, at="connected"
                )
                session.ws.close(errors.CLOSE_POLICY, "your address is refused by an operator")

    # -- slow connections ----------------------------------------------------------------------

    async def sweep_slow(self, every: float = 1.0) -> None:
        """Close connections that have not taken a frame for ``slow_timeout`` seconds (4000);
        the client reconnects and resumes from a snapshot."""
        while True:
            await pause(every)
            now = time.monotonic()
            for session in [s for s in self.sessions if s.too_slow(now)]:
                logger.warning("slow_connection_closed", player=session.player)
                self.sessions.discard(session)
                session.ws.close(errors.CLOSE_TOO_SLOW, "too slow: reconnect to resume")

    # -- shutdown ------------------------------------------------------------------------------

    async def close_all(self, code: int, reason: str, timeout: float = 5.0) -> None:
        """Close every connection (after its queued frames) and wait until they are gone;
        those whose peer does not finish the closing handshake in time are dropped."""
        sessions = list(self.sessions)
        await asyncio.gather(*(s.close(code, reason) for s in sessions), return_exceptions=True)
        if sessions:
            gone = [asyncio.ensure_future(s.ws.wait_closed()) for s in sessions]
            await asyncio.wait(gone, timeout=timeout)
            for session, done in zip(sessions, gone, strict=True):
                if not done.done():
                    done.cancel()
                    session.ws.abort()


def _request_type(message: Any) -> str:
    """A request's type as the metrics count it: one the protocol defines, else ``invalid``
    (never a client's own string: the label's values stay bounded)."""
    kind = message.get("t") if isinstance(message, dict) else None
    return kind if isinstance(kind, str) and kind in _REQUEST_TYPES else "invalid"


_REQUEST_TYPES: Final = frozenset(CLIENT_MESSAGES)
