"""A spectator of a private room (who came in with its join code and holds no seat) stays in
across reconnects: after a dropped connection and after a server restart, the Python client's
``sync`` carries the code, and the room lets them in again and keeps them up to date. Without
the code a new connection is an outsider (PROTOCOL.md, "Private rooms are invisible")."""

from __future__ import annotations

import uuid

from playhall_client import Client, ServerError
from playhall_client.client import RoomMirror

from .conftest import free_port
from .process import ServerProcess


async def _private_game(url: str) -> tuple[list[Client], list[RoomMirror], str]:
    """Two players in a private Mantis room, playing; the join code."""
    players = [await Client.connect(url, name=f"p{i}") for i in range(2)]
    first = await players[0].create("mantis", 2, private=True)
    code = first.view["code"]
    second = await players[1].join(code=code)
    for client in players:
        await client.ready(first.room)
    for mirror in (first, second):
        await mirror.wait(lambda m: m.view["status"] == "playing")
    return players, [first, second], code


async def _move_reaches(players: list[Client], mirrors: list[RoomMirror], seen: RoomMirror) -> None:
    """The seat to act moves; ``seen`` (the spectator's mirror) gets that version."""
    seat = mirrors[0].view["to_act"][0]
    await mirrors[seat].wait(lambda m: m.version >= mirrors[0].version)
    reply = await players[seat].move(mirrors[0].room, mirrors[seat].view["moves"][0])
    await seen.wait(lambda m: m.version >= reply["version"])
    assert seen.view["you"] is None


async def test_a_private_spectator_stays_in_after_a_dropped_connection(url: str) -> None:
    players, mirrors, code = await _private_game(url)
    watcher = await Client.connect(url, name="friend")
    try:
        seen = await watcher.join(code=code)
        assert seen.view["you"] is None and seen.code == code
        assert watcher._ws is not None
        watcher._ws.transport.abort()  # the network drops the connection
        await _move_reaches(players, mirrors, seen)
        assert watcher.reconnects >= 1
        # Without the code, the same player on a new connection is an outsider.
        stranger = await Client.connect(url, token=watcher.token)
        try:
            await stranger.request("sync", room=seen.room, retry=False)
            raise AssertionError("a sync without the code was let in")
        except ServerError as refused:
            assert refused.code == "no_such_room"
        finally:
            await stranger.close()
    finally:
        await watcher.close()
        for client in players:
            await client.close()


async def test_a_wrong_code_in_a_sync_is_refused_and_counted(url: str) -> None:
    players, mirrors, code = await _private_game(url)
    outsider = await Client.connect(url, name="guesser")
    try:
        wrong = "22222-22222-22222" if code != "22222-22222-22222" else "33333-33333-33333"
        for _ in range(5):
            try:
                await outsider.request("sync", room=mirrors[0].room, code=wrong, retry=False)
                raise AssertionError("a wrong code was let in")
            except ServerError as refused:
                assert refused.code == "no_such_room"
        try:  # past five wrong codes, even the right one waits
            await outsider.request("sync", room=mirrors[0].room, code=code, retry=False)
            raise AssertionError("the back-off did not hold")
        except ServerError as refused:
            assert refused.code == "too_many_tries"
    finally:
        await outsider.close()
        for client in players:
            await client.close()


async def test_a_private_spectator_stays_in_across_a_server_restart(redis_url: str) -> None:
    port = free_port()
    prefix = f"s{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "spectator-test")
    second = ServerProcess(port, redis_url, prefix, "spectator-test")
    await first.start()
    clients: list[Client] = []
    try:
        players, mirrors, code = await _private_game(first.url)
        clients += players
        watcher = await Client.connect(first.url, name="friend")
        clients.append(watcher)
        seen = await watcher.join(code=code)
        first.kill()
        await second.start()
        await _move_reaches(players, mirrors, seen)
        assert watcher.reconnects >= 1
    finally:
        for client in clients:
            await client.close()
        first.terminate()
        second.terminate()
