"""``GET /metrics``: the server's numbers in Prometheus' text format, made by
``prometheus_client`` from a registry of the server's own (not the library's global one, so one
process can run several servers, as the tests do).

Nothing here runs per move. At each scrape :class:`ServerCollector` reads what the server
holds anyway (connections, rooms in memory by game and status, viewers, outbox and inbox
depths, leases, the commit connection's queue, Redis' state) and the plain counts kept on the
path (:mod:`playhall.counters`), and turns them into metric families. docs/operations.md
("Metrics") lists every metric.

Who may read them (metrics are for operators, not players): a listener of their own
(``metrics_listen``, the loopback interface by default), and, only when ``metrics_token`` is
set, the game port too. Whenever a token is set, every ``/metrics`` request must carry it
(``Authorization: Bearer <token>``); without one the game port answers ``/metrics`` like any
unknown path (404).
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections import Counter
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any, Final, Protocol

from prometheus_client import CollectorRegistry, GCCollector, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from websockets.http11 import Request, Response

from playhall import __version__, eventloop
from playhall.counters import COMMIT_BUCKETS, ROUND_TRIP_BUCKETS, Counters
from playhall.net.refusals import RefusalLog
from playhall.net.session import Session
from playhall.net.web import http_response, text_response
from playhall.net.websocket import WebSocket
from playhall.rooms.manager import RoomManager
from playhall.store.redis_store import Store
from playhall_protocol import codec

#: The path metrics are served at, on either port.
PATH: Final = "/metrics"

#: Close codes the server sends, by the reason a connection closed with one is counted under.
_SERVER_CLOSES: Final = {
    1001: "going_away",
    1002: "protocol_error",
    1007: "bad_data",
    1008: "flooding",
    1009: "too_big",
    1011: "keepalive_timeout",
    1012: "restarting",
    4000: "too_slow",
}


def close_reason(ws: Any) -> str:
    """Why a connection closed, for ``playhall_connections_closed_total``: the server's close
    code by name (``flooding``, ``too_slow``, ``restarting``…; ``server_other`` for another
    code), ``client`` when the client closed first, ``dropped`` when it went without a
    closing handshake (a reset, a lost network)."""
    protocol = getattr(ws, "protocol", None)
    sent = getattr(protocol, "close_sent", None)
    received = getattr(protocol, "close_rcvd", None)
    client_first = received is not None and getattr(protocol, "close_rcvd_then_sent", False)
    if sent is not None and not client_first:
        return _SERVER_CLOSES.get(sent.code, "server_other")
    if received is not None:
        return "client"
    return "dropped"


class Served(Protocol):
    """What the collector reads of a server (its :class:`playhall.net.endpoint.Endpoint`)."""

    sessions: set[Session]
    rooms: RoomManager
    store: Store
    counters: Counters
    draining: bool
    connections_refused: RefusalLog
    requests_refused: RefusalLog

    def unready(self) -> str: ...


class ServerCollector(Collector):
    """The server's metrics, read from its state at scrape time."""

    def __init__(self, endpoint: Served) -> None:
        self.endpoint = endpoint

    def collect(self) -> Iterator[Metric]:
        yield from self._state()
        yield from self._counts()

    def _state(self) -> Iterator[Metric]:
        endpoint = self.endpoint
        store = endpoint.store
        info = InfoMetricFamily("playhall_build", "The server's version and how it runs.")
        info.add_metric([], {
            "version": __version__,
            "loop": eventloop.loop_name(asyncio.get_running_loop()),
            "speedups": str(codec.SPEEDUPS is not None).lower(),
        })
        yield info
        yield _gauge("playhall_ready", "1 while /healthz answers 200 (serving), else 0.",
                     0 if endpoint.unready() else 1)
        yield _gauge("playhall_draining", "1 once SIGTERM has started the drain.",
                     int(endpoint.draining))

        sessions = list(endpoint.sessions)
        yield _gauge("playhall_connections", "Websocket connections open.", len(sessions))
        yield _gauge("playhall_players_online",
                     "Players with at least one connection (counted once each).",
                     len({s.player for s in sessions if s.player}))
        queued = [s.queued() for s in sessions]
        yield _gauge("playhall_outbox_frames",
                     "Frames waiting in connections' outboxes (their sockets are full).",
                     sum(queued))
        yield _gauge("playhall_outbox_frames_max", "The fullest connection's outbox, in frames.",
                     max(queued, default=0))

        rooms = list(endpoint.rooms.rooms.values())
        loaded = GaugeMetricFamily("playhall_rooms_loaded",
                                   "Rooms in this process's memory, by game and status.",
                                   labels=["game", "status"])
        for (game, status), count in sorted(
            Counter((r.record.game, r.record.status) for r in rooms).items()
        ):
            loaded.add_metric([game, status], count)
        yield loaded
        viewers = GaugeMetricFamily(
            "playhall_viewers",
            "Connections attached to a room in memory (seated or watching), by game.",
            labels=["game"],
        )
        by_game: Counter[str] = Counter()
        for room in rooms:
            by_game[room.record.game] += len(room.audience.viewers)
        for game, count in sorted(by_game.items()):
            viewers.add_metric([game], count)
        yield viewers
        yield _gauge("playhall_leases_held",
                     "Room leases this process holds (one per room in memory).", len(rooms))
        depths = [len(r.inbox) for r in rooms]
        yield _gauge("playhall_room_inbox_commands", "Commands waiting in rooms' inboxes.",
                     sum(depths))
        yield _gauge("playhall_room_inbox_commands_max", "The fullest room inbox, in commands.",
                     max(depths, default=0))

        waiting = getattr(store.pipe, "waiting", ())
        yield _gauge("playhall_redis_pipe_waiting",
                     "Commands sent on the commit connection and not yet answered by Redis.",
                     len(waiting))
        yield _gauge("playhall_redis_outage",
                     "1 while Redis is failing this process's commands (an outage), else 0.",
                     int(store.outage.ongoing))
        yield _gauge("playhall_redis_silent_seconds",
                     "Seconds since Redis last answered a command on the commit connection.",
                     time.monotonic() - store.answered_at)
        yield _counter("playhall_redis_errors_total",
                       "Commands that failed because Redis did not answer (store_failed).",
                       store.outage.failures_total)
        yield _counter("playhall_redis_outages_total",
                       "Outages: runs of failed Redis commands ended by an answer.",
                       store.outage.outages_total)

    def _counts(self) -> Iterator[Metric]:
        counts = self.endpoint.counters
        requests: dict[tuple[str, ...], int] = {k: v for k, v in counts.requests.items()}
        requests["move", "ok"] = requests.get(("move", "ok"), 0) + counts.moves_ok
        yield _labelled(
            "playhall_requests_total",
            "Requests answered, by type and result (ok, or the error code). Type invalid: a "
            "message naming no request; unread: dropped over the connection's rate.",
            ["type", "result"], requests,
        )
        yield _labelled("playhall_commits_total",
                        "Room changes stored in Redis, by kind (move, bot_move, auto, join…).",
                        ["kind"], {(k,): v for k, v in counts.commits.items()})
        yield _histogram(
            "playhall_commit_seconds",
            "Seconds Redis took to store a room change (its commit script, sent to answered).",
            COMMIT_BUCKETS, counts.commit_buckets, counts.commit_seconds,
        )
        yield _counter("playhall_clock_timeouts_total", "Seats whose clock ran out.",
                       counts.clock_timeouts)
        yield _labelled("playhall_stand_ins_total",
                        "Seats the server's bot stood in for, by reason (timeout, away).",
                        ["reason"], {(k,): v for k, v in counts.stand_ins.items()})
        yield _labelled("playhall_forfeits_total",
                        "Seats that left a game being played, by reason (timeout, resignation).",
                        ["reason"], {(k,): v for k, v in counts.forfeits.items()})
        yield _labelled("playhall_games_started_total", "Games started, by game.",
                        ["game"], {(k,): v for k, v in counts.games_started.items()})
        yield _labelled("playhall_games_finished_total", "Games finished, by game.",
                        ["game"], {(k,): v for k, v in counts.games_finished.items()})
        yield _labelled("playhall_connections_closed_total",
                        "Connections closed, by reason (client, dropped, flooding, too_slow, "
                        "restarting…).",
                        ["reason"], {(k,): v for k, v in counts.connections_closed.items()})
        yield _labelled(
            "playhall_http_refused_total",
            "Connections and plain HTTP requests refused per client address: "
            "too_many_connections (connections_per_address), too_many_requests (http_rate).",
            ["reason"],
            {("too_many_connections",): self.endpoint.connections_refused.total,
             ("too_many_requests",): self.endpoint.requests_refused.total},
        )
        yield _counter("playhall_frames_sent_total", "Websocket data frames written to sockets.",
                       counts.frames_sent)
        yield _counter("playhall_sent_bytes_total",
                       "Bytes of websocket data frames written to sockets.", counts.bytes_sent)
        yield _counter("playhall_frames_dropped_total",
                       "Room frames dropped by full outboxes (the room is resent as a snapshot).",
                       counts.frames_dropped)
        yield _counter("playhall_fleet_forwarded_total",
                       "Requests forwarded to the process holding their room.", counts.forwarded)
        yield _counter("playhall_fleet_forward_timeouts_total",
                       "Forwarded requests with no answer within forward_timeout "
                       "(answered store_failed).", counts.forward_timeouts)
        yield _counter("playhall_fleet_forwards_given_up_total",
                       "Forwarded requests answered store_failed before forward_timeout: a "
                       "batch that may have held their answer was lost.", counts.forwards_given_up)
        yield _counter("playhall_fleet_rooms_taken_total",
                       "Rooms this process loaded because a request found nobody holding them.",
                       counts.rooms_taken)
        yield _counter("playhall_fleet_batches_lost_total",
                       "Batches of frames and answers from another process found lost "
                       "(their rooms are synced again).", counts.batches_lost)
        yield _counter("playhall_fleet_resyncs_total",
                       "Rooms synced again for a connection here after a lost batch, a "
                       "drained or dead owner.", counts.resyncs)
        yield _counter("playhall_fleet_edges_gone_total",
                       "Other processes found gone while their connections watched rooms "
                       "held here (those connections were detached).", counts.edges_gone)
        yield _histogram(
            "playhall_fleet_round_trip_seconds",
            "Seconds a ping to another process of the fleet took over Redis, there and back "
            "(fleet_ping_every).", ROUND_TRIP_BUCKETS, counts.round_trip_buckets,
            counts.round_trip_seconds,
        )
        yield _counter("playhall_fleet_pings_lost_total",
                       "Pings another process heard but did not answer within redis_timeout.",
                       counts.pings_lost)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=value)


