"""Frames on the wire: one msgpack map per binary websocket message.

Strings are msgpack str (UTF-8); raw bytes are msgpack bin; maps have string keys, none twice.
Decoding refuses anything else with a :class:`ProtocolError` carrying an error code, so a bad
frame is always answered, never crashes the reader.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, Final

import msgpack
import msgpack.fallback

from playhall_protocol.errors import BAD_FRAME


class ProtocolError(Exception):
    """A frame or message that breaks the protocol. ``code`` is one of :mod:`.errors`."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        #: The request id of the refused message, where it was decoded and had a usable one
        #: (set by ``messages.read``, so the error reply can name it).
        self.request_id: int | None = None
        #: The refused message as decoded, where it was (set by ``messages.read``: the refusal
        #: is logged and counted by the message's own type and room).
        self.decoded: Any = None


def _as_plain(value: Any) -> Any:
    """The packer's ``default``: what it is handed that is not exactly a msgpack type, as the
    plain value ``msgpack.packb`` would pack in its place (a tuple as an array, an ``IntEnum``
    as its int, a str ``Enum`` as its str, a dict or list subclass as a dict or list)."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    # The base type's own conversion: a subclass's __str__ or __int__ may say something else.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, bytes):
        return bytes.__bytes__(value)
    raise TypeError(f"can not serialize {type(value).__name__!r} object")


#: One packer for every message: ``msgpack.packb`` builds a fresh one (and its buffer) per call,
#: a third of the cost of packing a small message. A packer that fails part way resets itself.
#: ``strict_types``: exact type checks, where msgpack otherwise asks of every value whether it
#: is a subclass of float, bytes, ... in turn (packing an update frame takes 40 % less time);
#: the few values that are not exact types go through :func:`_as_plain`, so the bytes are the
#: same as ``msgpack.packb``'s.
_PACKER: Final = msgpack.Packer(use_bin_type=True, strict_types=True, default=_as_plain)


#: Whether the C speedups are to be used where built: ``PLAYHALL_SPEEDUPS=0`` asks for the
#: Python references instead. The one place the setting is read.
SPEEDUPS_WANTED: Final = os.environ.get("PLAYHALL_SPEEDUPS", "1") != "0"


def _load_speedups() -> ModuleType | None:
    """The C twins of this packer and of packing a view diff (``_speedups.c``, built by the
    install where a C compiler is at hand), unless :data:`SPEEDUPS_WANTED` says no."""
    if not SPEEDUPS_WANTED:
        return None
    try:
        from playhall_protocol import _speedups
    except ImportError:
        return None
    # What its packer does not handle itself (enums, subclasses, ...) it hands to this one.
    _speedups.set_fallback(_PACKER.pack, msgpack.fallback.DEFAULT_RECURSE_LIMIT)
    return _speedups


#: The C speedups in use, or None: the pure Python reference is used.
SPEEDUPS = _load_speedups()
_pack: Final[Any] = SPEEDUPS.pack if SPEEDUPS is not None else _PACKER.pack


def encode(message: dict[str, Any]) -> bytes:
    """Encode a message. Raises ``TypeError`` for anything that is not plain data (a bug on the
    sending side, not bad input)."""
    packed: bytes = _pack(message)
    return packed


def pack(value: Any) -> bytes:
    """Any plain value packed as messages are (what the server stores: records, log fields),
    by the same packer."""
    packed: bytes = _pack(value)
    return packed


def frame_head(fields: dict[str, Any], more: int) -> bytes:
    """How ``encode`` begins a frame whose map has ``fields`` first, then ``more`` fields that
    the caller appends already packed (``pack(key) + pack(value)`` each): a sender can pack a
    value that several frames share (a version's events, sent to every viewer) once."""
    packed = pack(fields)
    total = len(fields) + more
    if total < 16:  # both maps are fixmaps, whose header is one byte (a frame head, nearly always)
        return _FIXMAP_HEADS[total] + packed[1:]
    own: bytes = _PACKER.pack_map_header(len(fields))
    whole: bytes = _PACKER.pack_map_header(total)
    return whole + packed[len(own) :]


#: The one-byte header of a msgpack map of each size below 16 (a fixmap).
_FIXMAP_HEADS: Final = [bytes((0x80 | size,)) for size in range(16)]


def decode(frame: bytes | str, *, max_depth: int = 32) -> dict[str, Any]:
    """Decode one frame into a message map, or raise :class:`ProtocolError` (``bad_frame``).

    A frame is one msgpack map with string keys, no key twice in any map, nested at most
    ``max_depth`` levels (the map itself is 1), without extension types. msgpack's own
    unpacker reads it; the checks it does not make are made here."""
    binary = as_binary(frame)
    message = unpack_map(binary)
    check_map(binary, message, max_depth)
    return message


def as_binary(frame: bytes | str) -> bytes:
    """``frame``, refused if it came as a text message."""
    if isinstance(frame, str):
        raise ProtocolError(BAD_FRAME, "text frames are not accepted; send binary msgpack")
    return frame


def unpack_map(frame: bytes) -> dict[str, Any]:
    """The first half of :func:`decode`: the frame unpacked by msgpack, which must give a map;
    nothing else about it checked yet (:func:`check_map` does the rest)."""
    message = _unpack(frame, None)
    if type(message) is not dict:
        raise ProtocolError(BAD_FRAME, "a frame must be a msgpack map")
    return message


def check_map(frame: bytes, message: dict[str, Any], max_depth: int = 32) -> None:
    """The second half of :func:`decode`: what msgpack lets through that a frame may not hold
    (see :func:`_check`), and a key twice in any map."""
    problem = _check(message, 1, max_depth)
    if problem is not None:
        raise ProtocolError(BAD_FRAME, problem)
    # A map that had a key twice decodes to fewer entries, so the frame is then not what
    # packing the message gives. Nearly every frame is packed as this packer packs (the
    # smallest form of each value), and that comparison clears it; any other is unpacked again,
    # map by map, to look for the key.
    if _pack(message) != frame:
        _unpack(frame, _map)


def check_value(value: Any, level: int, max_depth: int = 32) -> None:
    """:func:`check_map`'s first check for one value of a frame at nesting ``level`` (the
    frame's map is 1), for a reader that knows the rest of the frame holds nothing to check."""
    problem = _check(value, level, max_depth)
    if problem is not None:
        raise ProtocolError(BAD_FRAME, problem)


def packed_size(value: str | int) -> int:
    """How many bytes the packer makes of a str or an int: the smallest msgpack form."""
    if isinstance(value, str):
        n = len(value) if value.isascii() else len(value.encode())
        return n + (1 if n < 32 else 2 if n < 256 else 3 if n < 65536 else 5)
    number = value
    if -32 <= number < 128:
        return 1
    if -128 <= number < 256:
        return 2
    if -32768 <= number < 65536:
        return 3
    if -(2**31) <= number < 2**32:
        return 5
    return 9


def smallest_form(frame: bytes, size: int) -> bool:
    """Whether ``frame`` is ``size`` bytes long, ``size`` being what the packer would make of
    the message decoded from it, with no float32 in it. Then it holds no key twice, without
    packing the message again to compare: every other msgpack form of a value is at least as
    long as the packer's (the smallest), and a map with a key twice is longer than the map it
    decodes to, so a frame that is no longer than its message packed has no such map. A
    float32 (type byte 0xca) is the one form shorter than the packer's (it packs floats in 64
    bits); a frame with that byte anywhere, even inside a string, is not cleared here."""
    # (An int looked for in bytes is one memchr; a bytes needle first fails as an int, and
    # raising that costs more than the rest of this check.)
    return len(frame) == size and _FLOAT32 not in frame


#: msgpack's type byte of a float32.
_FLOAT32: Final = 0xCA


def _unpack(frame: bytes, pairs_hook: Any) -> Any:
    # msgpack's own defaults (msgpack >= 1.0) are the protocol's, and are not passed again (a
    # keyword each costs every frame): str as str (raw=False), map keys str or bin only
    # (strict_map_key; _check refuses bin), arrays as lists, timestamps as Timestamp objects
    # (timestamp=0; _check refuses them).
    try:
        if pairs_hook is None:
            return msgpack.unpackb(frame, ext_hook=_refuse_ext)
        return msgpack.unpackb(frame, ext_hook=_refuse_ext, object_pairs_hook=pairs_hook)
    except _ExtRefused:
        raise ProtocolError(BAD_FRAME, _NO_EXT) from None
    except _DuplicateKey:
        raise ProtocolError(BAD_FRAME, "a map has the same key twice") from None
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        raise ProtocolError(BAD_FRAME, f"not a single msgpack value: {exc}") from None


_NO_EXT: Final = "msgpack extension types are not part of the protocol"


class _ExtRefused(Exception):
    pass


def _refuse_ext(code: int, data: bytes) -> Any:
    # Extension types would reach engines and Redis as foreign objects. (msgpack decodes the
    # timestamp type itself, without asking this hook: _check refuses those.)
    raise _ExtRefused


class _DuplicateKey(Exception):
    pass


def _map(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A map of the frame from its key-value pairs as they came, refusing a key that comes
    twice (``dict`` alone would keep the last value silently, and a check of the first value
    would be bypassed)."""
    built = dict(pairs)
    if len(built) != len(pairs):
        raise _DuplicateKey
    return built


def _check(value: Any, level: int, limit: int) -> str | None:
    """Why ``value``, at nesting ``level`` (the frame's map is 1), breaks the protocol (a map key
    that is not a string: msgpack's strict_map_key still lets bin keys through; a msgpack
    timestamp; nesting past ``limit``), or None. The recursion stops at ``limit``, so its depth
    is bounded whatever the frame."""
    timestamp = _TIMESTAMP  # a local (docs/operations.md, "The compiled build")
    if type(value) is timestamp:
        return _NO_EXT
    if level > limit:
        return f"nested deeper than {limit} levels"
    # Plain loops over exact types (msgpack makes exact dicts and lists), each container's own:
    # compiled, a loop over a value known to be a dict or a list is a C loop. Only containers
    # and timestamps are looked into: a call per value would cost more than the loop.
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str:
                return "map keys must be strings"
            if type(item) is dict or type(item) is list or type(item) is timestamp:
                problem = _check(item, level + 1, limit)
                if problem is not None:
                    return problem
    elif isinstance(value, list):
        for item in value:
            if type(item) is dict or type(item) is list or type(item) is timestamp:
                problem = _check(item, level + 1, limit)
                if problem is not None:
                    return problem
    return None


_TIMESTAMP: Final = msgpack.Timestamp
