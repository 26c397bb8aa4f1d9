"""Join codes of private rooms: what they look like, how they are made, how what a person typed
is read.

A code is 15 symbols from an alphabet of 31 with no look-alikes (no ``0``/``O``, ``1``/``I``/
``L``), shown in three groups of five: ``K7QXM-4PAZR-2DHNW``. Case, spaces and dashes do not
matter: the server reads ``k7qxm 4pazr 2dhnw`` as that code, so a code typed in any case works
from every client.

How long a code must be: guessing at the highest rate the server allows finds nothing in a
year. Ignore the back-off on wrong codes altogether (store/code_tries.py) and let one address send
nothing but guesses on every connection it may hold, at the full message rate: 64 connections
x 40 messages/s = 2,560 guesses/s, 8.1e10 in a year. Against a million private rooms open all
year, each guess finds one with probability 1e6 / 31^15 = 1e6 / 2.35e22, so the year's expected
finds are 8.1e10 x 4.3e-17 = 3.4e-6. With the back-off (defaults: 5 wrong codes free, then
waits doubling from 2 s to an hour) an address gets about 8,800 guesses a year: 1e6 addresses
guessing all year would expect 3.7e-7 finds. (12 symbols would leave 0.1 for the first case,
13 symbols 0.003.)
"""

from __future__ import annotations

import secrets
from typing import Final

CODE_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_GROUPS: Final = 3
CODE_GROUP_LENGTH: Final = 5
CODE_LENGTH: Final = CODE_GROUPS * CODE_GROUP_LENGTH

_SYMBOLS: Final = frozenset(CODE_ALPHABET)


def new_code() -> str:
    symbols = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return _grouped(symbols)


def normalise_code(typed: str) -> str:
    """The code a person meant by ``typed``: upper case, spaces and dashes dropped, grouped
    as codes are shown. Text that cannot be a code comes back upper-cased without spaces or
    dashes (it then matches no code)."""
    symbols = "".join(typed.split()).replace("-", "").upper()
    if len(symbols) == CODE_LENGTH and _SYMBOLS.issuperset(symbols):
        return _grouped(symbols)
    return symbols


def _grouped(symbols: str) -> str:
    step = CODE_GROUP_LENGTH
    return "-".join(symbols[i : i + step] for i in range(0, len(symbols), step))
