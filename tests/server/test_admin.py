"""``playhall admin`` against a real server process and real Redis: each command run as an
operator runs it (the CLI, a process of its own), its log line on the server, and the players'
side of it (a room ended as ``closed_by_operator``, a muted player's chat refused, a refused
address unable to say hello until its time is over)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from playhall.net.admin import check_listen
from playhall_client import Client, ServerError
from playhall_protocol import decode, encode, errors

from .helpers import started_table
from .process import ROOT, ServerProcess, free_port

TOKEN = "s3cret-admin-token"
OPERATOR = "ops-alice"


class Served:
    def __init__(self, server: ServerProcess, admin_url: str) -> None:
        self.server = server
        self.url = admin_url.removesuffix("/admin/")

    async def admin(self, *argv: str, token: str = TOKEN) -> tuple[int, Any, str]:
        """Run ``playhall admin --json <argv>`` as an operator would: exit status, the JSON
        printed (None if none), stderr."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "playhall.cli", "admin", "--url", self.url, "--token", token,
            "--operator", OPERATOR, "--json", *argv,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self.server.env,
        )
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode is not None
        return process.returncode, json.loads(out) if out.strip() else None, err.decode()

    def lines(self, event: str) -> list[dict[str, Any]]:
        return [line for line in self.server.log_lines() if line.get("event") == event]


async def started_with_admin(server: ServerProcess) -> Served:
    """Start ``server`` (logging at info to its ``log_path``, its ``--admin-listen`` on port 0)
    and find its operator's listener in its ``listening`` line: the kernel picked the port,
    since a port picked by a test may be taken by anything before the server binds it.
    A server that fails to start or to log it is terminated before the failure goes on."""
    try:
        await server.start()
        await server.logged("listening")
    except BaseException:
        server.terminate()
        raise
    (listening,) = (line for line in server.log_lines() if line["event"] == "listening")
    return Served(server, listening["admin"])


@pytest.fixture
async def served(redis_url: str, tmp_path: Path) -> AsyncIterator[Served]:
    server = ServerProcess(
        free_port(), redis_url, f"adm{tmp_path.name[-6:]}:", "admin-test",
        ["--admin-listen", "127.0.0.1:0", "--admin-token", TOKEN, "--log-level", "info"],
        log_path=tmp_path / "server.log",
    )
    served = await started_with_admin(server)
    try:
        yield served
    finally:
        server.terminate()


async def test_rooms_and_room_show_status_game_seats_and_owner(served: Served) -> None:
    table = await started_table(served.server.url)
    waiting = await Client.connect(served.server.url, name="solo")
    try:
        lonely = await waiting.create("mantis", 2)
        status, listed, _ = await served.admin("rooms")
        assert status == 0
        rooms = {room["room"]: room for room in listed["rooms"]}
        assert set(rooms) == {table.room, lonely.room} and listed["matched"] == 2
        playing = rooms[table.room]
        assert (playing["game"], playing["status"]) == ("mantis", "playing")
        assert [s["name"] for s in playing["seats"]] == ["p0", "p1"]
        assert playing["owner"] == "admin-test" and playing["fence"] >= 1
        assert rooms[lonely.room]["status"] == "waiting"

        status, only, _ = await served.admin("rooms", "--status", "waiting")
        assert [room["room"] for room in only["rooms"]] == [lonely.room]

        status, shown, _ = await served.admin("room", table.room)
        assert status == 0
        room = shown["room"]
        assert room["room"] == table.room and room["version"] == table.mirrors[0].version
        assert [s["player"] for s in room["seats"]] == [c.player for c in table.clients]
        assert room["muted"] == [] and room["owner"] == "admin-test"
    finally:
        await waiting.close()
        await table.close()


async def test_ending_a_room_is_seen_by_its_players_as_closed_by_operator(
    served: Served,
) -> None:
    table = await started_table(served.server.url)
    try:
        status, ended, _ = await served.admin("end", table.room)
        assert status == 0 and ended["status"] == "finished"
        for mirror in table.mirrors:
            await mirror.wait(lambda m: m.view["status"] == "finished")
            assert mirror.view["outcome"]["reason"] == "closed_by_operator"
            assert mirror.view["outcome"]["winners"] == []
            assert {"type": "game_over", "winners": [], "scores": [],
                    "reason": "closed_by_operator"} in mirror.events
        # Ended once: a second end is refused, and changes nothing.
        status, _, err = await served.admin("end", table.room)
        assert status == 1 and "game_over" in err
        assert table.mirrors[0].version == ended["version"]
    finally:
        await table.close()
    logged = [line for line in served.lines("admin_action") if line["action"] == "end"]
    assert [(line["operator"], line["room"], line["result"]) for line in logged] == [
        (OPERATOR, table.room, "ok"), (OPERATOR, table.room, "game_over")
    ]
    closed = served.lines("room_closed_by_operator")
    assert [(line["room"], line["operator"]) for line in closed] == [(table.room, OPERATOR)]


