"""The operator's listener (``admin_listen``): what ``playhall admin`` asks of a server process.

Plain HTTP, one request per connection: ``POST /admin/<action>`` with a JSON object as the body,
answered with a JSON object (``{"error": code, "reason": ...}`` and a 4xx or 5xx status when
refused). Every request names its operator in the ``X-Playhall-Operator`` header (the name the
action is logged under; a header a browser cannot send across sites without asking, so a web
page cannot make an operator's browser act), and carries ``Authorization: Bearer <admin_token>``
when a token is set. The listener is on the loopback interface by default; on any other address
it needs a token (:func:`check_listen`).

Actions (docs/operations.md, "Operator commands"):

- ``rooms``, ``room``: the rooms stored in Redis, read there directly (status, game, seats, the
  process holding each one's lease);
- ``end``, ``mute``, ``unmute``: sent to the room through the room manager's handle, so the
  process that holds the room carries them out (:mod:`playhall.rooms.commands`,
  ``operator_end`` and ``operator_mute``), each a new version of the room its viewers get;
- ``refuse``, ``refusals``, ``lift``: client addresses refused for a time, kept in Redis
  (:mod:`playhall.store.refused`), so every process refuses them at ``hello``.

Each action is logged once (``admin_action``) with the operator, the peer, what it named and how
it ended.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, Final, Protocol

from playhall import log
from playhall.config import parse_listen
from playhall.rooms.handle import RoomHandle
from playhall.rooms.ids import is_room_id
from playhall.rooms.record import FINISHED, PLAYING, WAITING, RoomRecord
from playhall.rooms.table import RoomError
from playhall.store.outage import is_store_error
from playhall.store.redis_store import Store
from playhall_protocol import errors

logger = log.get("playhall.admin")

#: The header naming the operator, and the most characters a name may have.
OPERATOR_HEADER: Final = "x-playhall-operator"
OPERATOR_MAX: Final = 64
#: Bounds of a request: its head, its body, and the seconds it may take to arrive.
HEAD_MAX: Final = 8192
BODY_MAX: Final = 16384
READ_TIMEOUT: Final = 5.0
#: The longest an address may be refused for (30 days), and a refusal reason's length.
REFUSE_MAX_SECONDS: Final = 30 * 24 * 3600
REASON_MAX: Final = 200
#: Rooms a listing shows at most (``limit``), and by default.
LIST_MAX: Final = 1000
LIST_DEFAULT: Final = 100
#: What ``rooms`` lists by ``status``: ``live`` (the default) is every room not finished.
STATUSES: Final = {
    "live": {WAITING, PLAYING},
    WAITING: {WAITING},
    PLAYING: {PLAYING},
    FINISHED: {FINISHED},
    "all": {WAITING, PLAYING, FINISHED},
}

#: HTTP statuses of refusals, by code (any other code: 400).
_STATUS: Final = {
    "unauthorized": HTTPStatus.UNAUTHORIZED,
    "not_found": HTTPStatus.NOT_FOUND,
    "unknown_action": HTTPStatus.NOT_FOUND,
    errors.NO_SUCH_ROOM: HTTPStatus.NOT_FOUND,
    errors.NO_SUCH_PLAYER: HTTPStatus.NOT_FOUND,
    errors.GAME_OVER: HTTPStatus.CONFLICT,
    errors.STORE_FAILED: HTTPStatus.SERVICE_UNAVAILABLE,
    errors.DRAINING: HTTPStatus.SERVICE_UNAVAILABLE,
    errors.OVERLOADED: HTTPStatus.SERVICE_UNAVAILABLE,
    "method_not_allowed": HTTPStatus.METHOD_NOT_ALLOWED,
    "too_large": HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
}


class Refused(Exception):
    """An admin request refused: an error code (the protocol's where one fits) and a reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


class Rooms(Protocol):
    """What the admin needs of the room manager (:class:`playhall.rooms.manager.RoomManager`)."""

    async def handle(self, room_id: str) -> RoomHandle: ...


def check_listen(listen: str, token: str) -> None:
    """Refuse (ValueError) an ``admin_listen`` off the loopback interface without a token: the
    operator's commands are never open to a network by default."""
    if not listen or token:
        return
    host, _ = parse_listen(listen)
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"admin_listen {listen} is not a loopback address: set admin_token, so that "
            "only operators holding it can act"
        )


