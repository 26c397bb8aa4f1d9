"""The player registry: who a connection is. A player is an id, a display name and a secret;
the client keeps ``"<id>.<secret>"`` as its token, Redis keeps the secret's hash only.

``hello`` without a token registers a new player (and hands out the token, once); with one it
checks the token and may rename the player. A member of the host's site (a ``hello`` with a
host token, playhall.host_identity) has an id that follows from who they are there, and no token
of ours: their record is made on their first arrival, with a secret nobody is told.

A player who never sat down, created a room or chatted is *unused* and kept
``unused_player_ttl`` (a hello costs a stranger nothing; it must not leave a record for
months); once used (:meth:`Players.used`), ``player_ttl``. Each hello renews the player's
lifetime.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import NamedTuple

from playhall.store.players import PlayerStore, StoredPlayer
from playhall_protocol import ProtocolError, errors


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Identity(NamedTuple):
    player: str
    name: str
    #: The token of a player registered just now (the only time it is ever sent); else None.
    token: str | None
    #: Whether the player has sat down, created a room or chatted (see :meth:`Players.used`).
    used: bool


class Players:
    def __init__(self, store: PlayerStore, ttl: int, unused_ttl: int) -> None:
        self.store = store
        self.ttl = ttl
        self.unused_ttl = unused_ttl

    async def identify(self, token: str | None, name: str) -> Identity:
        """The player ``token`` names (renamed to ``name`` if given and different), or a new
        player called ``name`` (or a made-up name) when there is no token. A token that does
        not match is refused with ``bad_token``."""
        name = name.strip()
        if token is None:
            player = secrets.token_hex(6)
            secret = secrets.token_urlsafe(24)
            name = name or f"Player-{player[:4]}"
            await self.store.create_player(player, name, hash_secret(secret), self.unused_ttl)
            return Identity(player, name, f"{player}.{secret}", False)
        player, _, secret = token.partition(".")
        stored = await self.store.player(player) if player and secret else None
        if stored is None or not hmac.compare_digest(stored.token_hash, hash_secret(secret)):
            raise ProtocolError(errors.BAD_TOKEN, "unknown or wrong player token")
        return await self._returning(player, stored, name)

    async def arrive(self, player: str, name: str) -> Identity:
        """The member of the host's site whose id is ``player`` (vouched for by a host token):
        their record, renamed to ``name`` if given and different, or made now."""
        name = name.strip()
        stored = await self.store.player(player)
        if stored is None:
            name = name or f"Player-{player[:4]}"
            unguessable = hash_secret(secrets.token_urlsafe(24))  # no player token logs them in
            await self.store.create_player(player, name, unguessable, self.unused_ttl)
            return Identity(player, name, None, False)
        return await self._returning(player, stored, name)

    async def _returning(self, player: str, stored: StoredPlayer, name: str) -> Identity:
        if name and name != stored.name:
            await self.store.rename_player(player, name)
        await self.store.touch_player(player, self.ttl if stored.used else self.unused_ttl)
        return Identity(player, name or stored.name, None, stored.used)

    async def used(self, player: str) -> None:
        """``player`` sat down, created a room or chatted: their token is worth keeping now (it
        holds seats or names them in a room), for ``player_ttl``."""
        await self.store.player_used(player, self.ttl)

    async def rooms(self, player: str) -> list[str]:
        """The rooms ``player`` holds a seat in."""
        return await self.store.player_rooms(player)
