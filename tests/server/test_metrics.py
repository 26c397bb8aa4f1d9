"""GET /metrics against a real server and a real Redis: a played game moves the counts by what
was played, the collector's numbers are the server's state, the exposition parses with
prometheus_client's own parser, and only operators may read it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from playhall import app
from playhall.config import Config, parse_listen
from playhall.counters import COMMIT_BUCKETS, Counters
from playhall.rooms.record import FINISHED, PLAYING, WAITING
from playhall.store.outage import Outage
from playhall_client import Client, RoomMirror, ServerError
from playhall_protocol import encode, errors

from .conftest import server_config
from .helpers import started_table
from .metrics_scrape import Scrape, http_get, scrape


def metrics_port(running: app.Running) -> int:
    port = running.metrics_port
    assert port is not None
    return port


async def play_against_a_bot(client: Client, room: RoomMirror) -> int:
    """Make ``client``'s first legal move at each of its turns until the game ends; the moves
    it made."""
    moves = 0
    while room.view["status"] != "finished":
        await room.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 30)
        if room.my_turn:
            await client.move(room.room, room.view["moves"][0])
            moves += 1
    return moves


async def test_a_played_game_moves_the_counts_by_what_was_played(server: app.Running) -> None:
    port = metrics_port(server)
    before = await scrape(port)
    client = await Client.connect(f"ws://127.0.0.1:{server.port}/", name="counted")
    try:
        room = await client.create("mantis", 2)
        await client.add_bot(room.room, 1)
        await client.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        await room.wait(lambda m: m.my_turn, 30)
        # Refusals provoked on purpose: a move against an old version, a move in a room that
        # does not exist, a message of no known type.
        with pytest.raises(ServerError) as stale:
            await client.move(room.room, room.view["moves"][0], version=room.version - 1)
        assert stale.value.code == errors.STALE
        with pytest.raises(ServerError) as missing:
            await client.request("move", room="nosuchroom1", version=1, mid="m", move={})
        assert missing.value.code == errors.NO_SUCH_ROOM
        await client.send_raw(encode({"t": "dance", "id": 99}))
        moved = await play_against_a_bot(client, room)
        final = room.version
    finally:
        await client.close()
    after = await scrape(port)

    def grew(name: str, **labels: str) -> float:
        return after.get(name, **labels) - before.get(name, **labels)

    assert moved > 0
    assert grew("playhall_requests_total", type="move", result="ok") == moved
    assert grew("playhall_requests_total", type="move", result=errors.STALE) == 1
    assert grew("playhall_requests_total", type="move", result=errors.NO_SUCH_ROOM) == 1
    assert grew("playhall_requests_total", type="invalid", result=errors.UNKNOWN_TYPE) == 1
    for kind in ("hello", "create", "bot", "ready"):
        assert grew("playhall_requests_total", type=kind, result="ok") == 1, kind
    assert grew("playhall_commits_total", kind="move") == moved
    assert grew("playhall_commits_total", kind="bot_move") > 0
    # Every change after the room's creation is one commit, one version.
    commits = after.total("playhall_commits_total") - before.total("playhall_commits_total")
    assert commits == final - 1
    assert grew("playhall_commit_seconds_count") == commits
    assert grew("playhall_commit_seconds_bucket", le="+Inf") == commits
    assert 0 < grew("playhall_commit_seconds_sum") < commits * 5.0
    assert grew("playhall_games_started_total", game="mantis") == 1
    assert grew("playhall_games_finished_total", game="mantis") == 1
    # At least the replies and the mover's updates went out, each a frame of a few bytes.
    assert grew("playhall_frames_sent_total") >= 2 * moved
    assert grew("playhall_sent_bytes_total") > 10 * grew("playhall_frames_sent_total")


async def test_the_exposition_parses_and_follows_the_conventions(server: app.Running) -> None:
    status, headers, body = await http_get(metrics_port(server))
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    parsed = Scrape(body)
    ours = {name: kind for name, kind in parsed.types.items() if name.startswith("playhall_")}
    assert len(ours) > 20
    for name, kind in ours.items():
        # (the parser gives a counter's family name without its _total)
        assert kind in ("counter", "gauge", "histogram", "info"), (name, kind)
        assert name == name.lower() and "__" not in name, name
        if kind == "counter":
            assert f"{name}_total" in body, name
    assert parsed.types["playhall_commit_seconds"] == "histogram"
    assert "process_cpu_seconds" in parsed.types  # the process collector, per server registry
    # A labelled sample's labels come from the server's own words, never a room or a player.
    for (_, labels), _ in parsed.samples.items():
        assert {name for name, _ in labels} <= {
            "type", "result", "kind", "game", "status", "reason", "le", "version", "loop",
            "speedups", "generation", "implementation", "major", "minor", "patchlevel",
        }, labels


async def test_the_collectors_numbers_are_the_servers_state(server: app.Running) -> None:
    url = f"ws://127.0.0.1:{server.port}/"
    table = await started_table(url)
    watcher = await Client.connect(url, name="watcher")
    waiting = await Client.connect(url, name="host")
    try:
        await watcher.join(table.room, watch=True)
        await waiting.create("mantis", 3)
        now = await scrape(metrics_port(server))
        sessions = server.endpoint.sessions
        assert now.get("playhall_connections") == len(sessions) == 4
        assert now.get("playhall_players_online") == len({s.player for s in sessions}) == 4
        rooms = server.rooms.rooms.values()
        assert now.by("playhall_rooms_loaded", "status") == {"playing": 1, "waiting": 1}
        assert now.get("playhall_rooms_loaded", game="mantis", status="playing") == 1
        assert now.get("playhall_leases_held") == len(rooms) == 2
        # two seated and a watcher at the table, the host in the waiting room
        assert now.get("playhall_viewers", game="mantis") == 4 == sum(
            len(r.audience.viewers) for r in rooms
        )
        assert now.get("playhall_room_inbox_commands") == 0
        assert now.get("playhall_outbox_frames") == 0
        assert now.get("playhall_redis_pipe_waiting") == 0
        assert now.get("playhall_redis_outage") == 0
        assert now.get("playhall_ready") == 1
        assert now.get("playhall_draining") == 0
        assert 0 <= now.get("playhall_redis_silent_seconds") < server.config.lease_ms / 1000
    finally:
        for client in (watcher, waiting):
            await client.close()
        await table.close()
    # Closed by their clients: counted so.
    gone = await _wait_for(metrics_port(server), "playhall_connections", 0)
    assert gone.get("playhall_connections_closed_total", reason="client") == 4


async def _wait_for(
    port: int, name: str, value: float, timeout: float = 10, **labels: str
) -> Scrape:
    """A scrape once ``name`` reads ``value`` (the server notices closed sockets on its own,
    and counts a forfeit once the change that made it is stored)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        now = await scrape(port)
        if now.get(name, **labels) == value or loop.time() > deadline:
            return now
        await asyncio.sleep(0.05)  # polling a condition with a deadline


