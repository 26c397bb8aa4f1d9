"""What one client address may make per minute: new players (``new_players_per_minute``) and
rooms (``address_rooms_per_minute``). A new player costs its sender one frame, so caps per
player alone would not bound what one client makes: it could say hello again and again, each
time with fresh caps, and leave a player record and waiting rooms behind each time."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect

from playhall import app
from playhall_client import Client, ServerError

from .conftest import server_config
from .helpers import finished_against_a_bot, server_with_player, too_many_rooms


async def _hellos_from(port: int, address: str, *tokens: str | None) -> list[dict[str, Any]]:
    """The replies to hellos with ``tokens`` (None: without one), one after the other on one
    connection that the proxy says comes from ``address``."""
    headers = {"X-Forwarded-For": address}
    replies = []
    async with connect(f"ws://127.0.0.1:{port}/", additional_headers=headers) as ws:
        for rid, token in enumerate(tokens, 1):
            hello: dict[str, Any] = {"t": "hello", "id": rid, "protocol": [1]}
            if token is not None:
                hello["token"] = token
            await ws.send(msgpack.packb(hello))
            replies.append(msgpack.unpackb(await ws.recv()))
    return replies


async def _stored_players(running: app.Running) -> int:
    prefix = running.config.key_prefix
    keys = [k async for k in running.redis.scan_iter(match=f"{prefix}player:*")]
    return sum(1 for k in keys if k.decode().count(":") == 2)  # p player:<pid>, no suffix


async def test_new_players_from_one_address_are_capped(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, new_players_per_minute=3))
    url = f"ws://127.0.0.1:{running.port}/"
    players = [await Client.connect(url) for _ in range(3)]
    try:
        with pytest.raises(ServerError) as refused:
            await Client.connect(url)
        assert refused.value.code == "rate_limited" and "new players" in refused.value.reason
        assert 0 < refused.value.reply["retry_after"] <= 60
        # Nothing was stored for the refused one.
        assert await _stored_players(running) == 3
        # A player who comes back with a token is no new player.
        back = await Client.connect(url, token=players[0].token)
        assert back.player == players[0].player
        await back.close()
    finally:
        for player in players:
            await player.close()
        await running.drain()


async def test_the_new_player_cap_counts_each_address_apart(redis_url: str) -> None:
    config = server_config(
        redis_url, new_players_per_minute=1, forwarded_header="X-Forwarded-For"
    )
    running = await app.start(config)
    try:
        [first] = await _hellos_from(running.port, "198.51.100.1", None)
        assert first["t"] == "ok"
        # Refused as a new player, the same connection may still say hello with a token.
        refused, back = await _hellos_from(running.port, "198.51.100.1", None, first["token"])
        assert refused["t"] == "error" and refused["code"] == "rate_limited"
        assert back["t"] == "ok" and back["player"] == first["player"]
        [other] = await _hellos_from(running.port, "198.51.100.2", None)
        assert other["t"] == "ok"
    finally:
        await running.drain()


async def test_rooms_from_one_address_are_capped_across_its_players(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, address_rooms_per_minute=4))
    url = f"ws://127.0.0.1:{running.port}/"
    players = [await Client.connect(url) for _ in range(3)]
    try:
        for player in players[:2]:
            for _ in range(2):
                await player.create("mantis", 2)
        with pytest.raises(ServerError) as refused:
            await players[2].create("mantis", 2)
        assert refused.value.code == "too_many_rooms"
        assert "from one address" in refused.value.reason
        assert 0 < refused.value.reply["retry_after"] <= 60
        listed = await players[2].list_rooms()
        assert len(listed) == 4  # the refused create made no room
    finally:
        for player in players:
            await player.close()
        await running.drain()


async def _resign_and_rematch(player: Client, room: str) -> str:
    """Resign the solo game in ``room`` and ask for its rematch (a new room, started)."""
    await player.resign(room)
    return await player.rematch(room)


@pytest.mark.parametrize("cap", ["rooms_per_minute", "address_rooms_per_minute"])
async def test_a_rematch_is_a_new_room_under_the_same_caps_as_a_create(
    redis_url: str, cap: str
) -> None:
    """Resign, rematch, again and again (a Mandala solo rematch starts at once, so it never
    waits): every rematch is a room made, counted against the player's rooms a minute and
    their address's, refused past them like a ``create``, with ``retry_after``."""
    caps = {"rooms_per_minute": 0, "address_rooms_per_minute": 0, cap: 3}
    async with server_with_player(redis_url, **caps) as (_, player):
        room = (await player.create("mandala", 1, options={"mode": "solo"})).room
        for _ in range(2):
            room = await _resign_and_rematch(player, room)
            await player.join(room)
        refused = await too_many_rooms(_resign_and_rematch(player, room), "a minute")
        assert 0 < refused.reply["retry_after"] <= 60
        await too_many_rooms(player.create("mandala", 1, options={"mode": "solo"}), "a minute")


async def test_a_rematch_room_counts_as_a_waiting_room_of_the_player_who_asked(
    redis_url: str,
) -> None:
    async with server_with_player(redis_url, waiting_rooms=1) as (_, player):
        first, second = [await finished_against_a_bot(player) for _ in range(2)]
        await player.rematch(first.room)  # a room waiting with the player seated
        await too_many_rooms(player.rematch(second.room), "waiting")
