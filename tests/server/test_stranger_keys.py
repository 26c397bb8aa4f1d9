"""What a stranger's requests leave in Redis: nothing for a room that does not exist, a
short-lived record for a player who never played, and room ids that cannot name other keys
(issue: bounded cost per request on the open internet)."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from playhall import app
from playhall.rooms.ids import ROOM_ID_ALPHABET, ROOM_ID_LENGTH, is_room_id, new_room_id
from playhall_client import Client, ServerError

from .conftest import server_config


async def _keys(server: app.Running) -> dict[str, int]:
    """Every key of this server's prefix -> its time to live (-1: none)."""
    found = [k async for k in server.redis.scan_iter(match=f"{server.config.key_prefix}*")]
    return {k.decode(): await server.redis.ttl(k) for k in found}


def _absent_room() -> str:
    return "".join(secrets.choice(ROOM_ID_ALPHABET) for _ in range(ROOM_ID_LENGTH))


async def _refused(client: Client, kind: str, **fields: Any) -> str:
    with pytest.raises(ServerError) as refused:
        await client.request(kind, **fields)
    return refused.value.code


def test_room_ids_have_one_alphabet_and_length() -> None:
    assert all(is_room_id(new_room_id()) for _ in range(1000))
    made = new_room_id()
    for bad in (made + ":log", made + ":chat", made[:-1], made + "a", made[:-1] + ":",
                made[:-1] + "é", "", "nope"):  # fmt: skip
        assert not is_room_id(bad), bad


async def test_requests_about_absent_rooms_write_nothing(unthrottled: app.Running) -> None:
    server = unthrottled
    url = f"ws://127.0.0.1:{server.port}/"
    client = await Client.connect(url, name="stranger")
    try:
        owner = await Client.connect(url, name="owner")
        real = (await owner.create("mantis", 2)).room
        before = await _keys(server)
        count = 0
        for n in range(100):
            room = _absent_room()
            for kind, fields in (
                ("join", {"room": room}),
                ("sync", {"room": room}),
                ("start", {"room": room}),
                ("leave", {"room": room}),
                ("chat", {"room": room, "text": "hi"}),
                ("move", {"room": room, "version": 1, "mid": n, "move": {}}),
            ):
                assert await _refused(client, kind, **fields) == "no_such_room"
                count += 1
        # Ids that are not room ids, the aliases of a real room's own keys among them.
        for room in (f"{real}:log", f"{real}:chat", "x" * 64, "a:b", ""):
            for kind in ("join", "sync", "start"):
                assert await _refused(client, kind, room=room) == "no_such_room"
                count += 1
        assert count == 615
        after = await _keys(server)
        assert set(after) == set(before)  # not one key more
        assert {k for k, t in after.items() if t == -1} == {k for k, t in before.items() if t == -1}
        await owner.close()
    finally:
        await client.close()


async def test_unused_players_expire_within_hours(redis_url: str) -> None:
    config = server_config(redis_url, unused_player_ttl=3 * 3600, player_ttl=90 * 86400)
    running = await app.start(config)
    url = f"ws://127.0.0.1:{running.port}/"
    try:
        clients = [await Client.connect(url) for _ in range(50)]
        for client in clients:
            await client.list_rooms()  # lobby requests do not make a player worth keeping
        ttls = await _keys(running)
        # The address's new-player counter lives out its minute; each player, a few hours.
        counter = ttls.pop(f"{config.key_prefix}address:{{127.0.0.1}}:players")
        assert 0 < counter <= 60
        # The address's open connections, counted while they are renewed.
        connections = ttls.pop(f"{config.key_prefix}address:{{127.0.0.1}}:conns")
        assert 0 < connections <= config.lease_ms / 1000
        # The process's own entry in the fleet registry, and the registry's index.
        registry = f"{config.key_prefix}{{fleet}}"
        for key in (f"{registry}:{config.instance}", registry):
            assert 0 < ttls.pop(key) <= config.lease_ms / 1000
        # The key layout the Redis is in: one key, kept.
        assert ttls.pop(f"{config.key_prefix}layout") == -1
        assert len(ttls) == 50
        assert all(0 < ttl <= 3 * 3600 for ttl in ttls.values()), ttls
        # The first to sit down (here by creating a room) is kept for player_ttl.
        room = (await clients[0].create("mantis", 2)).room
        player = config.key_prefix + "player:{" + clients[0].player + "}"
        assert await running.redis.ttl(player) > 89 * 86400
        # Chatting is using too; watching is not.
        await clients[1].join(room, watch=True)
        chatter = config.key_prefix + "player:{" + clients[1].player + "}"
        assert 0 < await running.redis.ttl(chatter) <= 3 * 3600
        await clients[1].request("chat", room=room, text="hello")
        assert await running.redis.ttl(chatter) > 89 * 86400
        # A returning player who never played keeps the short expiry; one who did, the long.
        again = await Client.connect(url, token=clients[2].token)
        returning = config.key_prefix + "player:{" + again.player + "}"
        assert 0 < await running.redis.ttl(returning) <= 3 * 3600
        back = await Client.connect(url, token=clients[0].token)
        assert await running.redis.ttl(player) > 89 * 86400
        for client in [*clients, again, back]:
            await client.close()
    finally:
        await running.drain()