async def test_a_flooding_connection_is_counted_with_its_reason(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, rate=1.0, burst=3))
    try:
        async with connect(f"ws://127.0.0.1:{running.port}/") as ws:
            for i in range(12):
                await ws.send(encode({"t": "ping", "id": i + 1}))
            await asyncio.wait_for(ws.wait_closed(), 10)
            assert ws.close_code == errors.CLOSE_POLICY
        now = await _wait_for(metrics_port(running), "playhall_connections", 0)
        assert now.get("playhall_connections_closed_total", reason="flooding") == 1
        assert now.get("playhall_requests_total", type="unread", result=errors.RATE_LIMITED) >= 1
    finally:
        await running.drain()


async def test_a_resignation_is_counted_as_a_forfeit(server: app.Running) -> None:
    table = await started_table(f"ws://127.0.0.1:{server.port}/")
    try:
        await table.clients[0].resign(table.room)
        await table.mirrors[1].wait(lambda m: m.view["status"] == "finished")
    finally:
        await table.close()
    now = await _wait_for(metrics_port(server), "playhall_forfeits_total", 1, reason="resignation")
    assert now.get("playhall_forfeits_total", reason="resignation") == 1
    assert now.get("playhall_commits_total", kind="leave_game") == 1
    assert now.get("playhall_games_finished_total", game="mantis") == 1


