"""Redis away or not ready is a store failure (``store_failed``, retry the same request), never
``internal``; an outage is logged once when it starts, as a count while it lasts and once when
it ends, never as a traceback per refused command. Over a real Redis behind a fault-injecting
proxy."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from playhall import app
from playhall_client import Client, ServerError

from .conftest import free_port, server_config
from .faults import ResetProxy
from .helpers import started_table, stored_room
from .process import ServerProcess


async def test_a_commit_refused_loading_is_store_failed_and_changes_nothing(
    redis_url: str, proxy: ResetProxy
) -> None:
    config = server_config(proxy.url)
    running = await app.start(config)
    table = await started_table(f"ws://127.0.0.1:{running.port}/")
    try:
        seat = table.mover()
        client, mirror = table.clients[seat], table.mirrors[seat]
        version = mirror.version
        move = mirror.view["moves"][0]
        loading = b"-LOADING Redis is loading the dataset in memory\r\n"
        log_key = f"{config.key_prefix}room:{{{table.room}}}:log".encode()
        proxy.arm(b"EVALSHA", log_key, answer=loading)
        with pytest.raises(ServerError) as refused:
            await client.move(table.room, move, mid="while-loading", retry=False)
        assert proxy.cut.is_set()
        assert refused.value.code == "store_failed"
        stored, _ = await stored_room(redis_url, config.key_prefix, table.room)
        assert stored.version == version
        again = await client.move(table.room, move, mid="while-loading")
        assert again["version"] == version + 1
    finally:
        await table.close()
        await running.drain()


async def test_an_outage_is_store_failed_and_logged_once(
    redis_url: str, proxy: ResetProxy, tmp_path: Path
) -> None:
    server = ServerProcess(free_port(), proxy.url, f"o{uuid.uuid4().hex[:8]}:", "outage",
                           log_path=tmp_path / "server.log")
    await server.start()
    try:
        table = await started_table(server.url)
        client = table.clients[0]
        proxy.go_down()
        codes = []
        for n in range(20):  # creates, moves and a new player's hello, all refused
            for request in (
                client.request("create", retry=False, game="mantis", seats=2),
                table.clients[table.mover()].request(
                    "move",
                    retry=False,
                    room=table.room,
                    version=table.mirrors[0].version,
                    mid=f"m{n}",
                    move=table.mirrors[table.mover()].view["moves"][0],
                ),
                Client.connect(server.url, reconnect=False),
            ):
                try:
                    await request
                    codes.append("ok")
                except ServerError as exc:
                    codes.append(exc.code)
        assert set(codes) == {"store_failed"}, codes
        proxy.come_up()
        async with asyncio.timeout(20):  # Redis is back: the same requests go through
            while True:
                try:
                    await client.request("create", retry=False, game="mantis", seats=2)
                    break
                except ServerError as exc:
                    assert exc.code == "store_failed"
                    await asyncio.sleep(0.1)  # retrying, as a client does
        await table.close()
        await server.logged("redis_available")  # (a second after the last failure)
    finally:
        # In a thread: the proxy runs on this loop, and the server drains through it.
        await asyncio.to_thread(server.terminate)
    lines = server.log_lines()
    events = [line["event"] for line in lines]
    assert events.count("redis_unavailable") == 1, events
    assert events.count("redis_available") == 1, events
    assert not [line for line in lines if "exception" in line], "a traceback was logged"
    assert "request_failed" not in events and "room_command_failed" not in events


async def test_a_create_whose_reply_was_lost_leaves_no_orphan(
    redis_url: str, proxy: ResetProxy
) -> None:
    config = server_config(proxy.url)
    running = await app.start(config)
    url = f"ws://127.0.0.1:{running.port}/"
    alice = await Client.connect(url, name="alice")
    try:
        proxy.arm(b"EVALSHA", b"$6\r\ncreate\r\n")  # the new room's first write
        with pytest.raises(ServerError) as unknown:
            await alice.request("create", retry=False, game="mantis", seats=2)
        assert proxy.cut.is_set()
        assert unknown.value.code == "store_failed"
        room = unknown.value.reply["room"]
        stored, _ = await stored_room(redis_url, config.key_prefix, room)  # it was made
        assert stored.version == 1
        # and its creator finds it: it is in their rooms at their next hello.
        again = await Client.connect(url, token=alice.token)
        assert room in again.welcome["rooms"]
        await again.close()
    finally:
        await alice.close()
        await running.drain()


async def test_the_expiry_index_failing_after_a_stored_change_is_told_as_an_outage(
    proxy: ResetProxy,
) -> None:
    prefix = f"o{uuid.uuid4().hex[:8]}:"
    server = ServerProcess(free_port(), proxy.url, prefix, "expiry-index")
    await server.start()
    try:
        alice = await Client.connect(server.url, name="alice")
        bob = await Client.connect(server.url, name="bob")
        # Private: a public room's start is published to the lobby's channel in the same
        # write as the expiry index's, and that publish failing would be told first.
        room = await alice.create("mantis", 2, private=True)
        await bob.join(code=room.view["code"])
        await alice.ready(room.room)
        # The game starts with bob's ready: the expiry index is told of the new status in the
        # same write as the change (before it: a later check), and that write's connection is
        # reset; the change is settled (stored or not) and the index put right by the owner.
        proxy.arm(b"ZADD", f"{prefix}expiry".encode(), room.room.encode())
        await bob.ready(room.room)
        async with asyncio.timeout(10):
            await proxy.cut.wait()
        await room.wait(lambda m: m.view["status"] == "playing")
        await alice.close()
        await bob.close()
    finally:
        await asyncio.to_thread(server.terminate)
    lines = server.log_lines()
    assert [line.get("during") for line in lines if line["event"] == "redis_unavailable"] == [
        "index write"
    ]
    assert not [line for line in lines if "exception" in line], "a traceback was logged"
