"""Bad input of every class gets a clear error code and reason, never a crash, a hang or a
changed room; and the server keeps serving everyone else meanwhile."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from playhall_client import Client, ServerError

from .helpers import Table, next_push, started_table


async def assert_room_unchanged_and_serving(table: Table, version: int) -> None:
    """The room is at ``version`` with the same view, and the game still goes on."""
    a, b = table.clients
    reply = await a.request("sync", room=table.room, version=version)
    assert reply["version"] == version
    seat = table.mover()
    moved = await table.clients[seat].move(table.room, table.mirrors[seat].view["moves"][0])
    assert moved["version"] == version + 1


@pytest.fixture
async def table(url: str):  # type: ignore[no-untyped-def]
    t = await started_table(url)
    yield t
    await t.close()


def _nested(depth: int) -> list:
    value: list = [1]
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "frame, reason",
    [
        (b"\xc1", "not a single msgpack value"),  # 0xc1 is never valid msgpack
        (msgpack.packb([1, 2, 3]), "must be a msgpack map"),
        (msgpack.packb({"t": "ping", "id": 1}) + b"\x00", "not a single msgpack value"),
        (msgpack.packb({"a": _nested(40)}), "nested deeper"),
        # {"t": "ping", "id": 1, "t": "ping"}: a key twice in one map
        (bytes.fromhex("83a174a470696e67a2696401a174a470696e67"), "same key twice"),
    ],
)
async def test_malformed_frames_get_bad_frame(table: Table, frame: bytes, reason: str) -> None:
    client = table.clients[0]
    version = table.mirrors[0].version
    await client.send_raw(frame)
    error = await next_push(client, "error")
    assert error["code"] == "bad_frame" and reason in error["reason"]
    await assert_room_unchanged_and_serving(table, version)


async def test_text_frames_are_refused(table: Table) -> None:
    client = table.clients[0]
    await client.send_raw('{"t": "ping", "id": 1}')
    error = await next_push(client, "error")
    assert error["code"] == "bad_frame" and "text frames" in error["reason"]
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


@pytest.mark.parametrize(
    "message, code, words",
    [
        ({"t": "teleport", "id": 5}, "unknown_type", "unknown message type"),
        ({"t": "ping"}, "bad_message", '"id"'),
        ({"id": 5}, "bad_message", '"t"'),
        ({"t": "create", "id": 5, "game": "mantis", "seats": "two"}, "bad_message", "'seats'"),
        ({"t": "create", "id": 5, "game": "mantis", "seats": True}, "bad_message", "'seats'"),
        ({"t": "create", "id": 5, "game": "chess", "seats": 2}, "no_such_game", "chess"),
        ({"t": "create", "id": 5, "game": "mantis", "seats": 9}, "bad_seats", "2 to 6"),
        (
            {"t": "create", "id": 5, "game": "mantis", "seats": 2, "options": {"turbo": 1}},
            "bad_option",
            "turbo",
        ),
        (
            {"t": "create", "id": 5, "game": "mantis", "seats": 2, "options": {"target": "ten"}},
            "bad_option",
            "target",
        ),
        ({"t": "chat", "id": 5, "room": "x", "text": "y" * 501}, "bad_message", "longer than 500"),
        ({"t": "join", "id": 5, "room": "nope"}, "no_such_room", "nope"),
        ({"t": "ping", "id": 5, "extra": 1}, "bad_message", "unexpected field"),
    ],
)
async def test_ill_formed_messages_are_refused(
    table: Table, message: dict, code: str, words: str
) -> None:
    client = table.clients[0]
    await client.send_raw(msgpack.packb(message))
    error = await next_push(client, "error")
    assert error["code"] == code and words in error["reason"], error
    assert error["re"] == message.get("id")
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


async def test_moves_with_wrong_field_types(table: Table) -> None:
    seat = table.mover()
    client = table.clients[seat]
    for bad in ({"version": "7"}, {"move": "score"}, {"mid": 1.5}):
        fields: dict[str, Any] = {
            "room": table.room,
            "version": table.mirrors[0].version,
            "mid": "m1",
            "move": {"type": "score"},
            **bad,
        }
        with pytest.raises(ServerError) as err:
            await client.request("move", **fields)
        assert err.value.code == "bad_message"
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


async def test_move_out_of_turn(table: Table) -> None:
    waiting = 1 - table.mover()
    version = table.mirrors[0].version
    with pytest.raises(ServerError) as err:
        await table.clients[waiting].move(table.room, {"type": "score"})
    assert err.value.code == "not_your_turn" and err.value.reply["version"] == version
    await assert_room_unchanged_and_serving(table, version)


@pytest.mark.parametrize(
    "move, code",
    [
        ({"type": "steal", "target": 0}, None),  # stealing from yourself: filled in below
        ({"type": "steal", "target": 7}, "bad_move"),  # no such seat
        ({"type": "fly"}, "bad_move"),
        ({"type": "steal"}, "bad_move"),
        ({"type": "steal", "target": "1"}, "bad_move"),
        ({}, "bad_move"),
    ],
)
async def test_illegal_and_malformed_moves(table: Table, move: dict, code: str | None) -> None:
    seat = table.mover()
    if code is None:
        move, code = {"type": "steal", "target": seat}, "illegal_move"
    version = table.mirrors[0].version
    with pytest.raises(ServerError) as err:
        await table.clients[seat].move(table.room, move)
    assert err.value.code == code and err.value.reason
    await assert_room_unchanged_and_serving(table, version)


async def test_nobody_can_act_for_another_seat(table: Table, url: str) -> None:
    seat = table.mover()
    other = table.clients[1 - seat]
    version = table.mirrors[0].version
    # Naming a seat is not part of the protocol: the seat comes from the player's token.
    with pytest.raises(ServerError) as err:
        await other.request(
            "move", room=table.room, version=version, mid="x", seat=seat, move={"type": "score"}
        )
    assert err.value.code == "bad_message" and "seat" in err.value.reason
    # A spectator, and a stranger with a forged token, cannot move either.
    watcher = await Client.connect(url, name="watcher")
    try:
        await watcher.join(table.room, watch=True)
        with pytest.raises(ServerError) as err:
            await watcher.move(table.room, {"type": "score"})
        assert err.value.code == "not_seated"
    finally:
        await watcher.close()
    forged = f"{table.clients[seat].player}.not-the-secret"
    with pytest.raises(ServerError) as err:
        await Client.connect(url, token=forged, reconnect=False)
    assert err.value.code == "bad_token"
    await assert_room_unchanged_and_serving(table, version)


async def test_stale_move_is_refused_with_current_version(table: Table) -> None:
    seat = table.mover()
    version = table.mirrors[0].version
    with pytest.raises(ServerError) as err:
        await table.clients[seat].move(table.room, {"type": "score"}, version=version - 1)
    assert err.value.code == "stale" and err.value.reply["version"] == version
    await assert_room_unchanged_and_serving(table, version)


async def test_repeated_move_id_is_answered_again_not_applied_twice(table: Table) -> None:
    seat = table.mover()
    client, mirror = table.clients[seat], table.mirrors[seat]
    version = mirror.version
    first = await client.move(table.room, {"type": "score"}, mid="once", version=version)
    again = await client.move(table.room, {"type": "score"}, mid="once", version=version)
    assert again["version"] == first["version"] == version + 1
    await mirror.wait(lambda m: m.version >= version + 1)
    reply = await client.request("sync", room=table.room, version=mirror.version)
    assert reply["version"] == version + 1


async def test_requests_before_hello_and_unknown_versions(url: str) -> None:
    async with connect(url) as ws:
        await ws.send(msgpack.packb({"t": "games", "id": 1}))
        reply = msgpack.unpackb(await ws.recv())
        assert reply["code"] == "hello_first" and reply["re"] == 1
        await ws.send(msgpack.packb({"t": "hello", "id": 2, "protocol": [99]}))
        reply = msgpack.unpackb(await ws.recv())
        assert reply["code"] == "unsupported_version" and "[1]" in reply["reason"]
        await ws.send(msgpack.packb({"t": "hello", "id": 3, "protocol": [1, 99]}))
        reply = msgpack.unpackb(await ws.recv())
        assert reply["t"] == "ok" and reply["protocol"] == 1


async def test_oversized_frame_closes_with_1009(table: Table, url: str, server) -> None:  # type: ignore[no-untyped-def]
    async with connect(url, max_size=None) as ws:
        await ws.send(msgpack.packb({"t": "hello", "id": 1, "protocol": 1}))
        await ws.recv()
        await ws.send(
            msgpack.packb(
                {"t": "chat", "id": 2, "room": "r", "text": "x" * (server.config.max_frame + 10)}
            )
        )
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


async def test_flooding_is_rate_limited_then_closed(table: Table, url: str, server) -> None:  # type: ignore[no-untyped-def]
    limit = server.config.burst
    async with connect(url) as ws:
        await ws.send(msgpack.packb({"t": "hello", "id": 0, "protocol": 1}))
        await ws.recv()
        for i in range(1, 4 * limit):
            try:
                await ws.send(msgpack.packb({"t": "ping", "id": i}))
            except ConnectionClosed:
                break
        codes = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                codes.append(msgpack.unpackb(await ws.recv()).get("code"))
        assert "rate_limited" in codes
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


async def test_many_bad_frames_in_parallel_leave_the_server_serving(table: Table, url: str) -> None:
    async def vandal(i: int) -> None:
        async with connect(url) as ws:
            for frame in (b"\xc1", msgpack.packb([i]), msgpack.packb({"t": "move", "id": i})):
                await ws.send(frame)
                assert msgpack.unpackb(await ws.recv())["t"] == "error"

    await asyncio.gather(*(vandal(i) for i in range(20)))
    await assert_room_unchanged_and_serving(table, table.mirrors[0].version)


async def test_a_second_hello_on_one_connection_is_refused(table: Table) -> None:
    client = table.clients[0]
    with pytest.raises(ServerError) as err:
        await client.request("hello", protocol=1)
    assert err.value.code == "bad_message" and "already" in err.value.reason
    assert (await client.request("ping"))["t"] == "ok"  # still the same player, still served


async def test_refusals_never_echo_an_unusable_request_id(url: str) -> None:
    async with connect(url) as ws:
        await ws.send(msgpack.packb({"t": "ping", "id": True}))
        reply = msgpack.unpackb(await ws.recv())
        assert reply["code"] == "bad_message" and reply["re"] is None
