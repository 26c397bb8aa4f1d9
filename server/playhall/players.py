"""The player registry: who a connection is. A player is an id, a display name and a secret;
the client keeps ``"<id>.<secret>"`` as its token, Redis keeps the secret's hash only.

``hello`` without a token registers a new player (and hands out the token, once); with one it
checks the token and may rename the player. Either way the player's record has its lifetime
(``player_ttl``) renewed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import NamedTuple

from playhall.store.redis_store import Store
from playhall_protocol import ProtocolError, errors


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Identity(NamedTuple):
    player: str
    name: str
    #: The token of a player registered just now (the only time it is ever sent); else None.
    token: str | None


class Players:
    def __init__(self, store: Store, ttl: int) -> None:
        self.store = store
        self.ttl = ttl

    async def identify(self, token: str | None, name: str) -> Identity:
        """The player ``token`` names (renamed to ``name`` if given and different), or a new
        player called ``name`` (or a made-up name) when there is no token. A token that does
        not match is refused with ``bad_token``."""
        name = name.strip()
        new_token = None
        if token is not None:
            player, _, secret = token.partition(".")
            stored = await self.store.player(player) if player and secret else None
            if stored is None or not hmac.compare_digest(stored[1], hash_secret(secret)):
                raise ProtocolError(errors.BAD_TOKEN, "unknown or wrong player token")
            if name and name != stored[0]:
                await self.store.rename_player(player, name)
            name = name or stored[0]
        else:
            player = secrets.token_hex(6)
            secret = secrets.token_urlsafe(24)
            name = name or f"Player-{player[:4]}"
            await self.store.create_player(player, name, hash_secret(secret))
            new_token = f"{player}.{secret}"
        await self.store.touch_player(player, self.ttl)
        return Identity(player, name, new_token)

    async def rooms(self, player: str) -> list[str]:
        """The rooms ``player`` holds a seat in."""
        return await self.store.player_rooms(player)
