"""The room record: everything about a room, as stored in Redis (one msgpack map).

The record is immutable in use: a change builds a new record, stores it, and only then replaces
the old one in memory, so a failed write leaves the room exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import msgpack

from playhall_protocol.codec import pack

WAITING: Final = "waiting"
PLAYING: Final = "playing"
FINISHED: Final = "finished"

#: Accepted move replies remembered per player, so a repeated move id is answered again.
SEEN_PER_PLAYER: Final = 32


@dataclass(frozen=True)
class Seat:
    player: str | None = None  # player id holding the seat (None: empty, or a bot)
    name: str | None = None
    bot: bool = False
    ready: bool = False
    #: Why the server's bot plays for the player holding the seat, if it does: ``"timeout"``
    #: (their clock ran out under the ``bot`` policy) or ``"away"`` (all their connections
    #: gone for ``away_takeover`` seconds while the game waited for them). None: they play.
    stand_in: str | None = None

    @property
    def taken(self) -> bool:
        return self.bot or self.player is not None

    def as_dict(self) -> dict[str, Any]:
        """The seat as stored in the record and shown in views."""
        return {
            "player": self.player,
            "name": self.name,
            "bot": self.bot,
            "ready": self.ready,
            "stand_in": self.stand_in,
        }


def played_by_players(seats: tuple[Seat, ...]) -> tuple[Seat, ...]:
    """``seats`` without stand-in marks (the very same tuple if none has one): once a game is
    over nobody moves for anybody, and a finished room must show no seat as played by the
    server's bot."""
    if all(seat.stand_in is None for seat in seats):
        return seats
    return tuple(Seat(s.player, s.name, s.bot, s.ready) for s in seats)


