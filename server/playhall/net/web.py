"""The web client's files, answered over plain HTTP on the websocket port.

A browser's plain ``GET /`` (no ``Upgrade: websocket``) gets the page; the page's scripts then
open a websocket to the same address. The files are the package data of ``playhall_web``
(``clients/playhall_web/static/``), found with :mod:`importlib.resources` so they are served
the same from a checkout, an editable install or a wheel; a game plugin's own renderer comes from
its package (:func:`plugin_renderers`). They are read once, when the server
starts, into a table keyed by URL path: a request can only ever name one of those files, so no
path (``..``, percent-encoded or not) reaches anything else. Anything not in the table is 404.

Every answer closes its connection (the websocket core sends one response and stops); a page
and its dozen modules are a dozen short connections, which is nothing next to the game's
traffic. ``Cache-Control: no-cache`` with an ``ETag`` makes a browser revalidate each file
(``304`` when unchanged), so a new server version is never hidden behind a stale script.
"""

from __future__ import annotations

import email.utils
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from importlib import resources
from importlib.resources.abc import Traversable

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from playhall import log

logger = log.get("playhall.net")

#: Content types by file extension; any other file is served as bytes.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}
OCTET_STREAM = "application/octet-stream"

#: Scripts, styles and images only from this server; the websocket to it (``'self'`` covers
#: ws/wss to the same host in current browsers; ``ws:``/``wss:`` for the rest). No inline
#: script, no plugins, no framing by other sites.
CSP = (
    "default-src 'self'; script-src 'self'; connect-src 'self' ws: wss:; "
    "img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class WebFile:
    body: bytes
    content_type: str
    etag: str


def web_file(body: bytes, content_type: str) -> WebFile:
    """A file to serve, with its ETag (a hash of its bytes)."""
    return WebFile(body, content_type, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def content_type(name: str) -> str:
    dot = name.rfind(".")
    return CONTENT_TYPES.get(name[dot:].lower(), OCTET_STREAM) if dot > 0 else OCTET_STREAM


def _walk(folder: Traversable, prefix: str, files: dict[str, WebFile]) -> None:
    for entry in folder.iterdir():
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        path = f"{prefix}/{entry.name}"
        if entry.is_dir():
            _walk(entry, path, files)
        elif entry.is_file():
            files[path] = web_file(entry.read_bytes(), content_type(entry.name))


def load_files(package: str = "playhall_web", folder: str = "static") -> dict[str, WebFile]:
    """Every file under the package's ``folder``, keyed by URL path (``/lib/playhall.js``);
    ``/`` is ``index.html``. Empty if the package is not installed."""
    try:
        root = resources.files(package) / folder
    except ModuleNotFoundError:
        return {}
    files: dict[str, WebFile] = {}
    if root.is_dir():
        _walk(root, "", files)
    if "/index.html" in files:
        files["/"] = files["/index.html"]
    return files


def plugin_file(package: str, *path: str) -> Traversable | None:
    """The file at ``path`` in a plugin's ``package``; None when the plugin is a single module
    (which holds no files) or the file is not there."""
    try:
        found = resources.files(package).joinpath(*path)
    except (TypeError, ModuleNotFoundError):  # TypeError: a module, not a package
        return None
    return found if found.is_file() else None


def plugin_renderers(packages: Mapping[str, str]) -> dict[str, WebFile]:
    """Each plugin game's own renderer, ``web/<id>.js`` in the package that holds the game
    (``packages``: game id -> package), at the path where the page looks for a game's
    renderer, ``/app/games/<id>.js``."""
    files: dict[str, WebFile] = {}
    for game_id, package in packages.items():
        source = plugin_file(package, "web", f"{game_id}.js")
        if source is not None:
            files[f"/app/games/{game_id}.js"] = web_file(source.read_bytes(), content_type(".js"))
    return files


def is_websocket_upgrade(request: Request) -> bool:
    return any(
        token.strip().lower() == "websocket"
        for value in request.headers.get_all("Upgrade")
        for token in value.split(",")
    )


def http_response(
    status: HTTPStatus, headers: list[tuple[str, str]], body: bytes, length: int | None = None
) -> Response:
    """A response that closes the connection; ``length`` is the Content-Length when it is not
    the body's own (HEAD: the GET's; 304: none)."""
    base = [("Date", email.utils.formatdate(usegmt=True)), ("Connection", "close")]
    if status is not HTTPStatus.NOT_MODIFIED:
        base.append(("Content-Length", str(len(body) if length is None else length)))
    base.append(("X-Content-Type-Options", "nosniff"))
    return Response(status.value, status.phrase, Headers(base + headers), body)


def text_response(
    status: HTTPStatus, text: str, headers: list[tuple[str, str]] | None = None
) -> Response:
    return http_response(
        status, [("Content-Type", "text/plain; charset=utf-8"), *(headers or [])], text.encode()
    )


def too_many_requests(wait: float) -> Response:
    """429 to a client past its address's request rate, with the whole seconds to wait."""
    seconds = str(max(1, math.ceil(wait)))
    return text_response(
        HTTPStatus.TOO_MANY_REQUESTS, "too many requests from your address\n",
        [("Retry-After", seconds)],
    )


def _etags(request: Request) -> set[str]:
    return {tag.strip() for value in request.headers.get_all("If-None-Match")
            for tag in value.split(",")}


class WebFiles:
    """Answers plain HTTP requests for the web client's files."""

    def __init__(self, files: dict[str, WebFile]) -> None:
        self.files = files

    def answer(self, request: Request) -> Response:
        response = self._answer(request)
        logger.debug(
            "http", method=request.method, path=request.path[:200], status=response.status_code
        )
        return response

    def _answer(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return text_response(
                HTTPStatus.METHOD_NOT_ALLOWED, "only GET and HEAD\n", [("Allow", "GET, HEAD")]
            )
        found = self.files.get(request.path.split("?", 1)[0])
        if found is None:
            return text_response(HTTPStatus.NOT_FOUND, "not found\n")
        headers = [
            ("Content-Type", found.content_type),
            ("Cache-Control", "no-cache"),
            ("ETag", found.etag),
        ]
        if found.content_type.startswith("text/html"):
            headers += [("Content-Security-Policy", CSP), ("Referrer-Policy", "no-referrer")]
        if found.etag in _etags(request):
            return http_response(HTTPStatus.NOT_MODIFIED, headers, b"")
        if request.method == "HEAD":
            return http_response(HTTPStatus.OK, headers, b"", len(found.body))
        return http_response(HTTPStatus.OK, headers, found.body)