async def test_a_waiting_room_ended_is_finished_too(served: Served) -> None:
    client = await Client.connect(served.server.url)
    try:
        room = await client.create("mantis", 2)
        status, _, _ = await served.admin("end", room.room)
        assert status == 0
        await room.wait(lambda m: m.view["status"] == "finished")
        assert room.view["outcome"]["reason"] == "closed_by_operator"
        assert not await client.list_rooms()  # off the lobby
    finally:
        await client.close()


async def test_a_muted_players_chat_is_refused_and_the_others_is_not(served: Served) -> None:
    table = await started_table(served.server.url)
    loud, quiet = table.clients
    try:
        status, muted, _ = await served.admin("mute", table.room, loud.player)
        assert status == 0 and muted["muted"] == [loud.player]
        await table.mirrors[1].wait(
            lambda m: any(e.get("type") == "chat_muted" for e in m.events)
        )
        with pytest.raises(ServerError) as refused:
            await loud.chat(table.room, "hello?")
        assert refused.value.code == errors.MUTED and "muted" in refused.value.reason
        await quiet.chat(table.room, "still here")
        await table.mirrors[0].wait(lambda m: [c["text"] for c in m.chat] == ["still here"])

        status, unmuted, _ = await served.admin("unmute", table.room, loud.player)
        assert status == 0 and unmuted["muted"] == []
        await loud.chat(table.room, "back")
        await table.mirrors[1].wait(lambda m: [c["text"] for c in m.chat][-1:] == ["back"])
    finally:
        await table.close()
    logged = [(line["action"], line["player"], line["operator"])
              for line in served.lines("admin_action")]
    assert logged == [("mute", loud.player, OPERATOR), ("unmute", loud.player, OPERATOR)]


async def test_a_refused_address_cannot_say_hello_until_its_time_is_over(
    served: Served,
) -> None:
    status, refused, _ = await served.admin("refuse", "127.0.0.1", "3s", "--reason", "spam")
    assert status == 0 and refused["refusal"]["by"] == OPERATOR
    status, listed, _ = await served.admin("refusals")
    assert [r["address"] for r in listed["refusals"]] == ["127.0.0.1"]
    for _ in range(3):
        with pytest.raises(ServerError) as hello:
            await Client.connect(served.server.url)
        assert hello.value.code == errors.ADDRESS_REFUSED and "spam" in hello.value.reason
        assert 0 < hello.value.reply["retry_after"] <= 3
    # Logged once per address and window, however often it is refused.
    assert [line["address"] for line in served.lines("address_refused")] == ["127.0.0.1"]
    # The refusal lapses by itself: poll until a hello goes through, within a deadline.
    deadline = time.monotonic() + 15
    while True:
        try:
            client = await Client.connect(served.server.url)
            break
        except ServerError as exc:
            assert exc.code == errors.ADDRESS_REFUSED and time.monotonic() < deadline
            await asyncio.sleep(0.1)  # polling for the TTL to lapse, not standing in for sync
    await client.close()
    status, listed, _ = await served.admin("refusals")
    assert listed["refusals"] == []


async def test_a_connection_greeted_before_its_address_is_refused_is_closed(
    served: Served,
) -> None:
    async with connect(served.server.url) as ws:
        await ws.send(encode({"t": "hello", "id": 1, "protocol": [1]}))
        assert decode(await ws.recv())["t"] == "ok"
        assert (await served.admin("refuse", "127.0.0.1", "1m"))[0] == 0
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(20):  # every process checks every third of lease_ms
                while True:
                    await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == errors.CLOSE_POLICY
    assert [line.get("at") for line in served.lines("address_refused")] == ["connected"]


async def test_a_lifted_refusal_lets_the_address_in_at_once(served: Served) -> None:
    assert (await served.admin("refuse", "127.0.0.1", "1h"))[0] == 0
    with pytest.raises(ServerError):
        await Client.connect(served.server.url)
    status, lifted, _ = await served.admin("lift", "127.0.0.1")
    assert status == 0 and lifted["lifted"] == "127.0.0.1"
    await (await Client.connect(served.server.url)).close()
    status, _, err = await served.admin("lift", "127.0.0.1")
    assert status == 1 and "not refused" in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["room", "nosuchroom"], "no_such_room"),
        (["end", "zzzzzzzzzzzz"], "no_such_room"),
        (["mute", "zzzzzzzzzzzz", "someone"], "no_such_room"),
        (["refuse", "not-an-address", "1m"], "bad_address"),
        (["refuse", "10.0.0.1", "400d"], "bad_duration"),
        (["rooms", "--limit", "0"], "limit"),
    ],
)
async def test_bad_input_gets_a_clear_error(served: Served, argv: list[str], said: str) -> None:
    status, printed, err = await served.admin(*argv)
    assert status == 1 and printed is None
    assert said in err, err


