"""The room record: everything about a room, as stored in Redis (one msgpack map).

The record is immutable in use: a change builds a new record, stores it, and only then replaces
the old one in memory, so a failed write leaves the room exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import msgpack

WAITING = "waiting"
PLAYING = "playing"
FINISHED = "finished"

#: Accepted move replies remembered per player, so a repeated move id is answered again.
SEEN_PER_PLAYER = 32


@dataclass(frozen=True)
class Seat:
    player: str | None = None  # player id holding the seat (None: empty, or a bot)
    name: str | None = None
    bot: bool = False
    ready: bool = False

    @property
    def taken(self) -> bool:
        return self.bot or self.player is not None


@dataclass(frozen=True)
class RoomRecord:
    id: str
    game: str
    options: dict[str, Any]
    seats: tuple[Seat, ...]
    seed: int
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
    #: player id -> [[move id, version it produced], ...] of accepted moves, newest last.
    seen: dict[str, list[list[Any]]] = field(default_factory=dict)

    def evolve(self, **changes: Any) -> RoomRecord:
        """A new record with ``changes`` and the version moved on by one.

        Not ``dataclasses.replace``: it re-runs ``__init__`` with every field, a fifth of the
        room's own work per move. Records are frozen, so a shallow copy is a valid new one."""
        unknown = changes.keys() - _FIELD_SET
        if unknown:
            raise TypeError(f"RoomRecord has no fields {sorted(unknown)}")
        new = object.__new__(RoomRecord)
        fields_of = new.__dict__
        fields_of.update(self.__dict__)
        fields_of.update(changes)
        fields_of["version"] = self.version + 1
        return new

    def seat_of(self, player: str) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat.player == player and not seat.bot:
                return index
        return None

    def with_seat(self, index: int, seat: Seat) -> tuple[Seat, ...]:
        return self.seats[:index] + (seat,) + self.seats[index + 1 :]

    def seen_version(self, player: str, move_id: Any) -> int | None:
        """The version an earlier move with this id produced, if it was accepted."""
        for mid, version in self.seen.get(player, ()):
            if mid == move_id:
                return int(version)
        return None

    def remember(self, player: str, move_id: Any, version: int) -> dict[str, list[list[Any]]]:
        seen = dict(self.seen)
        seen[player] = [*seen.get(player, [])[-(SEEN_PER_PLAYER - 1) :], [move_id, version]]
        return seen

    # -- storage -------------------------------------------------------------------------------

    def pack(self) -> bytes:
        # Not dataclasses.asdict: it deep-copies the whole game state, and this runs per move.
        data = {name: getattr(self, name) for name in _FIELDS}
        data["seats"] = [
            {"player": s.player, "name": s.name, "bot": s.bot, "ready": s.ready} for s in self.seats
        ]
        packed: bytes = msgpack.packb(data, use_bin_type=True)
        return packed

    @classmethod
    def unpack(cls, blob: bytes) -> RoomRecord:
        data = msgpack.unpackb(blob, raw=False, strict_map_key=False)
        data["seats"] = tuple(Seat(**s) for s in data["seats"])
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(RoomRecord))
_FIELD_SET = frozenset(_FIELDS)
