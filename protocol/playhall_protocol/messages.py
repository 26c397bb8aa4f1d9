"""The messages a client may send, their fields and types, and their validation.

Every client message is a map with ``"t"`` (its type) and ``"id"`` (a request id the reply
echoes as ``"re"``). The server answers every request exactly once, with ``{"t": "ok", "re": id,
...}`` or ``{"t": "error", "re": id, "code": ..., "reason": ...}``; it also pushes messages
without ``"re"`` (``update``, ``snapshot``, ``presence``, ``chat``, ``lobby``, ``notice``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from playhall_protocol.codec import (
    ProtocolError,
    as_binary,
    check_map,
    check_value,
    pack,
    packed_size,
    smallest_form,
    unpack_map,
)
from playhall_protocol.errors import BAD_MESSAGE, UNKNOWN_TYPE

MAX_ID: Final = 2**53 - 1  # fits a JavaScript number exactly
MAX_TEXT: Final = 500  # chat text
MAX_NAME: Final = 32
#: A host's signed token (a JWT): an RS512 signature with a few claims is well under this.
MAX_HOST_TOKEN: Final = 4096
MAX_KEY: Final = 64  # room ids, join codes, move ids, game ids
MAX_ENTROPY: Final = 64  # a player's contribution to a deal (``fairness.MAX_CONTRIBUTION``)


@dataclass(frozen=True)
class Field:
    name: str
    kind: type | tuple[type, ...]
    required: bool = True
    max_len: int | None = None  # for str, bin and list values
    minimum: int | None = None  # for int values
    items: type | None = None  # for list values: the exact type of every item

    @property
    def kinds(self) -> tuple[type, ...]:
        return self.kind if isinstance(self.kind, tuple) else (self.kind,)

    def check(self, value: Any) -> None:
        kind = type(value)
        # Exact types: msgpack decodes to nothing else. A bool is not an int on the wire:
        # `true` is never a seat number.
        fits = bool in self.kinds if kind is bool else isinstance(value, self.kind)
        if not fits:
            expected = _names(self.kinds)
            raise ProtocolError(BAD_MESSAGE, f"field {self.name!r} must be {expected}")
        if kind is list:
            if self.items is not None and not all(type(item) is self.items for item in value):
                each = _names((self.items,))
                raise ProtocolError(
                    BAD_MESSAGE, f"every item of field {self.name!r} must be {each}"
                )
        elif kind is int:
            low = 0 if self.minimum is None else self.minimum
            if not low <= value <= MAX_ID:
                raise ProtocolError(BAD_MESSAGE, f"field {self.name!r} is out of range")
        if (
            (kind is str or kind is list or kind is bytes)
            and self.max_len is not None
            and len(value) > self.max_len
        ):
            raise ProtocolError(BAD_MESSAGE, f"field {self.name!r} is longer than {self.max_len}")


def _names(kinds: tuple[type, ...]) -> str:
    words = {
        str: "a string", int: "an integer", bool: "a boolean", dict: "a map", list: "an array",
        bytes: "binary",
    }
    return " or ".join(words.get(k, k.__name__) for k in kinds)


ROOM = Field("room", str, max_len=MAX_KEY)

#: Client message type -> its fields (besides "t" and "id").
CLIENT_MESSAGES: Final[dict[str, tuple[Field, ...]]] = {
    "hello": (
        Field("protocol", (int, list), max_len=16, items=int),
        Field("token", str, False, 200),
        Field("host_token", str, False, MAX_HOST_TOKEN),
        Field("name", str, False, MAX_NAME),
    ),
    "ping": (),
    "games": (),
    "rooms": (
        Field("game", str, False, MAX_KEY),
        Field("limit", int, False),
        Field("after", str, False, MAX_KEY),
    ),
    "lobby.watch": (Field("game", str, False, MAX_KEY),),
    "lobby.unwatch": (),
    "my_rooms": (),
    "create": (
        Field("game", str, max_len=MAX_KEY),
        Field("seats", int),
        Field("options", dict, False),
        Field("private", bool, False),
        Field("sit", bool, False),
        Field("rated", bool, False),
    ),
    "join": (
        Field("room", str, False, MAX_KEY),
        Field("code", str, False, MAX_KEY),
        Field("seat", int, False),
        Field("watch", bool, False),
    ),
    "leave": (ROOM,),
    "ready": (ROOM, Field("ready", bool, False), Field("entropy", bytes, False, MAX_ENTROPY)),
    "start": (ROOM,),
    "bot": (ROOM, Field("seat", int)),
    "chat": (ROOM, Field("text", str, max_len=MAX_TEXT)),
    "move": (
        ROOM,
        Field("version", int),
        Field("mid", (str, int), max_len=MAX_KEY),
        Field("move", dict),
    ),
    "sync": (ROOM, Field("version", int, False), Field("code", str, False, MAX_KEY)),
    "rematch": (ROOM,),
    "resign": (ROOM,),
    "rename": (Field("name", str, max_len=MAX_NAME),),
    "history": (ROOM, Field("limit", int, False)),
    "record": (ROOM,),
    "replay": (ROOM, Field("seat", int, False)),
    "games_played": (
        Field("player", str, False, MAX_KEY),
        Field("limit", int, False),
        Field("after", str, False, MAX_KEY),
    ),
    "profile": (Field("player", str, False, MAX_KEY),),
    "seek": (
        Field("game", str, max_len=MAX_KEY),
        Field("seats", list, max_len=2, items=int),
        Field("options", dict, False),
        Field("rating", list, False, 2, items=int),
        Field("bots_after", int, False),
    ),
    "cancel_seek": (),
    "leaderboard": (
        Field("game", str, max_len=MAX_KEY),
        Field("limit", int, False),
        Field("after", str, False, MAX_KEY),
    ),
}

#: Types the server pushes without a request.
SERVER_PUSHES = ("update", "snapshot", "presence", "chat", "lobby")


#: Message type -> every field name it may carry (built once: validation runs per message).
_ALLOWED: Final = {
    kind: frozenset({"t", "id", *(f.name for f in fields)})
    for kind, fields in CLIENT_MESSAGES.items()
}


def read(frame: bytes | str) -> tuple[dict[str, Any], str, int]:
    """Decode a client's frame and check it as a message: ``decode`` then ``validate``, with
    every check made once. Raises :class:`ProtocolError`; one raised by ``validate``'s checks
    carries the message's request id (``exc.request_id``, so the reply can name it) and the
    decoded message (``exc.decoded``).

    A plain move (see :func:`_is_plain_move`), the message sent many times a second, is read
    in one pass: its type tests stand for ``decode``'s look at the top map and ``validate``'s,
    only the move's own map is walked, and a key twice is ruled out by the frame's length
    (``codec.smallest_form``) without packing the message again; a frame that cannot be
    cleared that way goes the whole way, which gives the same answers."""
    binary = as_binary(frame)
    message = unpack_map(binary)
    if _is_plain_move(message) and message.get("t") == "move":
        rid = message.get("id")
        if type(rid) is int and 0 <= rid <= MAX_ID:
            move = message["move"]
            check_value(move, 2)
            size = _MOVE_FIXED + packed_size(rid) + packed_size(message["room"]) + packed_size(
                message["version"]) + packed_size(message["mid"]) + len(pack(move))
            if smallest_form(binary, size):
                return message, "move", rid
    check_map(binary, message)
    try:
        kind, rid = validate(message)
    except ProtocolError as exc:
        exc.request_id = request_id_of(message)
        exc.decoded = message
        raise
    return message, kind, rid


#: The bytes of a plain move's frame that do not depend on its values: the map's header, the
#: six keys, and the type's value ("move").
_MOVE_FIXED: Final = 1 + sum(map(packed_size, ("t", "id", "room", "version", "mid", "move"))) + \
    packed_size("move")


def validate(message: dict[str, Any]) -> tuple[str, int]:
    """Check a decoded client message; return its type and request id.

    Raises :class:`ProtocolError`. Unknown fields are refused too: a typo should fail loudly,
    not be silently ignored.
    """
    kind = message.get("t")
    if type(kind) is not str:  # msgpack decodes to exact types: no subclass can come
        raise ProtocolError(BAD_MESSAGE, 'every message needs a string "t"')
    request_id = message.get("id")
    if type(request_id) is not int or not 0 <= request_id <= MAX_ID:  # (a bool is not an int)
        raise ProtocolError(BAD_MESSAGE, 'every request needs an integer "id" (0 .. 2^53-1)')
    if kind == "move" and _is_plain_move(message):
        return kind, request_id
    check_fields(kind, message)
    return kind, request_id


def check_fields(kind: str, message: dict[str, Any]) -> None:
    """The checks of :func:`validate` after "t" and "id": ``kind`` is known, every field is
    allowed, every required one is there, every value fits its :class:`Field`."""
    fields = CLIENT_MESSAGES.get(kind)
    if fields is None:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {kind!r}")
    allowed = _ALLOWED[kind]
    for name in message:
        if name not in allowed:
            raise ProtocolError(BAD_MESSAGE, f"unexpected field {name!r} in {kind!r}")
    for f in fields:
        if f.name in message:
            f.check(message[f.name])
        elif f.required:
            raise ProtocolError(BAD_MESSAGE, f"{kind!r} needs field {f.name!r}")


def _is_plain_move(message: dict[str, Any]) -> bool:
    """Whether a "move" passes :func:`check_fields`, worked out in a few type tests: the move is
    the message sent many times a second, and the table-driven checks cost it more than its
    decoding. Every field of a move is required, so six keys are t, id and those four. False is
    not a refusal: the message then goes through :func:`check_fields`, which names what is wrong
    (tests/protocol/test_messages.py holds the two to the same answers)."""
    if len(message) != 6:
        return False
    room = message.get("room")
    version = message.get("version")
    mid = message.get("mid")
    return (
        type(room) is str
        and len(room) <= MAX_KEY
        and type(version) is int
        and 0 <= version <= MAX_ID
        and type(message.get("move")) is dict
        and (
            (type(mid) is str and len(mid) <= MAX_KEY)
            or (type(mid) is int and 0 <= mid <= MAX_ID)
        )
    )


def request_id_of(message: Any) -> int | None:
    """The request id of a message, if it has a usable one (to address an error reply even when
    the rest of the message is bad)."""
    if isinstance(message, dict):
        rid = message.get("id")
        if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= MAX_ID:
            return rid
    return None
