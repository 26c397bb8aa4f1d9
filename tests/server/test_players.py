"""The player registry against a real Redis: a hello without a token registers a player and
hands out its token once; the token names the same player again (and may rename it); a token
that does not match is refused, and Redis keeps only the secret's hash."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from playhall.players import Players, hash_secret
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store
from playhall_protocol import ProtocolError

from .conftest import server_config


@pytest.fixture
async def players(redis_url: str) -> AsyncIterator[Players]:
    config = server_config(redis_url)
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, RedisPipe(redis_url), config.key_prefix)
    yield Players(store.players, config.player_ttl, config.unused_player_ttl)
    store.close()
    await client.aclose()


async def test_a_new_player_gets_a_token_that_names_them_again(players: Players) -> None:
    new = await players.identify(None, "  Alice ")
    assert new.name == "Alice" and new.token is not None
    player, _, secret = new.token.partition(".")
    assert player == new.player
    stored = await players.store.player(new.player)
    assert stored is not None and stored.token_hash == hash_secret(secret)
    assert secret not in stored and not new.used and not stored.used
    again = await players.identify(new.token, "")
    assert (again.player, again.name, again.token, again.used) == (new.player, "Alice", None, False)
    await players.used(new.player)
    assert (await players.identify(new.token, "")).used
    renamed = await players.identify(new.token, "Alicia")
    assert renamed.name == "Alicia"
    assert (await players.identify(new.token, "")).name == "Alicia"


async def test_a_nameless_player_gets_a_name(players: Players) -> None:
    new = await players.identify(None, "")
    assert new.name == f"Player-{new.player[:4]}"


@pytest.mark.parametrize("token", ["nobody.secret", "", ".", "abc", "abc."])
async def test_tokens_that_do_not_match_are_refused(players: Players, token: str) -> None:
    with pytest.raises(ProtocolError, match="^bad_token:"):
        await players.identify(token, "Eve")


async def test_a_wrong_secret_is_refused(players: Players) -> None:
    new = await players.identify(None, "Bob")
    assert new.token is not None
    with pytest.raises(ProtocolError, match="^bad_token:"):
        await players.identify(f"{new.player}.wrong", "Bob")