async def test_a_duration_that_does_not_read_is_refused_before_sending(served: Served) -> None:
    status, _, err = await served.admin("refuse", "10.0.0.1", "soon")
    assert status == 2 and "not a duration" in err
    assert served.lines("admin_action") == []  # nothing reached the server


async def test_muting_a_player_nobody_is_refused(served: Served) -> None:
    table = await started_table(served.server.url)
    try:
        status, _, err = await served.admin("mute", table.room, "nobody123456")
        assert status == 1 and "no_such_player" in err
        assert (await served.admin("room", table.room))[1]["room"]["version"] == (
            table.mirrors[0].version
        )
    finally:
        await table.close()


async def test_a_wrong_token_is_refused_and_logged(served: Served) -> None:
    status, _, err = await served.admin("rooms", token="wrong")
    assert status == 1 and "unauthorized" in err
    status, _, err = await served.admin("refuse", "10.0.0.1", "1m", token="")
    assert status == 1 and "unauthorized" in err
    assert [line["result"] for line in served.lines("admin_action")] == ["unauthorized"] * 2
    assert (await served.admin("refusals"))[1]["refusals"] == []


async def test_the_listener_is_not_reached_when_nothing_listens() -> None:
    # A port held bound but not listening: connecting is refused, and nothing else can take it.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "playhall.cli", "admin", "--url", f"127.0.0.1:{port}",
            "rooms", stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env={"PYTHONPATH": ":".join(str(ROOT / d) for d in ("protocol", "server", "clients"))},
        )
        _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 1 and b"cannot reach" in err


def _http(
    url: str, method: str, body: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, body or None, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


@pytest.mark.parametrize(
    ("method", "path", "body", "operator", "status", "code"),
    [
        ("GET", "/admin/rooms", b"", OPERATOR, 405, "method_not_allowed"),
        ("POST", "/metrics", b"", OPERATOR, 404, "not_found"),
        ("POST", "/admin/rooms", b"", "", 400, "bad_operator"),
        ("POST", "/admin/rooms", b"{not json", OPERATOR, 400, "bad_request"),
        ("POST", "/admin/rooms", b"[1]", OPERATOR, 400, "bad_request"),
        ("POST", "/admin/rooms", b'{"status": "gone"}', OPERATOR, 400, "bad_request"),
        ("POST", "/admin/explode", b"{}", OPERATOR, 404, "unknown_action"),
        ("POST", "/admin/refuse", b'{"address": "10.0.0.1", "seconds": "soon"}', OPERATOR, 400,
         "bad_duration"),
        ("POST", "/admin/refuse", b'{"address": "10.0.0.1", "seconds": -5}', OPERATOR, 400,
         "bad_duration"),
        ("POST", "/admin/rooms", b"x" * 20_000, OPERATOR, 413, "too_large"),
    ],
)
async def test_the_listener_refuses_what_it_does_not_take_with_a_code(
    served: Served, method: str, path: str, body: bytes, operator: str, status: int, code: str
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if operator:
        headers["X-Playhall-Operator"] = operator
    got, answer = await asyncio.to_thread(_http, served.url + path, method, body, headers)
    assert (got, answer["error"]) == (status, code) and answer["reason"]
    assert (await served.admin("refusals"))[1]["refusals"] == []  # nothing was changed


async def test_people_read_the_listing_without_json(served: Served) -> None:
    table = await started_table(served.server.url)
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "playhall.cli", "admin", "--url", served.url, "--token", TOKEN,
            "rooms", stdout=asyncio.subprocess.PIPE, env=served.server.env,
        )
        out, _ = await asyncio.wait_for(process.communicate(), 30)
    finally:
        await table.close()
    lines = out.decode().splitlines()
    assert process.returncode == 0 and lines[-1] == "1 room"
    assert table.room in lines[0] and "playing" in lines[0] and "owner admin-test" in lines[0]
    assert f"p0 ({table.clients[0].player})" in lines[0]


def test_the_listener_off_the_loopback_interface_needs_a_token() -> None:
    check_listen("127.0.0.1:9766", "")
    check_listen("[::1]:9766", "")
    check_listen("0.0.0.0:9766", "a-token")
    with pytest.raises(ValueError, match="not a loopback address: set admin_token"):
        check_listen("0.0.0.0:9766", "")
