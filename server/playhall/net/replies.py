"""The reply router: a room's answer to a request reaches its connection by address.

A request handed to a room carries a :class:`playhall.rooms.handle.ReplyTo` (the connection's
id, the request's id), never a callback; the room gives its answer to this router, which finds
the connection and sends the ``ok`` or ``error`` frame, then lets the connection take its next
request. A connection stays known here until its task ends, which is after its last request
in flight was answered, so an answer always finds its connection, or the connection is gone
and nothing waits for it.
"""

from __future__ import annotations

from typing import Any, Protocol

from playhall.counters import Counters
from playhall.games.contract import Rejected
from playhall.net.session import Session, error_frame, ok_frame
from playhall.rooms.handle import ReplyTo
from playhall.rooms.table import RoomError
from playhall_protocol import ProtocolError, errors


class Elsewhere(Protocol):
    """Sends the answer to a request another process forwarded (``playhall.fleet.owner``)."""

    def reply(self, to: ReplyTo, result: dict[str, Any] | None, error: RoomError | None) -> None:
        ...


class ReplyRouter:
    """Also the fleet's way to this process's connections (``playhall.fleet.edge``'s
    ``Connections``): the frames and answers other processes send them come in here."""

    def __init__(self, counters: Counters) -> None:
        #: Connection id -> its session, from its first frame until its task ends.
        self.sessions: dict[int, Session] = {}
        self.counters = counters  # the answers, counted for the metrics
        #: Where answers addressed to another process's connections go (set by the fleet).
        self.elsewhere: Elsewhere | None = None

    def add(self, session: Session) -> None:
        self.sessions[session.id] = session

    def remove(self, session: Session) -> None:
        self.sessions.pop(session.id, None)

    def deliver(
        self, to: ReplyTo, kind: str, room: str, result: dict[str, Any] | None,
        error: RoomError | None,
    ) -> None:
        """Answer request ``to.request`` (of type ``kind``) of connection ``to.connection``:
        exactly one frame, then the connection's next request may go. An answer to a request
        another process forwarded goes back to it (counted there)."""
        if to.edge is not None:
            assert self.elsewhere is not None
            self.elsewhere.reply(to, result, error)
            return
        session = self.sessions.get(to.connection)
        if session is None:  # gone, and nothing waits for the answer
            return
        rid = to.request
        counters = self.counters
        try:
            if error is None:
                session.reply(ok_frame(rid, result or {}))
                if kind == "move":  # (a plain attribute: a move's answer is counted cheaply)
                    counters.moves_ok += 1
                else:
                    counters.request(kind, "ok")
            else:
                counters.request(kind, error.code)
                refuse(session, rid, error, room)
        except Exception:  # the request still gets its one answer
            session.log.exception("reply_failed", req=rid, player=session.player)
            session.reply(error_frame(rid, errors.INTERNAL, "internal error"))
            counters.request(kind, errors.INTERNAL)
        finally:
            session.answered()


    # -- the fleet's frames for this process's connections (playhall.fleet.edge) ----------------

    def push(self, connection: int, frame: bytes, room: str | None) -> bool:
        session = self.sessions.get(connection)
        if session is None or session.gone:
            return False
        session.push(frame, room)
        return True

    def clear_stale(self, connection: int, room: str) -> None:
        session = self.sessions.get(connection)
        if session is not None:
            session.clear_stale(room)

    def mark_stale(self, connection: int, room: str) -> None:
        session = self.sessions.get(connection)
        if session is not None:
            session.mark_stale(room)

    def viewer(self, connection: int) -> Session | None:
        session = self.sessions.get(connection)
        return None if session is None or session.gone else session


def refuse(
    session: Session, rid: int | None, exc: ProtocolError | RoomError | Rejected, room: Any
) -> None:
    """Answer a request with its refusal (code, reason and any extra fields), and log it."""
    extra = exc.extra if isinstance(exc, RoomError) else {}
    session.reply(error_frame(rid, exc.code, exc.reason, **extra))
    session.log.info(
        "refused", code=exc.code, reason=exc.reason, req=rid, player=session.player, room=room
    )
