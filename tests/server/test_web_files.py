"""The web client's files over plain HTTP on the websocket port, from the real server: the page
at ``/``, content types, revalidation, and nothing outside the package's ``static/`` folder,
however the path is spelled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request

from playhall import app
from playhall.net.web import WebFiles, content_type, is_websocket_upgrade, load_files

STATIC = Path(__file__).resolve().parents[2] / "clients" / "playhall_web" / "static"


async def http(
    port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP/1.1 request; the server closes the connection after its answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode())
    raw = await asyncio.wait_for(reader.read(), 10)  # to EOF: the server closes
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), {k.lower(): v for k, v in fields.items()}, body


async def test_the_page_is_served_at_the_root(server: app.Running) -> None:
    status, headers, body = await http(server.port, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert body == (STATIC / "index.html").read_bytes()
    assert headers["content-length"] == str(len(body))
    assert headers["cache-control"] == "no-cache"
    assert "script-src 'self'" in headers["content-security-policy"]
    # A query string (a shared link into a room) is the same page.
    status, _, again = await http(server.port, "/?room=abc&code=3FA9C2")
    assert status == 200 and again == body


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/lib/playhall.js", "text/javascript; charset=utf-8"),
        ("/lib/codec.js", "text/javascript; charset=utf-8"),
        ("/lib/vendor/msgpack/Decoder.mjs", "text/javascript; charset=utf-8"),
        ("/lib/vendor/msgpack/utils/utf8.mjs", "text/javascript; charset=utf-8"),
        ("/lib/vendor/msgpack/README.md", "text/plain; charset=utf-8"),
    ],
)
async def test_files_come_with_their_content_type(
    server: app.Running, path: str, kind: str
) -> None:
    status, headers, body = await http(server.port, path)
    assert status == 200
    assert headers["content-type"] == kind
    assert headers["x-content-type-options"] == "nosniff"
    assert body == (STATIC / path.lstrip("/")).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/nope.js",
        "/lib/",  # no directory listings
        "/lib",
        "/index.html/",
        "/../pyproject.toml",
        "/../__init__.py",
        "/%2e%2e/__init__.py",
        "/lib/../../__init__.py",
        "/lib/%2e%2e/%2e%2e/__init__.py",
        "/..%2f__init__.py",
        "/static/index.html",
        "//etc/passwd",
        "/lib/..%5c..%5c__init__.py",
        "/%00",
        "/LIB/PLAYHALL.JS",
    ],
)
async def test_nothing_outside_the_files_is_served(server: app.Running, path: str) -> None:
    status, headers, body = await http(server.port, path)
    assert status == 404
    assert body == b"not found\n"
    assert headers["content-type"] == "text/plain; charset=utf-8"


async def test_an_unchanged_file_is_not_sent_again(server: app.Running) -> None:
    _, headers, _ = await http(server.port, "/lib/playhall.js")
    etag = headers["etag"]
    status, headers, body = await http(
        server.port, "/lib/playhall.js", headers={"If-None-Match": etag}
    )
    assert status == 304 and body == b"" and headers["etag"] == etag
    status, _, body = await http(
        server.port, "/lib/playhall.js", headers={"If-None-Match": '"other"'}
    )
    assert status == 200 and body


async def test_head_and_other_methods(server: app.Running) -> None:
    status, headers, body = await http(server.port, "/lib/codec.js", method="HEAD")
    assert status == 200 and body == b""
    assert headers["content-length"] == str((STATIC / "lib" / "codec.js").stat().st_size)
    status, headers, _ = await http(server.port, "/", method="POST")
    assert status == 405 and headers["allow"] == "GET, HEAD"


async def test_healthz_is_still_the_health_check(server: app.Running) -> None:
    status, headers, body = await http(server.port, "/healthz")
    assert (status, body) == (200, b"ok\n")


def test_only_a_websocket_upgrade_is_a_handshake() -> None:
    def request(**headers: str) -> Request:
        return Request("/", Headers(headers))

    assert is_websocket_upgrade(request(Upgrade="websocket"))
    assert is_websocket_upgrade(request(Upgrade="WebSocket"))
    assert is_websocket_upgrade(request(Upgrade="h2c, websocket"))
    assert not is_websocket_upgrade(request())
    assert not is_websocket_upgrade(request(Upgrade="h2c"))


def test_the_files_are_the_package_data() -> None:
    files = load_files()
    on_disk = {
        "/" + p.relative_to(STATIC).as_posix()
        for p in STATIC.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    }
    assert set(files) == on_disk | {"/"}
    assert files["/"] is files["/index.html"]
    assert content_type("a.MJS") == "text/javascript; charset=utf-8"
    assert content_type("LICENSE") == "application/octet-stream"
    assert load_files("no_such_package_here") == {}
    assert WebFiles({}).files == {}