async def test_clocks_run_out_into_forfeits_and_stand_ins_and_are_counted(
    server: app.Running,
) -> None:
    url = f"ws://127.0.0.1:{server.port}/"
    port = metrics_port(server)
    forfeiting = await started_table(
        url, options={"clock": "turn", "clock_ms": 300, "on_timeout": "forfeit"}
    )
    try:
        await forfeiting.mirrors[0].wait(lambda m: m.view["status"] == "finished", 20)
    finally:
        await forfeiting.close()
    now = await _wait_for(port, "playhall_forfeits_total", 1, reason="timeout")
    assert now.get("playhall_forfeits_total", reason="timeout") == 1
    assert now.get("playhall_clock_timeouts_total") == 1
    assert now.get("playhall_commits_total", kind="leave_game") == 1
    assert now.total("playhall_stand_ins_total") == 0
    standing_in = await started_table(
        url, options={"clock": "turn", "clock_ms": 300, "on_timeout": "bot"}
    )
    try:
        await standing_in.mirrors[0].wait(
            lambda m: any(s["stand_in"] == "timeout" for s in m.view["seats"]), 20
        )
    finally:
        await standing_in.close()
    now = await scrape(port)
    stood_in = now.get("playhall_stand_ins_total", reason="timeout")
    assert stood_in >= 1
    assert now.get("playhall_clock_timeouts_total") == 1 + stood_in
    assert now.get("playhall_commits_total", kind="stand_in") == stood_in


async def test_refused_connections_and_requests_are_counted(redis_url: str) -> None:
    running = await app.start(
        server_config(redis_url, connections_per_address=1, http_rate=0.01, http_burst=2)
    )
    try:
        url = f"ws://127.0.0.1:{running.port}/"
        async with connect(url):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url):
                    pass
            assert refused.value.response.status_code == 429
        statuses = [(await http_get(running.port, "/nosuchfile"))[0] for _ in range(4)]
        assert statuses[-1] == 429
        now = await scrape(metrics_port(running))
        assert now.get("playhall_http_refused_total", reason="too_many_connections") == 1
        assert now.get("playhall_http_refused_total", reason="too_many_requests") == (
            statuses.count(429)
        )
    finally:
        await running.drain()


# -- who may read them ----------------------------------------------------------------------


@pytest.fixture
async def guarded(redis_url: str) -> AsyncIterator[app.Running]:
    """A server whose metrics need a token, on the game port and on their own listener."""
    running = await app.start(server_config(redis_url, metrics_token="s3cret-token"))
    yield running
    await running.drain()


def test_by_default_metrics_listen_on_the_loopback_interface_only() -> None:
    config = Config()
    assert config.metrics_token == ""
    host, port = parse_listen(config.metrics_listen)
    assert host == "127.0.0.1" and port not in (0, config.port)


async def test_without_a_token_the_game_port_does_not_serve_metrics(server: app.Running) -> None:
    status, _, body = await http_get(server.port, "/metrics")
    assert status == 404
    assert "playhall_" not in body
    status, _, _ = await http_get(server.port, "/metrics", {"Authorization": "Bearer x"})
    assert status == 404
    # ... and their own listener does, to whoever reaches it (the loopback interface).
    status, _, body = await http_get(metrics_port(server), "/metrics")
    assert status == 200 and "playhall_connections " in body


