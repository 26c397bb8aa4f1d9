"""The websocket endpoint: reads frames, checks them against the protocol, and dispatches each
request to the lobby, the player registry or a room actor. Every request gets exactly one
reply; bad input gets an ``error`` reply with a code and a reason and changes nothing.

Requests of one connection are handled in order, one at a time: replies come back in request
order and a flooding client slows only itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import math
import secrets
import time
from http import HTTPStatus
from typing import Any

from websockets.http11 import Request, Response

from playhall import __version__, log
from playhall.catalog import all_games, get_game
from playhall.config import Config
from playhall.games.contract import Rejected
from playhall.lobby import Lobby
from playhall.net.admission import Admission
from playhall.net.guesses import GuessLimiter
from playhall.net.session import Session, error_frame, ok_frame
from playhall.net.web import WebFiles, is_websocket_upgrade, load_files
from playhall.net.websocket import WebSocket, WriteBatch
from playhall.rooms.actor import RoomError, new_seed
from playhall.rooms.codes import normalise_code
from playhall.rooms.ids import new_room_id
from playhall.rooms.manager import RoomManager
from playhall.rooms.record import WAITING, RoomRecord, Seat
from playhall.store.outage import is_store_error, outcome_unknown
from playhall.store.redis_store import Store
from playhall_protocol import SUPPORTED_VERSIONS, ProtocolError, decode, errors
from playhall_protocol.messages import request_id_of, validate

logger = log.get("playhall.net")


#: The answer to a create whose first write's reply was lost.
_CREATE_UNKNOWN = (
    "Redis did not answer whether the room was made; if it was, it is the room named here and "
    "in your rooms at your next hello: sync it, or create again"
)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Endpoint:
    def __init__(self, config: Config, store: Store, rooms: RoomManager, lobby: Lobby) -> None:
        self.config = config
        self.store = store
        self.rooms = rooms
        self.lobby = lobby
        self.sessions: set[Session] = set()
        self.draining = False
        self._ids = itertools.count(1)
        self._background: set[asyncio.Task[None]] = set()
        self._writes = WriteBatch()  # every connection's frames of a loop pass, one callback
        self.admission = Admission(config.connections_per_address, config.forwarded_header)
        self.guesses = GuessLimiter(config.code_tries, config.code_backoff, config.code_backoff_max)
        self.web = WebFiles(load_files())  # the web client, for browsers' plain GETs
        #: The embedded Redis died and is being started again (see ``app.supervise``).
        self.redis_restarting = False

    # -- HTTP on the same port -----------------------------------------------------------------

    def process_request(self, request: Request) -> Response | tuple[HTTPStatus, str] | None:
        """Plain HTTP answers on the websocket port: ``/healthz``, the web client's files for
        any other request that is not a websocket handshake (playhall.net.web), and 503 to
        handshakes while draining (reconnecting clients then go to the next process instead of
        being closed again). None accepts the handshake."""
        if request.path == "/healthz":
            if self.draining:
                return HTTPStatus.SERVICE_UNAVAILABLE, "draining\n"
            if self.redis_restarting:
                return HTTPStatus.SERVICE_UNAVAILABLE, "embedded redis restarting\n"
            silent = time.monotonic() - self.store.answered_at
            if silent > self.config.lease_ms / 1000:
                return HTTPStatus.SERVICE_UNAVAILABLE, f"redis silent for {silent:.0f}s\n"
            return HTTPStatus.OK, "ok\n"
        if not is_websocket_upgrade(request):
            return self.web.answer(request)
        if self.draining:
            return HTTPStatus.SERVICE_UNAVAILABLE, "server restarting\n"
        return None

    # -- one connection ------------------------------------------------------------------------

    def _admit(self, ws: WebSocket, request: Request) -> Response | tuple[HTTPStatus, str] | None:
        """The handshake's answer: :meth:`process_request`'s, else 429 to an address that
        holds ``connections_per_address`` connections already; None accepts it."""
        answer = self.process_request(request)
        if answer is not None:
            return answer
        address = self.admission.address(ws.remote_address, request.headers)
        if self.admission.full(address):
            logger.info("connection_refused", address=address, peer=ws.remote_address)
            return HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address\n"
        ws.client_address = address
        return None

    def websocket(self) -> WebSocket:
        """A new connection (the protocol factory of the listening socket)."""
        ws = WebSocket(
            on_request=lambda request: self._admit(ws, request),
            on_open=self._opened,
            max_size=self.config.max_frame,
            batch=self._writes,
        )
        return ws

    def _opened(self, ws: WebSocket) -> Session:
        session = Session(ws, self.config, self._resnapshot, self._fast_move)
        session.address = ws.client_address
        self.admission.opened(session.address)
        session.log = logger.bind(
            conn=next(self._ids), peer=ws.remote_address, address=session.address
        )
        self.sessions.add(session)
        task = asyncio.get_running_loop().create_task(self._serve(session))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return session

    async def _serve(self, session: Session) -> None:
        """Handle one connection's messages in order, one at a time, until it is gone."""
        clog = session.log
        clog.debug("connected")
        try:
            while (message := await session.next_message()) is not None:
                session.busy = True
                try:
                    await self._handle_frame(session, message, clog)
                finally:
                    session.busy = False
        finally:
            if session.flooded:
                clog.warning("flooding_closed", player=session.player)
            self.sessions.discard(session)
            self.admission.closed(session.address)
            self.lobby.unwatch(session)
            for room_id in list(session.rooms):
                room = self.rooms.rooms.get(room_id)
                if room is not None:
                    try:
                        await room.submit("detach", session, {})
                    except RoomError:
                        pass
            clog.debug("disconnected", player=session.player)

    async def _handle_frame(self, session: Session, frame: bytes | str, clog: Any) -> None:
        rid: int | None = None
        message: Any = None
        try:
            message = decode(frame)
            rid = request_id_of(message)
            kind, rid = validate(message)
            if kind != "hello" and not session.greeted:
                raise ProtocolError(errors.NOT_HELLO, 'say "hello" first')
            if kind == "hello" and session.greeted:
                # One connection is one player: switching identity would leave its seats and
                # presence pointing at the wrong player.
                raise ProtocolError(errors.BAD_MESSAGE, "hello was already said on this connection")
            started = time.perf_counter()
            result = await self._dispatch(session, kind, message)
            session.reply(ok_frame(rid, result))
            if kind != "move" and kind != "ping":
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
        except Exception as failure:  # (not `exc`: mypyc gives a name one type, the one above's)
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

    def _fast_move(self, session: Session, frame: bytes | str) -> bool:
        """Hand a move for a room this process holds straight to the room, from the callback
        that read it: no task switch on the way in, and the room answers it in the same pass
        of the loop as it broadcasts the update. Anything unusual (not a move, malformed, room
        not loaded, draining) is left to the connection's task, which answers it in full."""
        if not isinstance(frame, bytes) or not session.greeted or self.draining:
            return False
        try:
            message = decode(frame)
            if not isinstance(message, dict) or message.get("t") != "move":
                return False
            # Validated before any field is used: a "room" that is an array or a map cannot
            # even be looked up (unhashable).
            _, rid = validate(message)
        except ProtocolError:
            return False
        room = self.rooms.rooms.get(message["room"])
        if room is None:
            return False

        def done(result: dict[str, Any] | None, error: RoomError | None) -> None:
            try:
                if error is None:
                    session.reply(ok_frame(rid, result or {}))
                else:
                    self._refused(session, rid, error, message)
            except Exception:  # the request still gets its one answer
                session.log.exception("reply_failed", req=rid, player=session.player)
                session.reply(error_frame(rid, errors.INTERNAL, "internal error"))
            finally:
                session.answered()

        session.in_flight = True
        try:
            # The message itself as the command's arguments: the move's handler reads its
            # fields by name, so "t" and "id" are left in rather than copied out on every move.
            room.offer("move", session, message, rid, done)
        except RoomError:
            session.in_flight = False
            return False
        return True

    def _refused(
        self,
        session: Session,
        rid: int | None,
        exc: ProtocolError | RoomError | Rejected,
        message: Any,
    ) -> None:
        extra = exc.extra if isinstance(exc, RoomError) else {}
        session.reply(error_frame(rid, exc.code, exc.reason, **extra))
        session.log.info(
            "refused",
            code=exc.code,
            reason=exc.reason,
            req=rid,
            player=session.player,
            room=message.get("room") if isinstance(message, dict) else None,
        )

    async def _dispatch(
        self, session: Session, kind: str, message: dict[str, Any]
    ) -> dict[str, Any]:
        if kind == "hello":
            return await self._hello(session, message)
        if kind == "ping":
            return {"time": time.time()}
        if kind == "games":
            return {"games": [g.describe() for g in all_games().values()]}
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
        if self.draining:
            raise RoomError(errors.DRAINING, "the server is restarting; reconnect shortly")
        if kind == "create":
            result = await self._create(session, message)
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
        # A join with a code is a guess until it succeeds: wrong ones are counted per player
        # and per address, and past code_tries each makes the next wait longer.
        guessers = [f"player:{session.player}", f"address:{session.address}"]
        wait = self.guesses.wait(guessers)
        if wait > 0:
            raise RoomError(
                errors.TOO_MANY_TRIES,
                f"too many wrong join codes; try again in {math.ceil(wait)} s",
                retry_after=round(wait, 1),
            )
        args["code"] = normalise_code(args["code"])
        try:
            return await self._to_room(session, kind, args, message["id"])
        except RoomError as exc:
            if exc.code in (errors.NO_SUCH_ROOM, errors.BAD_CODE):
                self._wrong_code(session, guessers)
            raise

    def _wrong_code(self, session: Session, guessers: list[str]) -> None:
        wrong, wait = self.guesses.wrong(guessers)
        session.log.info("wrong_code", player=session.player, wrong=wrong, backoff=wait)
        if wrong == self.config.code_tries:
            session.log.warning("code_backoff", player=session.player, wrong=wrong)

    async def _to_room(
        self, session: Session, kind: str, args: dict[str, Any], request: int
    ) -> dict[str, Any]:
        """Hand a request to its room (found by its join code if it names none)."""
        room_id = args.get("room")
        if room_id is None and "code" in args:
            room_id = await self.store.room_for_code(args["code"])
            if room_id is None:
                raise RoomError(errors.BAD_CODE, "no room has that join code")
        if room_id is None:
            raise ProtocolError(errors.BAD_MESSAGE, f'{kind!r} needs "room" (or "code")')
        room = await self.rooms.get(room_id)
        result = await room.submit(kind, session, args, request)
        if kind in ("join", "sync"):
            session.rooms.add(room_id)
        elif kind == "leave":
            session.rooms.discard(room_id)
        return result

    # -- hello ---------------------------------------------------------------------------------

    async def _hello(self, session: Session, message: dict[str, Any]) -> dict[str, Any]:
        offered = message["protocol"]
        offered = [offered] if isinstance(offered, int) else offered
        common = [v for v in SUPPORTED_VERSIONS if v in offered]
        if not common:
            raise ProtocolError(
                errors.UNSUPPORTED_VERSION,
                f"this server speaks protocol versions {list(SUPPORTED_VERSIONS)}",
            )
        name = (message.get("name") or "").strip()
        token = message.get("token")
        new_token = None
        if token is not None:
            player, _, secret = token.partition(".")
            stored = await self.store.player(player) if player and secret else None
            if stored is None or not hmac.compare_digest(stored.token_hash, hash_secret(secret)):
                raise ProtocolError(errors.BAD_TOKEN, "unknown or wrong player token")
            if name and name != stored.name:
                await self.store.rename_player(player, name)
            name = name or stored.name
            session.used = stored.used
            await self.store.touch_player(player, self._player_ttl(session))
        else:
            player = secrets.token_hex(6)
            secret = secrets.token_urlsafe(24)
            name = name or f"Player-{player[:4]}"
            await self.store.create_player(
                player, name, hash_secret(secret), self._player_ttl(session)
            )
            new_token = f"{player}.{secret}"
        session.player, session.name, session.protocol = player, name, max(common)
        reply: dict[str, Any] = {
            "player": player,
            "name": name,
            "protocol": session.protocol,
            "server": f"playhall/{__version__}",
            "rooms": await self.store.player_rooms(player),
            "limits": {
                "max_frame": self.config.max_frame,
                "rate": self.config.rate,
                "burst": self.config.burst,
            },
        }
        if new_token is not None:
            reply["token"] = new_token
        return reply

    def _player_ttl(self, session: Session) -> int:
        """How long the session's player record is kept after this hello: a player who never
        sat down, created a room or chatted is forgotten within hours (a hello costs a
        stranger nothing; it must not leave a record for months)."""
        return self.config.player_ttl if session.used else self.config.unused_player_ttl

    async def _note_use(self, session: Session, kind: str, result: dict[str, Any]) -> None:
        """Keep the player for ``player_ttl`` once they first sit down, create a room or chat
        (then their token is worth keeping: it holds seats or names them in a room)."""
        if session.used:
            return
        if kind in ("create", "chat") or result.get("seat") is not None:
            await self.store.player_used(session.player, self.config.player_ttl)
            session.used = True

    # -- create --------------------------------------------------------------------------------

    async def _create(self, session: Session, message: dict[str, Any]) -> dict[str, Any]:
        game = get_game(message["game"])
        if game is None:
            raise RoomError(errors.NO_SUCH_GAME, f'no game {message["game"]!r}; see "games"')
        options = game.normalize_options(message.get("options") or {})
        low, high = game.seat_range(options)
        seats = message["seats"]
        if not low <= seats <= high:
            raise RoomError(errors.BAD_SEATS, f"{game.title} takes {low} to {high} seats")
        private = bool(message.get("private", False))
        finished_with = await self._room_quota(session)
        room_id = new_room_id()
        # Listed for its creator before it exists: if Redis then loses the reply to the room's
        # first write, the room (if it was made) is in the creator's "hello" rooms, not an
        # orphan nobody can find. (A set entry for a room that was never made is forgotten
        # the next time the set is read.)
        await self.store.add_player_room(session.player, room_id)
        code = await self.store.claim_code(room_id) if private else None
        record = RoomRecord(
            id=room_id,
            game=game.id,
            options=options,
            seats=tuple(Seat() for _ in range(seats)),
            seed=new_seed(),
            creator=session.player,
            private=private,
            code=code,
            created=time.time(),
        )
        try:
            room = await self.rooms.create(record)
        except Exception as exc:
            if not outcome_unknown(exc):
                raise
            self.store.outage.failed(exc, req=message["id"], player=session.player)
            raise RoomError(errors.STORE_FAILED, _CREATE_UNKNOWN, room=room_id) from None
        args: dict[str, Any] = {"code": code}
        if message.get("sit", True):
            args["seat"] = 0
        else:
            args["watch"] = True
        await self.store.note_created(
            session.player, room_id, finished_with, self.config.player_ttl
        )
        joined = await room.submit("join", session, args, message["id"])
        session.rooms.add(room_id)
        return {"room": room_id, "code": code, "seat": joined["seat"], "version": joined["version"]}

    async def _room_quota(self, session: Session) -> list[str]:
        """Refuse a create past the player's caps (``rooms_per_minute``; ``waiting_rooms``
        created rooms still waiting with the player seated); else the rooms they created that
        no longer count (started, left, gone), to be forgotten. Costs at most
        ``waiting_rooms`` record reads: the set never holds more than the cap and one."""
        player, per_minute = session.player, self.config.rooms_per_minute
        if per_minute and await self.store.count_creation(player, 60) > per_minute:
            raise RoomError(
                errors.TOO_MANY_ROOMS, f"at most {per_minute} new rooms a minute; wait a little"
            )
        done: list[str] = []
        counted = 0
        for room_id, blob in (await self.store.created_rooms(player)).items():
            if blob is not None and _waits_with(RoomRecord.unpack(blob), player):
                counted += 1
            else:
                done.append(room_id)
        cap = self.config.waiting_rooms
        if cap and counted >= cap:
            raise RoomError(
                errors.TOO_MANY_ROOMS,
                f"you sit in {counted} waiting rooms you created; start or leave one first",
            )
        return done

    # -- outbox drained after overflow ---------------------------------------------------------

    def _resnapshot(self, session: Session, room_id: str) -> None:
        room = self.rooms.rooms.get(room_id)
        if room is None:
            session.clear_stale(room_id)
            return

        async def ask() -> None:
            try:
                await room.submit("resnapshot", session, {})
            except RoomError:
                pass

        task = asyncio.get_running_loop().create_task(ask())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- slow connections ----------------------------------------------------------------------

    async def sweep_slow(self, every: float = 1.0) -> None:
        """Close connections that have not taken a frame for ``slow_timeout`` seconds (4000);
        the client reconnects and resumes from a snapshot."""
        while True:
            await asyncio.sleep(every)
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


def _waits_with(record: RoomRecord, player: str) -> bool:
    """Whether the room still waits for players with ``player`` seated in it."""
    return record.status == WAITING and record.seat_of(player) is not None