@dataclass(frozen=True, init=False)
class RoomRecord:
    id: str
    game: str
    options: dict[str, Any]
    seats: tuple[Seat, ...]
    #: The room's 32-byte secret (``playhall_protocol.fairness``): its commitment is shown from
    #: the start, the secret itself only once the game is over.
    secret: bytes
    creator: str
    private: bool = False
    code: str | None = None
    status: str = WAITING
    version: int = 0
    state: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    #: Absolute time (epoch seconds) of the next automatic step, if one is pending.
    deadline: float | None = None
    rematch: str | None = None
    rematch_of: str | None = None
    created: float = 0.0
    #: player id -> {move id: version it produced} of their last accepted moves, oldest first.
    seen: dict[str, dict[Any, int]] = field(default_factory=dict)
    #: The seats' clocks while a game with a clock is played (``rooms.clocks.Clocks``).
    clocks: dict[str, Any] | None = None
    #: Per seat, the entropy its player gave with ``ready`` (None: none, or not ready). Fixed
    #: when the game starts: with the secret it makes the key the game draws from.
    contributions: tuple[bytes | None, ...] = ()
    #: Whether the game counts for its players' ratings (playhall.ratings says when it can).
    rated: bool = False
    #: Players whose chat an operator muted in this room (``playhall admin mute``).
    muted: tuple[str, ...] = ()

    def __init__(
        self,
        id: str,
        game: str,
        options: dict[str, Any],
        seats: tuple[Seat, ...],
        secret: bytes,
        creator: str,
        private: bool = False,
        code: str | None = None,
        status: str = WAITING,
        version: int = 0,
        state: dict[str, Any] | None = None,
        outcome: dict[str, Any] | None = None,
        deadline: float | None = None,
        rematch: str | None = None,
        rematch_of: str | None = None,
        created: float = 0.0,
        seen: dict[str, dict[Any, int]] | None = None,
        clocks: dict[str, Any] | None = None,
        contributions: tuple[bytes | None, ...] = (),
        rated: bool = False,
        muted: tuple[str, ...] = (),
    ) -> None:
        """The fields in order, as the dataclass would take them (see docs/operations.md, "The
        compiled build", for why it is written out)."""
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "game", game)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "secret", secret)
        object.__setattr__(self, "creator", creator)
        object.__setattr__(self, "private", private)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "deadline", deadline)
        object.__setattr__(self, "rematch", rematch)
        object.__setattr__(self, "rematch_of", rematch_of)
        object.__setattr__(self, "created", created)
        object.__setattr__(self, "seen", {} if seen is None else seen)
        object.__setattr__(self, "clocks", clocks)
        object.__setattr__(self, "contributions", contributions)
        object.__setattr__(self, "rated", rated)
        object.__setattr__(self, "muted", muted)

    def evolve(self, **changes: Any) -> RoomRecord:
        """A new record with ``changes`` and the version moved on by one."""
        values = self.fields()
        unknown = changes.keys() - values.keys()
        if unknown:  # said here: the compiled build's own message would only count them
            raise TypeError(f"a room record has no field {', '.join(sorted(unknown))}")
        values.update(changes)
        values["version"] = self.version + 1
        return RoomRecord(**values)

    def stepped(
        self,
        state: dict[str, Any],
        status: str,
        outcome: dict[str, Any] | None,
        deadline: float | None,
        seen: dict[str, dict[Any, int]] | None,
        clocks: dict[str, Any] | None = None,
    ) -> RoomRecord:
        """The next version after a game step (``seen``: None for unchanged): :meth:`evolve`
        with these fields, for the path every move takes. The step that ends the game ends
        every stand-in too (see :func:`played_by_players`)."""
        return RoomRecord(
            self.id,
            self.game,
            self.options,
            self.seats if status != FINISHED else played_by_players(self.seats),
            self.secret,
            self.creator,
            self.private,
            self.code,
            status,
            self.version + 1,
            state,
            outcome,
            deadline,
            self.rematch,
            self.rematch_of,
            self.created,
            self.seen if seen is None else seen,
            clocks,
            self.contributions,
            self.rated,
            self.muted,
        )

    def fields(self) -> dict[str, Any]:
        """Every field by name, in order."""
        return {
            "id": self.id,
            "game": self.game,
            "options": self.options,
            "seats": self.seats,
            "secret": self.secret,
            "creator": self.creator,
            "private": self.private,
            "code": self.code,
            "status": self.status,
            "version": self.version,
            "state": self.state,
            "outcome": self.outcome,
            "deadline": self.deadline,
            "rematch": self.rematch,
            "rematch_of": self.rematch_of,
            "created": self.created,
            "seen": self.seen,
            "clocks": self.clocks,
            "contributions": self.contributions,
            "rated": self.rated,
            "muted": self.muted,
        }

    def seat_of(self, player: str) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat.player == player and not seat.bot:
                return index
        return None

    def with_seat(self, index: int, seat: Seat) -> tuple[Seat, ...]:
        return self.seats[:index] + (seat,) + self.seats[index + 1 :]

    def seen_version(self, player: str, move_id: Any) -> int | None:
        """The version an earlier move with this id produced, if it was accepted."""
        mine = self.seen.get(player)
        return None if mine is None else mine.get(move_id)

    def remember(self, player: str, move_id: Any, version: int) -> dict[str, dict[Any, int]]:
        """``seen`` with this move added (and the player's oldest dropped past the limit)."""
        mine = dict(self.seen.get(player, {}))
        mine[move_id] = version
        if len(mine) > SEEN_PER_PLAYER:
            del mine[next(iter(mine))]
        seen = dict(self.seen)
        seen[player] = mine
        return seen

    # -- storage -------------------------------------------------------------------------------

    def pack(self) -> bytes:
        """The record as one msgpack map (what :meth:`unpack` reads), keys in field order.
        Runs at a room's checkpoints, not with every move (see ``rooms.replay``)."""
        data = self.fields()
        data["seats"] = [seat.as_dict() for seat in self.seats]
        data["contributions"] = list(self.contributions)
        data["muted"] = list(self.muted)
        return pack(data)

    @classmethod
    def unpack(cls, blob: bytes) -> RoomRecord:
        data = msgpack.unpackb(blob, raw=False, strict_map_key=False)
        data["seats"] = tuple(Seat(**s) for s in data["seats"])
        data["contributions"] = tuple(data.get("contributions", ()))
        data["muted"] = tuple(data.get("muted", ()))
        if "seed" in data:  # a record stored before rooms had secrets: its seed names a key
            data["secret"] = data.pop("seed").to_bytes(32, "big")
        return cls(**data)