async def test_with_a_token_only_the_right_one_reads_them(guarded: app.Running) -> None:
    for port in (guarded.port, metrics_port(guarded)):
        for headers in (
            None,
            {"Authorization": "Bearer wrong-token"},
            {"Authorization": "Bearer s3cret-token-and-more"},
            {"Authorization": "s3cret-token"},
            {"Authorization": "Basic czNjcmV0LXRva2Vu"},
        ):
            status, answer, body = await http_get(port, "/metrics", headers)
            assert status == 401, (port, headers)
            assert answer["www-authenticate"].startswith("Bearer")
            assert "playhall_" not in body
        status, _, body = await http_get(
            port, "/metrics", {"Authorization": "Bearer s3cret-token"}
        )
        assert status == 200 and "playhall_ready 1.0" in body, port


async def test_the_listener_serves_metrics_and_nothing_else(server: app.Running) -> None:
    port = metrics_port(server)
    assert (await http_get(port, "/healthz"))[0] == 404
    assert (await http_get(port, "/"))[0] == 404
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"ws://127.0.0.1:{port}/metrics"):
            pass
    assert refused.value.response.status_code == 200  # answered, never upgraded
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"ws://127.0.0.1:{port}/"):
            pass
    assert refused.value.response.status_code == 404


async def test_an_empty_metrics_listen_opens_no_listener(redis_url: str) -> None:
    running = await app.start(server_config(redis_url, metrics_listen=""))
    try:
        assert running.metrics_port is None
        assert (await http_get(running.port, "/metrics"))[0] == 404
    finally:
        await running.drain()


async def test_a_metrics_address_in_use_stops_the_start_with_a_reason(redis_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        with pytest.raises(OSError, match=f"metrics_listen {address}: .*own address"):
            await app.start(server_config(redis_url, metrics_listen=address))


@pytest.mark.parametrize("text", ["", "9765", "localhost", "host:port", ":9765", "h:99999"])
def test_a_metrics_address_that_is_not_host_and_port_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not host:port"):
        parse_listen(text)
    if text:  # (empty is the setting's "no listener")
        with pytest.raises(ValueError, match="metrics_listen: .* not host:port"):
            Config.from_env({"PLAYHALL_METRICS_LISTEN": text})


def test_ipv6_metrics_addresses_are_read() -> None:
    assert parse_listen("[::1]:9765") == ("::1", 9765)
    assert parse_listen("0.0.0.0:0") == ("0.0.0.0", 0)


# -- the counts themselves ------------------------------------------------------------------


def test_a_commit_lands_in_the_first_bucket_that_holds_it() -> None:
    counters = Counters()
    for seconds in (0.0001, 0.0005, 0.0006, 0.3, 5.0, 7.0):
        counters.committed("move", seconds)
    buckets = dict(zip((*COMMIT_BUCKETS, "+Inf"), counters.commit_buckets, strict=True))
    assert buckets[0.0005] == 2  # the bound itself is inside (le: less than or equal)
    assert buckets[0.001] == 1
    assert buckets[0.5] == 1
    assert buckets[5.0] == 1
    assert buckets["+Inf"] == 1
    assert sum(counters.commit_buckets) == counters.commits["move"] == 6
    assert counters.commit_seconds == pytest.approx(12.3012)


def test_games_are_counted_by_the_statuses_rooms_have() -> None:
    counters = Counters()
    for status in (WAITING, PLAYING, FINISHED, PLAYING):
        counters.game_changed("mantis", status)
    assert counters.games_started == {"mantis": 2}
    assert counters.games_finished == {"mantis": 1}


def test_redis_failures_and_outages_are_counted_for_good() -> None:
    now = [0.0]
    outage = Outage(clock=lambda: now[0])
    error = ConnectionError("gone")
    outage.failed(error)
    outage.failed(error)
    now[0] += outage.settle
    outage.answered()
    outage.failed(error)
    assert (outage.failures_total, outage.outages_total) == (3, 2)
    assert outage.failures == 1  # (the log's count is of the outage going on)