class Admin:
    def __init__(self, store: Store, rooms: Rooms, token: str) -> None:
        self.store = store
        self.rooms = rooms
        self._token = f"Bearer {token}".encode() if token else b""
        self.actions: dict[str, Callable[[dict[str, Any], str], Awaitable[dict[str, Any]]]] = {
            "rooms": self.list_rooms,
            "room": self.show_room,
            "end": self.end_room,
            "mute": self.mute,
            "unmute": self.unmute,
            "refuse": self.refuse,
            "refusals": self.refusals,
            "lift": self.lift,
        }

    async def listen(self, host: str, port: int) -> asyncio.Server:
        return await asyncio.start_server(self._serve, host, port, limit=HEAD_MAX)

    # -- HTTP ------------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        peer_text = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        try:
            try:
                async with asyncio.timeout(READ_TIMEOUT):
                    method, path, headers, body = await _read_request(reader)
            except Refused as exc:
                status, answer = _refusal(exc)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                    ValueError, UnicodeDecodeError):
                status, answer = _refusal(Refused("bad_request", "not an HTTP request this "
                                                  "listener takes"))
            else:
                status, answer = await self.answer(method, path, headers, body, peer_text)
            writer.write(_response(status, answer))
            await writer.drain()
        except ConnectionError:
            pass  # the operator's program went away: nothing to answer
        except Exception:  # a bug: said in the log, the connection closed unanswered
            logger.exception("admin_request_failed", peer=peer_text)
        finally:
            writer.close()

    async def answer(
        self, method: str, path: str, headers: dict[str, str], body: bytes, peer: str
    ) -> tuple[HTTPStatus, dict[str, Any]]:
        """The status and JSON answer to one request; the action is logged once."""
        action = path.split("?", 1)[0].removeprefix("/admin/")
        operator = headers.get(OPERATOR_HEADER, "").strip()
        args: dict[str, Any] = {}
        try:
            if not path.startswith("/admin/"):
                raise Refused("not_found", "not found: the operator's requests are "
                              "POST /admin/<action>")
            if method != "POST":
                raise Refused("method_not_allowed", "only POST")
            if self._token and not hmac.compare_digest(
                headers.get("authorization", "").encode(), self._token
            ):
                raise Refused("unauthorized", "the operator's requests need the admin token "
                              "(Authorization: Bearer <admin_token>)")
            if not operator or len(operator) > OPERATOR_MAX or not operator.isprintable():
                raise Refused("bad_operator", "name the operator in the X-Playhall-Operator "
                              f"header (1 to {OPERATOR_MAX} printable characters)")
            args = _json_object(body)
            run = self.actions.get(action)
            if run is None:
                raise Refused("unknown_action", f"no action {action!r}: one of "
                              f"{', '.join(sorted(self.actions))}")
            result = await run(args, operator)
        except Refused as exc:
            return self._logged(action, operator, peer, args, exc)
        except RoomError as exc:
            return self._logged(action, operator, peer, args, Refused(exc.code, exc.reason))
        except Exception as exc:
            if not is_store_error(exc):
                logger.exception("admin_action_failed", action=action, operator=operator)
                return self._logged(action, operator, peer, args,
                                    Refused(errors.INTERNAL, "internal error"))
            self.store.outage.failed(exc, during="admin", action=action)
            return self._logged(action, operator, peer, args,
                                Refused(errors.STORE_FAILED, "Redis is unreachable; retry"))
        logger.info("admin_action", action=action, operator=operator, peer=peer, result="ok",
                    **_named(args))
        return HTTPStatus.OK, result

    def _logged(
        self, action: str, operator: str, peer: str, args: dict[str, Any], exc: Refused
    ) -> tuple[HTTPStatus, dict[str, Any]]:
        logger.warning("admin_action", action=action, operator=operator or None, peer=peer,
                       result=exc.code, reason=exc.reason, **_named(args))
        return _refusal(exc)

    # -- rooms, from Redis ---------------------------------------------------------------------

    async def list_rooms(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        status = _text(args, "status", "live")
        if status not in STATUSES:
            raise Refused("bad_request", f"status is one of {', '.join(STATUSES)}")
        game = _text(args, "game", "")
        limit = args.get("limit", LIST_DEFAULT)
        if type(limit) is not int or not 1 <= limit <= LIST_MAX:
            raise Refused("bad_request", f"limit is a whole number from 1 to {LIST_MAX}")
        wanted = STATUSES[status]
        ids = await self.store.rooms.room_ids()
        found = []
        for start in range(0, len(ids), 500):
            batch = ids[start:start + 500]
            for blob, version, lease in await self.store.rooms.peek(batch):
                if blob is None:
                    continue  # deleted since the scan
                record = RoomRecord.unpack(blob)
                if record.status in wanted and (not game or record.game == game):
                    found.append(_summary(record, version, lease))
        found.sort(key=lambda r: (r["created"], r["room"]))
        return {"rooms": found[:limit], "matched": len(found)}

    async def show_room(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        room_id = _room(args)
        ((blob, version, lease),) = await self.store.rooms.peek([room_id])
        if blob is None:
            raise Refused(errors.NO_SUCH_ROOM, f"no room {room_id!r}")
        record = RoomRecord.unpack(blob)
        shown = _summary(record, version, lease)
        shown.update(
            options=record.options, creator=record.creator, code=record.code,
            outcome=record.outcome, muted=list(record.muted), rematch=record.rematch,
            rematch_of=record.rematch_of, rated=record.rated,
        )
        return {"room": shown}

    # -- rooms, through their handle (whichever process holds them) ----------------------------

    async def end_room(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        room = await self._handle(_room(args))
        return await room.ask("_operator_end", None, {"operator": operator})

    async def mute(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        return await self._mute(args, operator, True)

    async def unmute(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        return await self._mute(args, operator, False)

    async def _mute(self, args: dict[str, Any], operator: str, muted: bool) -> dict[str, Any]:
        room_id = _room(args)
        player = _text(args, "player", "")
        if not player or len(player) > 64:
            raise Refused("bad_request", "name the player by their id (as `room` shows it)")
        room = await self._handle(room_id)
        return await room.ask(
            "_operator_mute", None, {"player": player, "muted": muted, "operator": operator}
        )

    async def _handle(self, room_id: str) -> RoomHandle:
        """The room's handle: the room here, or (in a fleet) one that forwards to the process
        holding it. Never the manager's own table of rooms: that is this process's alone."""
        return await self.rooms.handle(room_id)

    # -- client addresses, in Redis --------------------------------------------------------------

    async def refuse(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        address = _address(args)
        seconds = args.get("seconds")
        # (NaN fails the range: every comparison with it is false.)
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not (
            0 < seconds <= REFUSE_MAX_SECONDS
        ):
            raise Refused("bad_duration", "seconds is a number above 0 and at most "
                          f"{REFUSE_MAX_SECONDS} (30 days)")
        reason = _text(args, "reason", "")
        if len(reason) > REASON_MAX:
            raise Refused("bad_request", f"a reason has at most {REASON_MAX} characters")
        refusal = await self.store.refused.refuse(address, seconds, operator, reason, time.time())
        return {"refusal": refusal.as_dict()}

    async def refusals(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        return {"refusals": [r.as_dict() for r in await self.store.refused.all(LIST_MAX)]}

    async def lift(self, args: dict[str, Any], operator: str) -> dict[str, Any]:
        address = _address(args)
        if not await self.store.refused.lift(address):
            raise Refused("not_found", f"{address} is not refused")
        return {"lifted": address}


# -- what a request carries ----------------------------------------------------------------------


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes]:
    """The method, path, headers (names in lower case) and body of one HTTP/1.1 request."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.split("\r\n")
    method, path, version = request_line.split(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(version)
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise Refused("bad_request", "send the body with a Content-Length")
    length = int(headers.get("content-length", "0"))
    if not 0 <= length <= BODY_MAX:
        raise Refused("too_large", f"a request's body has at most {BODY_MAX} bytes")
    return method, path, headers, await reader.readexactly(length)


def _json_object(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        value = json.loads(body)
    except ValueError:
        raise Refused("bad_request", "the body is not JSON") from None
    if not isinstance(value, dict):
        raise Refused("bad_request", "the body is a JSON object")
    return value


def _text(args: dict[str, Any], name: str, default: str) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise Refused("bad_request", f"{name} is a string")
    return value


def _room(args: dict[str, Any]) -> str:
    room_id = _text(args, "room", "")
    if not is_room_id(room_id):
        raise Refused(errors.NO_SUCH_ROOM, f"no room {room_id!r}")
    return room_id


def _address(args: dict[str, Any]) -> str:
    """The client address named, as the server writes it (``ipaddress``'s form): IPv4 or IPv6,
    without a port."""
    text = _text(args, "address", "").strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise Refused("bad_address", f"{text!r} is not an IPv4 or IPv6 address "
                      "(without a port)") from None


def _named(args: dict[str, Any]) -> dict[str, Any]:
    """What an action's log line names of its arguments, each cut short (``note``: the reason
    given for a refusal)."""
    named: dict[str, Any] = {
        k: str(args[k])[:REASON_MAX] for k in ("room", "player", "address", "seconds")
        if k in args
    }
    if args.get("reason"):
        named["note"] = str(args["reason"])[:REASON_MAX]
    return named


def _summary(record: RoomRecord, version: int, lease: str | None) -> dict[str, Any]:
    """A room as the operator's listing shows it (``record``: its last checkpoint, ``version``:
    its own); ``owner``: the process holding its lease (``<instance>|<fence>`` in Redis), None
    if none does (nobody is in it, or it is idle)."""
    owner, _, fence = lease.rpartition("|") if lease is not None else ("", "", "")
    return {
        "room": record.id,
        "game": record.game,
        "status": record.status,
        "version": version,
        "private": record.private,
        "created": record.created,
        "seats": [
            {"player": s.player, "name": s.name, "bot": s.bot, "stand_in": s.stand_in}
            for s in record.seats
        ],
        "owner": owner or None,
        "fence": int(fence) if fence.isdigit() else None,
    }


def _refusal(exc: Refused) -> tuple[HTTPStatus, dict[str, Any]]:
    return _STATUS.get(exc.code, HTTPStatus.BAD_REQUEST), {"error": exc.code,
                                                          "reason": exc.reason}


def _response(status: HTTPStatus, answer: dict[str, Any]) -> bytes:
    body = json.dumps(answer).encode()
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body
