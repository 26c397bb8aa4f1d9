"""Room ids: a fixed alphabet and length, so that a room's Redis key names (``room:<id>``,
``room:<id>:log``, ``room:<id>:chat``) can never name another room's keys, and a request naming
something that cannot be a room id is answered without asking Redis."""

from __future__ import annotations

import re
import secrets
import string
from typing import Final

#: Letters and digits: no ``:`` (the key separator), nothing a URL or a shell would mangle.
ROOM_ID_ALPHABET: Final = string.ascii_letters + string.digits
#: 62^11, about 2^65: room ids are not guessable either.
ROOM_ID_LENGTH: Final = 11

_ROOM_ID: Final = re.compile(f"[A-Za-z0-9]{{{ROOM_ID_LENGTH}}}")


def new_room_id() -> str:
    return "".join(secrets.choice(ROOM_ID_ALPHABET) for _ in range(ROOM_ID_LENGTH))


def is_room_id(text: str) -> bool:
    """Whether ``text`` has the form of a room id (whether such a room exists is another
    matter)."""
    return _ROOM_ID.fullmatch(text) is not None
