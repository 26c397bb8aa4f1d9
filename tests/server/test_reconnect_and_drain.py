"""Reconnection and graceful restarts: a dropped client resumes from the diffs it missed, a
SIGTERM drains (acknowledged moves stored, sockets closed with 1012), /healthz answers."""

from __future__ import annotations

import asyncio
import uuid

from websockets.asyncio.client import connect

from playhall_client import Client

from .conftest import free_port
from .helpers import at_least, newer_than, started_table
from .process import ServerProcess


async def test_dropped_client_catches_up_from_missed_diffs(url: str) -> None:
    table = await started_table(url, seats=3)
    try:
        # The seat that moves third from now drops out; the other two make their two moves.
        absent = (table.mover() + 2) % 3
        client, mirror = table.clients[absent], table.mirrors[absent]
        token, have, view_then = client.token, mirror.version, mirror.view
        await client.close()
        watching = table.mirrors[(absent + 1) % 3]
        await watching.wait(lambda m: m.presence[absent] is False)
        for _ in range(2):
            seat = watching.view["to_act"][0]
            assert seat != absent
            before = watching.version
            await table.mirrors[seat].wait(at_least(before))
            await table.clients[seat].move(table.room, table.mirrors[seat].view["moves"][0])
            await watching.wait(newer_than(before))
        back = await Client.connect(url, token=token)
        assert back.player == client.player
        resumed = back._mirror(table.room)
        resumed.version, resumed.view = have, view_then
        reply = await back.sync(table.room)
        assert reply["seat"] == absent
        assert reply["version"] > have and reply["caught_up"] == "diffs"
        await resumed.wait(lambda m: m.version == reply["version"])
        # The replayed updates carry the events of the moves that were missed.
        assert any(e["type"] != "started" for e in resumed.events)
        fresh = await Client.connect(url, token=token)
        snap = await fresh.join(table.room)
        assert resumed.view == snap.view  # the diffs rebuilt exactly the current view
        await watching.wait(lambda m: m.presence[absent] is True)
        await fresh.close()
        await back.close()
    finally:
        await table.close()


async def test_too_old_version_gets_a_snapshot(url: str, server) -> None:  # type: ignore[no-untyped-def]
    table = await started_table(url)
    try:
        client, mirror = table.clients[0], table.mirrors[0]
        reply = await client.request("sync", room=table.room, version=0)
        assert reply["caught_up"] == "snapshot"
        assert (await client.request("sync", room=table.room, version=mirror.version))[
            "caught_up"
        ] == "diffs"
    finally:
        await table.close()


async def test_healthz(url: str) -> None:
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", int(url.rsplit(":", 1)[1].strip("/"))
    )
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    response = await reader.read(1024)
    writer.close()
    assert response.startswith(b"HTTP/1.1 200") and response.endswith(b"ok\n")


async def test_sigterm_drains_and_clients_resume_on_the_next_process(redis_url: str) -> None:
    port = free_port()
    prefix = f"d{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "drain-test")
    await first.start()
    closes: list[int | None] = []
    clients = [await Client.connect(first.url, name=f"p{i}") for i in range(2)]
    second = ServerProcess(first.port, redis_url, prefix, "drain-test")
    try:
        a, b = clients
        room = await a.create("mantis", 2)
        mirror_b = await b.join(room.room)
        await a.ready(room.room)
        await b.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        async with connect(first.url) as raw:
            assert first.terminate() == 0  # a clean exit after draining
            await raw.wait_closed()
            closes.append(raw.close_code)
        assert closes == [1012]
        await second.start()
        seat = room.view["to_act"][0]
        mover, mirror = (a, room) if seat == 0 else (b, mirror_b)
        before = mirror.version
        reply = await mover.move(room.room, mirror.view["moves"][0])  # waits for the reconnect
        assert reply["version"] == before + 1
        for client in clients:  # a request waits until the client is back online
            await client.request("ping")
        assert all(c.reconnects >= 1 for c in clients)
    finally:
        for c in clients:
            await c.close()
        second.terminate()


async def test_commits_survive_redis_losing_its_scripts(url: str, server) -> None:  # type: ignore[no-untyped-def]
    """A restarted Redis (or SCRIPT FLUSH) forgets the commit and lease scripts; the next call
    sends the script again and runs, instead of failing the move or losing the lease."""
    table = await started_table(url)
    try:
        await server.redis.script_flush()
        seat = table.mover()
        mirror = table.mirrors[seat]
        before = mirror.version
        reply = await table.clients[seat].move(table.room, mirror.view["moves"][0])
        assert reply["version"] == before + 1
        # The lease scripts too: renewing, releasing and taking a lease again all still work.
        await server.redis.script_flush()
        room = server.rooms.rooms[table.room]
        store = server.endpoint.store
        assert (await store.rooms.renew({table.room: room.lease}, 10_000)).lost == set()
        renewal = await store.rooms.renew({table.room: "someone-else|1"}, 10_000)
        assert renewal.lost == {table.room}
        await server.redis.script_flush()
        await store.rooms.release(table.room, room.lease)
        await server.redis.script_flush()
        token = await store.rooms.acquire(table.room, "another-process", 10_000)
        assert token is not None and token.startswith("another-process|")
    finally:
        await table.close()
