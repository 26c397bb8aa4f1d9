"""The hosting recipe, tested: a real nginx with deploy/nginx/playhall.conf (adapted to test
ports, TLS with a certificate made at test time) in front of a real ``playhall serve`` process.
Through it, under /play/: the page and its files load, the rules pages too, a whole game is
played by two Python clients over ``wss://``, and the per-address limits count the address
nginx forwards (``forwarded_header``), not nginx's own."""

from __future__ import annotations

import asyncio
import http.client
import ssl
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from playhall_client.bots import RandomBot
from playhall_client.client import Client

from .conftest import free_port
from .nginx import Nginx, configure
from .process import ServerProcess

STATIC = Path(__file__).resolve().parents[2] / "clients" / "playhall_web" / "static"
TIMEOUT = 60.0


@pytest.fixture
async def proxied(redis_url: str, tmp_path: Path) -> AsyncIterator[Nginx]:
    """The server (connections_per_address 2, counted by X-Forwarded-For) behind nginx."""
    tag = uuid.uuid4().hex[:8]
    server = ServerProcess(
        free_port(), redis_url, f"n{tag}:", f"nginx-{tag}",
        ["--forwarded-header", "X-Forwarded-For", "--connections-per-address", "2"],
    )
    await server.start()
    try:
        # Its port is final once it started (it moves to another when the first was taken).
        nginx = configure(tmp_path / "nginx", server.port)
        try:
            await nginx.start()
            yield nginx
        finally:
            nginx.stop()
    finally:
        server.terminate()


@pytest.fixture
def trusting(proxied: Nginx, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """Clients that trust the test certificate (the Python client's default TLS context reads
    SSL_CERT_FILE when it is made)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(proxied.cert))
    return ssl.create_default_context(cafile=str(proxied.cert))


def get(port: int, path: str, context: ssl.SSLContext | None) -> tuple[int, dict[str, str], bytes]:
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
        if context is not None else http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    )
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


async def test_the_page_its_files_and_the_rules_load_under_play(
    proxied: Nginx, trusting: ssl.SSLContext
) -> None:
    port = proxied.https_port
    status, headers, body = await asyncio.to_thread(get, port, "/play/", trusting)
    assert status == 200 and body == (STATIC / "index.html").read_bytes()
    assert headers["content-type"] == "text/html; charset=utf-8"
    for path in ("app/main.js", "app/style.css", "lib/playhall.js"):
        status, _, body = await asyncio.to_thread(get, port, f"/play/{path}", trusting)
        assert status == 200 and body == (STATIC / path).read_bytes(), path
    status, _, body = await asyncio.to_thread(get, port, "/play/rules/mantis", trusting)
    assert status == 200 and b"<title>Mantis \xc2\xb7 Playhall</title>" in body
    # /play without its slash, and plain HTTP, are sent to the page's address.
    status, headers, _ = await asyncio.to_thread(get, port, "/play", trusting)
    assert status == 301 and headers["location"].endswith("/play/")
    status, headers, _ = await asyncio.to_thread(get, proxied.http_port, "/play/", None)
    assert status == 301 and headers["location"].startswith("https://")
    # Outside /play/ nginx has nothing of the server's.
    status, _, _ = await asyncio.to_thread(get, port, "/lib/playhall.js", trusting)
    assert status == 404


async def test_a_whole_game_is_played_through_the_proxy(
    proxied: Nginx, trusting: ssl.SSLContext
) -> None:
    alice = await Client.connect(proxied.ws_url, name="alice")
    bob = await Client.connect(proxied.ws_url, name="bob")
    try:
        room_a = await alice.create("mantis", 2)
        room_b = await bob.join(room_a.room)
        bots = RandomBot(alice, seed=1), RandomBot(bob, seed=2)
        outcomes = await asyncio.wait_for(
            asyncio.gather(bots[0].play_game(room_a), bots[1].play_game(room_b)), TIMEOUT
        )
        assert outcomes[0] == outcomes[1] and outcomes[0]["winners"]
        assert room_a.view["status"] == "finished"
        assert bots[0].moves_made > 0 and bots[1].moves_made > 0
    finally:
        await alice.close()
        await bob.close()


async def test_per_address_limits_count_the_address_nginx_forwards(
    proxied: Nginx, trusting: ssl.SSLContext
) -> None:
    """Every connection reaches the server from nginx's 127.0.0.1; the clients come to nginx
    from 127.0.0.5 and 127.0.0.6. With two connections a client address, a third from .5 is
    refused while .6 still gets in: the server counts what nginx forwards. A client writing
    the header itself does not borrow another's address: nginx's own entry comes last."""

    def from_(address: str, **kwargs: Any) -> connect:
        return connect(proxied.ws_url, ssl=trusting, local_addr=(address, 0), open_timeout=10,
                       **kwargs)

    first = await from_("127.0.0.5")
    second = await from_("127.0.0.5")
    try:
        with pytest.raises(InvalidStatus) as refused:
            await from_("127.0.0.5")
        assert refused.value.response.status_code == 429
        spoofing = await from_(
            "127.0.0.6", additional_headers={"X-Forwarded-For": "127.0.0.9"}
        )
        other = await from_("127.0.0.6")
        with pytest.raises(InvalidStatus):
            await from_("127.0.0.6", additional_headers={"X-Forwarded-For": "127.0.0.9"})
        await spoofing.close()
        await other.close()
    finally:
        await first.close()
        await second.close()
