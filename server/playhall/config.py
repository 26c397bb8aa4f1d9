"""Server configuration: one dataclass, filled from PLAYHALL_* variables and command-line flags.

Every setting is declared once, with its help text; ``playhall serve --help``, the environment
variables and docs/operations.md all come from these declarations.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playhall.eventloop import CHOICES
from playhall.store.connect import check_url


def setting(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] | None = None,
    factory: Any = None,
    check: Callable[[str], str] | None = None,
) -> Any:
    """A setting; ``check`` turns the raw text into the value or raises ValueError."""
    metadata = {"help": help, "choices": choices, "check": check}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def _key_url(raw: str) -> str:
    """An http(s) URL with a host (the host's published keys); empty stays empty."""
    url = raw.strip()
    parts = urlsplit(url)
    if url and (parts.scheme not in ("http", "https") or not parts.netloc):
        raise ValueError(f"{raw!r} is not an http:// or https:// URL with a host")
    return url


def _http_url(raw: str) -> str:
    """An http(s) URL with a host, ending in ``/`` (the page's folder); empty stays empty."""
    url = _key_url(raw)
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise ValueError(f"{raw!r} has a query or a fragment; give the page's address only")
    return url if url.endswith("/") else url + "/"


def _tag_free(raw: str) -> str:
    """A name that goes into Redis keys around hash tags (the prefix, the instance): a brace in
    it would move the tag Redis hashes, and a room's keys to several slots."""
    if "{" in raw or "}" in raw:
        raise ValueError(f"{raw!r} has a brace; Redis reads braces in a key as its hash tag")
    return raw


def parse_listen(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9765`` for IPv6) as a host and a port; ValueError if it is not."""
    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{text!r} is not host:port (e.g. 127.0.0.1:9765)")
    return host, int(port)


def _listen_address(raw: str) -> str:
    """A listen address as given, once it reads as ``host:port``; empty stays empty."""
    text = raw.strip()
    if text:
        parse_listen(text)
    return text


@dataclass
class Config:
    host: str = setting(
        "127.0.0.1",
        "address to listen on: the default is this machine only; 0.0.0.0 (all interfaces) or "
        "a LAN address lets other machines reach the game port and the page",
    )
    port: int = setting(8765, "port for websockets, the web page and GET /healthz")
    public_url: str = setting(
        "",
        "the address players open the page at, e.g. https://games.example.org/play/ (behind a "
        "proxy); the page's share links use it; empty: the address the page was opened at",
        check=_http_url,
    )
    metrics_listen: str = setting(
        "127.0.0.1:9765",
        "host:port of a listener of its own for Prometheus' GET /metrics (loopback only by "
        "default; port 0: any free port); empty: none",
        check=_listen_address,
    )
    metrics_token: str = setting(
        "",
        "bearer token GET /metrics must carry; when set, the game port serves /metrics too "
        "(never without one)",
    )
    admin_listen: str = setting(
        "127.0.0.1:9766",
        "host:port of the operator's listener that `playhall admin` talks to (loopback only "
        "by default; any other address needs admin_token; port 0: any free port); empty: none",
        check=_listen_address,
    )
    admin_token: str = setting(
        "",
        "bearer token the operator's requests must carry (`playhall admin` reads it from "
        "PLAYHALL_ADMIN_TOKEN); needed when admin_listen is not a loopback address",
    )
    redis_url: str = setting(
        "",
        "Redis to use, e.g. redis://host:6379/0, or a Redis Cluster by its seed nodes, "
        "redis+cluster://host:6379,host2:6379 (rediss:// and rediss+cluster:// with TLS); "
        "empty: start an embedded Redis in data_dir",
        check=check_url,
    )
    data_dir: Path = setting(
        None, "where the embedded Redis keeps its data", factory=lambda: Path("playhall-data")
    )
    redis_fsync: str = setting(
        "everysec",
        "embedded Redis fsync: 'always' loses nothing even if the machine dies; 'everysec' at "
        "most a second on power loss (a killed server process loses nothing either way)",
        choices=("always", "everysec"),
    )
    redis_timeout: float = setting(
        5.0,
        "seconds Redis may take to answer a command (connecting included); past that a room "
        "change, hello or lobby request fails with store_failed",
    )
    key_prefix: str = setting(
        "ph:", "prefix of every Redis key (several deployments, one Redis)", check=_tag_free
    )
    instance: str = setting(
        None,
        "this process's name for room leases; a restart with the same name takes its "
        "rooms back at once, another name waits for the leases to expire (default host:port)",
        factory=lambda: "",
        check=_tag_free,
    )
    lease_ms: int = setting(10_000, "room lease time-to-live in milliseconds")
    forward_timeout: float = setting(
        7.0,
        "seconds a request forwarded to the process holding its room may take to be answered "
        "(past that: store_failed, retryable); longer than redis_timeout, so the owner's own "
        "answer to a slow Redis comes first",
    )
    fleet_ping_every: float = setting(
        1.0,
        "seconds between pings to each other process of the fleet over Redis, timed into "
        "playhall_fleet_round_trip_seconds; 0: none (this process still answers others')",
    )
    max_frame: int = setting(64 * 1024, "largest client frame in bytes (larger: close 1009)")
    connections_per_address: int = setting(
        64,
        "connections one client address may hold at once, counted from the moment each is "
        "accepted (more: HTTP 429); 0: no limit",
    )
    http_rate: float = setting(
        50.0,
        "plain HTTP requests (the web client's files) per second per client address, "
        "sustained (more: HTTP 429 with Retry-After); 0: no limit",
    )
    http_burst: int = setting(300, "plain HTTP request burst per client address")
    forwarded_header: str = setting(
        "",
        "behind a proxy: the header it puts the client's address in (e.g. X-Forwarded-For; "
        "its last address counts); empty: the peer address (the header is not trusted)",
    )
    rate: float = setting(40.0, "messages per second per connection, sustained")
    burst: int = setting(80, "message burst per connection")
    outbox: int = setting(
        256, "frames queued per connection before its room updates wait for a snapshot"
    )
    slow_timeout: float = setting(
        20.0, "seconds a connection may leave a frame unsent before it is closed (4000)"
    )
    code_tries: int = setting(
        5, "wrong join codes a player or a client address may give before each next try waits"
    )
    code_backoff: float = setting(
        2.0, "seconds of the first back-off after code_tries wrong join codes (then doubling)"
    )
    code_backoff_max: float = setting(
        3600.0,
        "longest back-off in seconds between wrong join codes; a player or address quiet "
        "that long starts counting again",
    )
    lobby_page: int = setting(
        50,
        "rooms in a lobby page (rooms without limit, lobby.watch) and the most a rooms "
        "request gets; also the most rooms a lobby push carries",
    )
    lobby_interval: float = setting(
        1.0, "seconds between two lobby pushes to a watcher (changes in between are merged)"
    )
    waiting_rooms: int = setting(
        5,
        "waiting rooms a player may hold a seat in among those they created, at once "
        "(one more create: too_many_rooms); 0: no limit",
    )
    rooms_per_minute: int = setting(
        10, "rooms a player may create per minute (more: too_many_rooms); 0: no limit"
    )
    address_rooms_per_minute: int = setting(
        60,
        "rooms all players of one client address may create per minute (more: "
        "too_many_rooms); 0: no limit",
    )
    new_players_per_minute: int = setting(
        60,
        "players one client address may register per minute (a hello without a token; "
        "more: rate_limited); 0: no limit",
    )
    renames_per_minute: int = setting(
        10, "renames a player may make per minute (more: rate_limited); 0: no limit"
    )
    jwt_key: str = setting(
        "",
        "identity from the host's site: the key its signed tokens (JWTs) are checked with, an "
        "HS256 secret or a PEM public key; empty (and no jwt_jwks_url): players are anonymous",
    )
    jwt_jwks_url: str = setting(
        "",
        "identity from the host's site: the URL of the host's public keys (a JWKS), instead of "
        "jwt_key",
        check=_key_url,
    )
    jwt_issuer: str = setting(
        "", "the issuer (iss) a host token must name; empty: any (not checked)"
    )
    jwt_audience: str = setting(
        "", "the audience (aud) a host token must name; empty: the token must name none"
    )
    room_inbox: int = setting(256, "commands queued per room before 'overloaded'")
    bot_delay: float = setting(0.6, "seconds before a server bot moves (so people can follow)")
    idle_evict: float = setting(
        120.0, "seconds a room stays in memory with nobody watching and nothing scheduled"
    )
    finished_evict: float = setting(
        2.0, "seconds a finished room stays in memory once nobody watches it"
    )
    away_grace: float = setting(
        120.0, "seconds a dropped seat keeps receiving diffs for a short catch-up"
    )
    away_takeover: float = setting(
        60.0,
        "seconds a seated player's every connection may be gone while the game waits for them "
        "before the server's bot stands in for them (until they come back); 0: never",
    )
    history: int = setting(64, "diffs kept per room for reconnecting clients")
    checkpoint_every: int = setting(
        32,
        "game steps a room stores as log entries only before it stores its whole record "
        "again (loading a room replays at most this many; 1: the record with every step)",
    )
    finished_ttl: int = setting(
        7 * 24 * 3600, "seconds a finished room (record, log, chat) is kept in Redis; 0: forever"
    )
    waiting_ttl: float = setting(
        900.0,
        "seconds a room waiting for players may go unviewed before it is closed and deleted; "
        "0: never",
    )
    abandoned_ttl: float = setting(
        7 * 24 * 3600.0,
        "seconds a game may go without a change and without a viewer before the server ends it "
        "(reason 'abandoned'; it then expires as a finished room); 0: never",
    )
    player_ttl: int = setting(
        90 * 24 * 3600,
        "seconds a player's identity is kept after their last hello; 0: forever",
    )
    unused_player_ttl: int = setting(
        6 * 3600,
        "seconds a player who has not yet sat down, created a room or chatted is kept after "
        "their last hello; 0: forever",
    )
    history_ttl: int = setting(
        180 * 24 * 3600,
        "seconds a finished game is kept in its players' histories (and their counts and "
        "ratings after their last game); 0: forever",
    )
    results_delay: float = setting(
        0.0,
        "seconds after a game ends before its results (history, counts, ratings) are written; "
        "0: at once (a process that dies first leaves them to the next one's sweep)",
    )
    rating_provisional_sigma: float = setting(
        6.0, "a rating is provisional (left off leaderboards) while its sigma is above this"
    )
    rating_sigma_per_day: float = setting(
        0.25,
        "how fast a rating's sigma grows without rated games: sqrt(sigma^2 + this^2 * days), "
        "at most a new player's",
    )
    drain_timeout: float = setting(
        10.0, "seconds SIGTERM waits for rooms to finish the commands they hold"
    )
    event_loop: str = setting(
        "auto",
        "asyncio event loop: auto (uvloop where installed, else asyncio's own), uvloop, asyncio",
        choices=CHOICES,
    )
    log_format: str = setting(
        "auto",
        "log format (auto: console on a terminal, else JSON)",
        choices=("auto", "json", "console"),
    )
    log_level: str = setting("info", "log level", choices=("debug", "info", "warning", "error"))

    @classmethod
    def settings(cls) -> tuple[Field[Any], ...]:
        return fields(cls)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> Config:
        """Defaults, then PLAYHALL_<NAME> variables, then explicit overrides (flags)."""
        environ = dict(os.environ) if environ is None else environ
        config = cls()
        for f in fields(cls):
            raw = environ.get(f"PLAYHALL_{f.name.upper()}")
            if raw is None or _service_link(raw):
                continue
            setattr(config, f.name, parse(f, raw))
        for name, value in overrides.items():
            if value is not None:
                setattr(config, name, value)
        if not config.instance:
            # Two processes on one host must not share a lease name; the port tells them apart.
            config.instance = f"{socket.gethostname()}:{config.port}"
        return config


def _service_link(raw: str) -> bool:
    """Kubernetes injects PLAYHALL_PORT=tcp://10.0.0.1:8765 (and friends) for a Service named
    playhall; those are not settings."""
    return raw.startswith(("tcp://", "udp://"))


def parse(f: Field[Any], raw: str) -> Any:
    """A setting's value from text (an environment variable or a flag)."""
    default = getattr(Config(), f.name)
    if isinstance(default, bool):
        return raw.lower() in {"1", "true", "yes", "on"}
    try:
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise ValueError(f"{f.name}: {raw!r} is not a number") from None
    if isinstance(default, Path):
        return Path(raw)
    check = f.metadata.get("check")
    if check is not None:
        try:
            return check(raw)
        except ValueError as exc:
            raise ValueError(f"{f.name}: {exc}") from None
    choices = f.metadata.get("choices")
    if choices and raw not in choices:
        raise ValueError(f"{f.name}: {raw!r} is not one of {', '.join(choices)}")
    return raw

