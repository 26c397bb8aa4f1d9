"""The room record: everything about a room, as stored in Redis (one msgpack map).

The record is immutable in use: a change builds a new record, stores it, and only then replaces
the old one in memory, so a failed write leaves the room exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import is_
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

    def as_dict(self) -> dict[str, Any]:
        """The seat as stored in the record and shown in views."""
        return {"player": self.player, "name": self.name, "bot": self.bot, "ready": self.ready}


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
        own = getattr(self, "__dict__", None)
        if own is None:
            # Compiled by mypyc (the opt-in build): a native class has no instance dict, and
            # its __init__ is cheap, so the record is built the ordinary way.
            values = {name: getattr(self, name) for name in _FIELDS}
            values.update(changes)
            values["version"] = self.version + 1
            return RoomRecord(**values)
        new = object.__new__(RoomRecord)
        fields_of = new.__dict__
        fields_of.update(own)
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
        """The record as one msgpack map (what :meth:`unpack` reads), keys in field order.

        This runs for every move, so what did not change since the room's last record is not
        packed again: the fields fixed for a room's life, the seats and each player's list of
        seen moves are kept packed, found by the identity of the objects (records, and the
        lists in them, are never changed once built), and the map is assembled from the pieces.
        The bytes are the same as packing the whole map at once."""
        fixed = (
            self.id,
            self.game,
            self.options,
            self.seed,
            self.creator,
            self.private,
            self.code,
            self.rematch_of,
            self.created,
        )  # _FIXED_FIELDS, in order
        hit = _FIXED.get(self.id)
        if hit is not None and all(map(is_, hit[0], fixed)):
            head, middle, tail = hit[1]
        else:
            if len(_FIXED) >= 4096:
                _FIXED.clear()
            head, middle, tail = (
                _pairs(dict(zip(_FIXED_FIELDS[:3], fixed[:3], strict=True))),
                _pairs(dict(zip(_FIXED_FIELDS[3:7], fixed[3:7], strict=True))),
                _pairs(dict(zip(_FIXED_FIELDS[7:], fixed[7:], strict=True))),
            )
            _FIXED[self.id] = (fixed, (head, middle, tail))
        pack = _PACKER.pack
        return b"".join(
            (
                _HEADER,
                head,
                _KEY_SEATS,
                _packed(self.seats, _pack_seats),
                middle,
                _KEY_STATUS,
                pack(self.status),
                _KEY_VERSION,
                pack(self.version),
                _KEY_STATE,
                pack(self.state),
                _KEY_OUTCOME,
                pack(self.outcome),
                _KEY_DEADLINE,
                pack(self.deadline),
                _KEY_REMATCH,
                pack(self.rematch),
                tail,
                _KEY_SEEN,
                _pack_map(self.seen),
            )
        )

    @classmethod
    def unpack(cls, blob: bytes) -> RoomRecord:
        data = msgpack.unpackb(blob, raw=False, strict_map_key=False)
        data["seats"] = tuple(Seat(**s) for s in data["seats"])
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(RoomRecord))
_FIELD_SET = frozenset(_FIELDS)

# -- packing in pieces (see RoomRecord.pack) ------------------------------------------------

#: One packer for every record: packing runs on the server's one event-loop thread, and a packer
#: costs more to make than a small value costs to pack.
_PACKER = msgpack.Packer(use_bin_type=True)
_KEY_SEATS = _PACKER.pack("seats")
_KEY_STATE = _PACKER.pack("state")
_KEY_SEEN = _PACKER.pack("seen")
_HEADER = _PACKER.pack_map_header(len(_FIELDS))
#: Fields that stay as they are for a room's whole life, in field order (pack() names the
#: others one by one, between them).
_FIXED_FIELDS = (
    # id, game, options | seats | seed, creator, private, code | status ... rematch | ...
    "id",
    "game",
    "options",
    "seed",
    "creator",
    "private",
    "code",
    # ... rematch_of, created | seen
    "rematch_of",
    "created",
)
_KEY_STATUS = _PACKER.pack("status")
_KEY_VERSION = _PACKER.pack("version")
_KEY_OUTCOME = _PACKER.pack("outcome")
_KEY_DEADLINE = _PACKER.pack("deadline")
_KEY_REMATCH = _PACKER.pack("rematch")
_NAMED = {"status", "version", "outcome", "deadline", "rematch", "seats", "state", "seen"}
if set(_FIXED_FIELDS) | _NAMED != set(_FIELDS) or len(_FIXED_FIELDS) + len(_NAMED) != len(_FIELDS):
    raise RuntimeError("RoomRecord.pack does not pack exactly the record's fields")
#: Room id -> (its fixed fields, those fields packed as map pairs).
_FIXED: dict[str, tuple[tuple[Any, ...], tuple[bytes, bytes, bytes]]] = {}
#: Lists at least this long in the seen map are kept packed (see _packed).
_LONG = 16
#: Packed objects by id: (the object, its length when packed, its bytes). The entry holds the
#: object, so its id cannot be reused while it is here; the length is a cheap guard against a
#: list changed in place (which nothing does: states and records are immutable in use).
_PACKED: dict[int, tuple[Any, int, bytes]] = {}


def _map_header(size: int) -> bytes:
    header: bytes = _PACKER.pack_map_header(size)
    return header


def _pack_seats(seats: tuple[Seat, ...]) -> bytes:
    packed: bytes = _PACKER.pack([seat.as_dict() for seat in seats])
    return packed


def _pack_value(value: Any) -> bytes:
    packed: bytes = _PACKER.pack(value)
    return packed


def _packed(value: Any, pack: Any) -> bytes:
    """``pack(value)``, remembered by the identity of ``value``."""
    hit = _PACKED.get(id(value))
    if hit is not None and hit[0] is value and hit[1] == len(value):
        return hit[2]
    if len(_PACKED) >= 4096:
        _PACKED.clear()
    packed: bytes = pack(value)
    _PACKED[id(value)] = (value, len(value), packed)
    return packed


def _pairs(data: dict[str, Any]) -> bytes:
    """The key-value pairs of ``data`` packed, without the map's header."""
    packed: bytes = _PACKER.pack(data)
    return packed[len(_map_header(len(data))) :]


def _pack_map(data: dict[str, Any]) -> bytes:
    """``data`` packed, with its long lists taken from (or put into) the cache. (Worth it for
    the seen map, whose values are long lists that mostly did not change; a game state, with
    a few long lists among many small values, costs more to look through than to pack.)"""
    if type(data) is not dict:
        return _pack_value(data)
    parts = [_map_header(len(data))]
    run: dict[str, Any] = {}
    for key, value in data.items():
        if type(value) is list and len(value) >= _LONG:
            if run:
                parts.append(_pairs(run))
                run = {}
            parts.append(_PACKER.pack(key))
            parts.append(_packed(value, _pack_value))
        else:
            run[key] = value
    if run:
        parts.append(_pairs(run))
    return b"".join(parts)