def _labelled(
    name: str, documentation: str, labels: list[str], values: dict[tuple[str, ...], int]
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, documentation, labels=labels)
    for key, value in sorted(values.items()):
        family.add_metric(list(key), value)
    return family


def _histogram(
    name: str, documentation: str, bounds: tuple[float, ...], counts: list[int], total: float
) -> HistogramMetricFamily:
    """A histogram family from per-bucket counts (not cumulative, the last for +Inf)."""
    cumulative, buckets = 0, []
    for bound, count in zip((*bounds, float("inf")), counts, strict=True):
        cumulative += count
        buckets.append((_le(bound), cumulative))
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=total)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


class Metrics:
    """The server's registry and the answer to ``GET /metrics`` on either port."""

    def __init__(self, endpoint: Served, token: str) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(ServerCollector(endpoint))
        ProcessCollector(registry=self.registry)  # CPU, memory, file descriptors
        GCCollector(registry=self.registry)  # the cyclic collector's passes
        self._token = f"Bearer {token}".encode() if token else b""

    def scrape(self, accept: str | None = None) -> tuple[bytes, str]:
        """The exposition, in the format ``accept`` asks for (Prometheus' text by default)."""
        encode, content_type = choose_encoder(accept or "")
        return encode(self.registry), content_type

    def answer(self, request: Request) -> Response:
        """``/metrics`` on either port (the caller routes only that path here)."""
        if request.method not in ("GET", "HEAD"):
            return text_response(HTTPStatus.METHOD_NOT_ALLOWED, "only GET and HEAD\n",
                                 [("Allow", "GET, HEAD")])
        if self._token and not self._authorized(request):
            return text_response(HTTPStatus.UNAUTHORIZED, "metrics need the bearer token\n",
                                 [("WWW-Authenticate", 'Bearer realm="playhall metrics"')])
        body, content_type = self.scrape(request.headers.get("Accept"))
        headers = [("Content-Type", content_type), ("Cache-Control", "no-store")]
        if request.method == "HEAD":
            return http_response(HTTPStatus.OK, headers, b"", len(body))
        return http_response(HTTPStatus.OK, headers, body)

    def _authorized(self, request: Request) -> bool:
        given = request.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, self._token)

    def on_game_port(self) -> bool:
        """Whether the game port serves ``/metrics``: only behind a token."""
        return bool(self._token)

    def answer_listener(self, request: Request) -> Response:
        """Anything asked of the metrics listener: ``/metrics``, else 404."""
        if request.path.split("?", 1)[0] != PATH:
            return text_response(HTTPStatus.NOT_FOUND, "not found: try /metrics\n")
        return self.answer(request)

    async def listen(self, host: str, port: int) -> asyncio.Server:
        """The metrics listener: plain HTTP (each answer closes its connection), parsed by the
        same Sans-I/O core as the game port's requests, never upgraded to a websocket."""
        return await asyncio.get_running_loop().create_server(
            lambda: WebSocket(on_request=self.answer_listener, on_open=_never_opened,
                              max_size=4096),
            host, port,
        )


def _never_opened(ws: WebSocket) -> Any:  # every request gets an answer: none is upgraded
    raise AssertionError("the metrics listener upgraded a connection")

