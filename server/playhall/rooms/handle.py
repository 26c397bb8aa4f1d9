"""How the network reaches a room, and how a room's answer finds its way back.

:class:`RoomHandle` is all the endpoint (``playhall.net.endpoint``) knows of a room: ``submit``
a command whose answer goes to a reply address, or ``ask`` and wait for the answer. Its local
form is the room's actor (:class:`playhall.rooms.actor.Room`) in this process; the remote form
for a room another process holds has the same interface and publishes the command to
that process (:class:`playhall.fleet.edge.RemoteRoom`), and the room manager
(``RoomManager.handle``, ``RoomManager.ready``) is where the one or the other is handed out.

A reply is addressed, not called back: :class:`ReplyTo` names the connection and the request
(plain data, which can cross a process boundary), and the room hands its answer to the
:class:`Replies` router it was given (``playhall.net.replies.ReplyRouter``), which finds the
connection and sends the ``ok`` or ``error`` frame.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from playhall.rooms.audience import Viewer
from playhall.rooms.table import RoomError


class ReplyTo:
    """Where a command's answer goes: the connection (its id in the process that holds it)
    and the request id the answer carries; for a connection another process holds, that
    process (``edge``, its instance name) and its number for the answer (``corr``), see
    ``playhall.fleet``. (A plain class, not a dataclass: one is made per move; see
    docs/operations.md, "The compiled build".)"""

    __slots__ = ("connection", "request", "edge", "corr")

    def __init__(
        self, connection: int, request: int, edge: str | None = None, corr: int = 0
    ) -> None:
        self.connection = connection
        self.request = request
        self.edge = edge
        self.corr = corr


class Replies(Protocol):
    """Delivers a room's answers by address (implemented by
    :class:`playhall.net.replies.ReplyRouter`)."""

    def deliver(
        self, to: ReplyTo, kind: str, room: str, result: dict[str, Any] | None,
        error: RoomError | None,
    ) -> None:
        """Answer request ``to`` (of type ``kind``) with ``result``, or with ``error`` if the
        room refused it (``room``: the room that answers, for the log)."""
        ...


class RoomHandle(Protocol):
    """One room, as the network talks to it."""

    @property
    def id(self) -> str: ...

    def submit(
        self, kind: str, viewer: Viewer | None, args: dict[str, Any],
        reply_to: ReplyTo | None = None,
    ) -> None:
        """Queue a command whose answer goes to ``reply_to``; raises :class:`RoomError` at once
        when the room cannot take it (closing, or busy)."""
        ...

    async def ask(
        self, kind: str, viewer: Viewer | None, args: dict[str, Any], request: int | None = None
    ) -> dict[str, Any]:
        """Queue a command and wait for its answer; raises :class:`RoomError` when refused
        (``request``: the asking request's id, for the log)."""
        ...


#: What :meth:`EarlyMail.claim` hands a commit: the channels and payloads to publish with it,
#: in turn, and the edges they are for.
Claimed = tuple[list[bytes], list[str]]


class EarlyMail(Protocol):
    """The frames a room's change sends other processes' viewers, published by the change's
    own commit, so they leave Redis the moment it is stored rather than a round trip later,
    when this process has read that it was (implemented by
    :class:`playhall.fleet.owner.EdgeMail`, on one Redis only: on a Cluster the edges'
    channels are not in the room's slot)."""

    #: The viewer classes whose frames are mail (``playhall.fleet.owner.RemoteViewer``).
    kinds: tuple[type, ...]

    def answer(self, to: ReplyTo, result: dict[str, Any]) -> None:
        """Queue the answer to forwarded request ``to`` behind what its edge is due, for the
        next claim (``result``: the command's, should its change be stored)."""
        ...

    def claim(self) -> Claimed:
        """Everything due to other processes now, numbered as the batches it would otherwise
        have gone in, for the commit to publish."""
        ...

    def lost(self, claimed: Claimed) -> None:
        """The commit that was to publish ``claimed`` did not store its change: the edges it
        was for are told of the gap in their batches' numbers (and sync)."""
        ...


class Fleet(Protocol):
    """The other processes on the same Redis, as the room manager sees them (implemented by
    :class:`playhall.fleet.node.FleetNode`)."""

    def remote(self, room_id: str) -> RoomHandle:
        """A handle that forwards to whichever process holds ``room_id`` (or, when none
        does, takes the room into this one)."""
        ...

    def held(self, room_id: str) -> None:
        """This process now holds ``room_id``: take the requests forwarded to it."""
        ...

    def released(self, room_id: str) -> None:
        """This process let ``room_id`` go: stop taking its requests."""
        ...

    def forget(self, connection: int) -> None:
        """This process's ``connection`` closed."""
        ...

    def moved(self, room_id: str, viewers: Iterable[Viewer], closing: bool) -> None:
        """``room_id`` left this process while ``viewers`` watched it: each finds it where it
        is now (wherever that is), except this process's own connections when ``closing``."""
        ...

    @property
    def early(self) -> EarlyMail | None:
        """The mail a room's commit publishes (None: sent once the commit is answered)."""
        ...
