"""Wiring: Redis (embedded or configured), the store, the lobby, the rooms and the websocket
endpoint, plus graceful shutdown.

SIGTERM (or SIGINT) drains: the server stops taking changes (``draining``), lets every room
finish the command in hand (so whatever was acknowledged is stored), closes every socket with
1012 "server restarting" — which the client library answers by reconnecting and resuming — and
stops the embedded Redis if it started one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import redis.asyncio as aioredis

from playhall import eventloop, log
from playhall.catalog import all_games
from playhall.config import Config, parse_listen
from playhall.counters import Counters
from playhall.fleet.handover import Handover
from playhall.fleet.node import FleetNode
from playhall.fleet.ping import Pings
from playhall.heartbeat import Heartbeat
from playhall.lobby import Lobby
from playhall.lobby_feed import LobbyFeed
from playhall.net.admin import Admin, check_listen
from playhall.net.descriptors import DescriptorWatch
from playhall.net.endpoint import Endpoint
from playhall.net.metrics import Metrics
from playhall.net.replies import ReplyRouter
from playhall.rooms.keeper import Keeper
from playhall.rooms.manager import RoomManager
from playhall.store import layout
from playhall.store.bus import Bus, client_name
from playhall.store.connect import open_client, open_pipe, parse_target
from playhall.store.embedded import EmbeddedRedis
from playhall.store.keys import Keys
from playhall.store.redis_store import Store
from playhall.tasks import cancel_and_wait, pause
from playhall_protocol import codec, errors

logger = log.get("playhall.app")


@dataclass
class Running:
    config: Config
    server: asyncio.Server
    endpoint: Endpoint
    rooms: RoomManager
    keeper: Keeper
    fleet: FleetNode
    #: The lobby's changes to and from the other processes (playhall.lobby_feed).
    feed: LobbyFeed
    redis: aioredis.Redis
    embedded: EmbeddedRedis | None
    metrics: Metrics
    #: This process's entry in the fleet registry (playhall.heartbeat).
    heartbeat: Heartbeat
    #: Tells the other processes which rooms to take at a drain (playhall.fleet.handover).
    handover: Handover
    #: Times round trips to the other processes over Redis (playhall.fleet.ping).
    pings: Pings
    #: The metrics listener (``metrics_listen``), if there is one.
    metrics_server: asyncio.Server | None = None
    #: The operator's listener (``admin_listen``), if there is one.
    admin_server: asyncio.Server | None = None
    sweeper: asyncio.Task[None] | None = None
    counter: asyncio.Task[None] | None = None
    #: Closes the connections from addresses an operator refuses (``Endpoint.keep_refused``).
    refusals: asyncio.Task[None] | None = None
    supervisor: asyncio.Task[None] | None = None
    #: Watches for the process running out of file descriptors (playhall.net.descriptors).
    descriptors: asyncio.Task[None] | None = None
    #: Puts back the loop's exception handler that was there before the server started.
    restore_handler: Callable[[], None] | None = None

    @property
    def port(self) -> int:
        return int(self.server.sockets[0].getsockname()[1])

    @property
    def admin_port(self) -> int | None:
        if self.admin_server is None:
            return None
        return int(self.admin_server.sockets[0].getsockname()[1])

    @property
    def metrics_port(self) -> int | None:
        if self.metrics_server is None:
            return None
        return int(self.metrics_server.sockets[0].getsockname()[1])

    async def drain(self) -> None:
        logger.info("draining", rooms=len(self.rooms.rooms), sessions=len(self.endpoint.sessions))
        self.endpoint.draining = True
        await self.heartbeat.drain()  # the registry says so before anything stops
        await self.pings.stop()  # (others' pings are answered until the bus stops)
        await cancel_and_wait(self.sweeper, self.counter, self.refusals, self.supervisor,
                              self.descriptors)
        await self.keeper.stop()
        await self.feed.stop()  # (what the rooms unlist as they close is still published)
        await self.endpoint.results.stop()
        await self.endpoint.matchmaker.stop()
        try:
            await asyncio.wait_for(self.rooms.close(), self.config.drain_timeout)
        except TimeoutError:
            # Whatever a room had not stored is not acknowledged either: closing is still safe.
            logger.warning("drain_timeout", rooms=len(self.rooms.rooms))
        # Those with timers or bots go at once to the others, which nobody else would ask for.
        await self.handover.tell(self.rooms.handed_over)
        await self.fleet.stop()  # after the rooms: the other processes were told where they went
        await self.endpoint.close_all(errors.CLOSE_RESTARTING, "server restarting")
        self.server.close()
        await self.server.wait_closed()
        await self.heartbeat.leave()
        for listener in (self.metrics_server, self.admin_server):
            if listener is not None:  # open until here: a scrape sees the drain
                listener.close()
                await listener.wait_closed()
        self.endpoint.store.close()
        await self.redis.aclose()
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)
        if self.restore_handler is not None:
            self.restore_handler()
        logger.info("stopped")


def _tune_gc() -> None:
    """Keep CPython's cyclic collector from pausing the loop. Every move allocates views,
    diffs and frames (acyclic: reference counting frees them), so with the default thresholds
    the collector runs constantly and its full passes over a large heap set the p99 tail
    (docs/benchmarks.md, "Collector pauses"). Objects from start-up are frozen out of
    collection; cycles are still collected, less often."""
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


#: Seconds between checks that the embedded Redis still runs.
SUPERVISE_EVERY = 0.5


async def supervise(embedded: EmbeddedRedis, endpoint: Endpoint) -> None:
    """Start the embedded Redis again (same data directory, same append-only file) whenever
    it dies; ``/healthz`` says so meanwhile. Commands refused while it is away are answered
    ``store_failed``; the connections reconnect by themselves."""
    while True:
        await pause(SUPERVISE_EVERY)
        if await asyncio.to_thread(embedded.alive):
            continue
        exit_code = embedded.process.poll() if embedded.process is not None else None
        logger.error("embedded_redis_died", pid=embedded.pid, exit_code=exit_code)
        endpoint.redis_restarting = True
        try:
            while True:
                try:
                    await asyncio.to_thread(embedded.start)
                    break
                except RuntimeError as exc:  # it would not start: say why, try again
                    logger.error("embedded_redis_restart_failed", error=str(exc)[-500:])
                    await pause(1.0)
        finally:
            endpoint.redis_restarting = False
        logger.warning("embedded_redis_restarted", pid=embedded.pid, dir=str(embedded.data_dir))


async def start(config: Config) -> Running:
    # The games first: a failed plugin is reported now, and two games claiming one id
    # (catalog.GameConflict) stop the start before anything runs.
    offered = sorted(all_games())
    check_listen(config.admin_listen, config.admin_token)  # before anything is opened
    embedded = None
    url = config.redis_url
    if not url:
        embedded = EmbeddedRedis(config.data_dir, fsync=config.redis_fsync)
        url = await asyncio.to_thread(embedded.start)
    target = parse_target(url)  # one Redis, or a Cluster (playhall.store.connect)
    client = await open_client(target, config.redis_timeout)
    # Before anything reads a key: a Redis of the last release has its keys moved to this
    # release's names, once (store.layout).
    await layout.move_to_current(client, Keys(config.key_prefix), config.instance,
                                 cluster=target.cluster)
    store = Store(
        client,
        open_pipe(target, client, config.redis_timeout),
        config.key_prefix,
        config.player_ttl,
    )
    lobby = Lobby(store, config.lobby_page, config.lobby_interval)
    # The process's one subscribed connection: the fleet's channels and the lobby's changes.
    bus = Bus(url, store.pipe, store.outage, name=client_name(config.instance),
              timeout=config.redis_timeout)
    feed = LobbyFeed(store, lobby, bus)
    counters = Counters()  # what this process counts, shared by its rooms and its endpoint
    replies = ReplyRouter(counters)
    # The other processes on this Redis: requests for rooms held elsewhere are forwarded.
    fleet = FleetNode(
        bus, store.keys, config.instance,
        timeout=config.forward_timeout, check_every=config.lease_ms / 3000, outage=store.outage,
        counters=counters,
    )
    rooms = RoomManager(store, config, lobby, replies, counters, fleet)
    fleet.attach(rooms, rooms.get, replies)
    replies.elsewhere = fleet.owner
    await fleet.start()
    endpoint = Endpoint(config, store, rooms, lobby, replies)
    # A pass's batches to other processes go before its frames to this process's clients: a
    # move forwarded here is answered through Redis and the edge, a longer path than a local
    # client's socket, and its batch would otherwise wait for every socket written in the pass.
    endpoint.writes.first.append(fleet.owner.mail.flush)
    metrics = Metrics(endpoint, config.metrics_token)
    if metrics.on_game_port():
        endpoint.metrics = metrics.answer
    metrics_server = await _listen_for_metrics(metrics, config.metrics_listen)
    admin_server = await _listen_for_admin(Admin(store, rooms, config.admin_token), config)
    server = await asyncio.get_running_loop().create_server(
        endpoint.websocket, config.host, config.port, backlog=1024
    )
    keeper = Keeper(rooms)
    handover = Handover(bus, store.keys, config.instance, store.fleet.members, keeper.take_over,
                        store.outage)
    await handover.start()
    pings = Pings(bus, store.keys, config.instance, store.fleet.members,
                  every=config.fleet_ping_every, timeout=config.redis_timeout,
                  refresh=config.lease_ms / 3000, counters=counters)
    await pings.start()
    heartbeat = Heartbeat(store.fleet, store.outage, config.instance, config.lease_ms)
    endpoint.listed = heartbeat.listed
    running = Running(
        config, server, endpoint, rooms, keeper, fleet, feed, client, embedded, metrics,
        heartbeat, handover, pings,
        metrics_server,
    )
    running.admin_server = admin_server
    _tune_gc()
    await feed.start()
    restored = await keeper.restore_active()
    keeper.start()
    await heartbeat.start()  # ready (/healthz) once registered, its rooms restored
    endpoint.results.start()
    endpoint.matchmaker.start()
    running.sweeper = asyncio.create_task(endpoint.sweep_slow())
    watch = DescriptorWatch()
    running.restore_handler = watch.install(asyncio.get_running_loop())
    running.descriptors = asyncio.create_task(watch.watch())
    running.counter = asyncio.create_task(endpoint.keep_counted())
    running.refusals = asyncio.create_task(endpoint.keep_refused())
    if embedded is not None:
        running.supervisor = asyncio.create_task(supervise(embedded, endpoint))
    logger.info(
        "listening",
        url=f"ws://{config.host}:{running.port}/",
        # The web client for browsers, on the same port (playhall.net.web); none if not installed.
        web=f"http://{config.host}:{running.port}/" if endpoint.web.files else None,
        # Where players open the page (behind a proxy), if configured: the share links use it.
        public_url=config.public_url or None,
        redis=url,
        embedded=embedded is not None,
        restored_rooms=restored,
        instance=config.instance,
        games=offered,
        metrics=(
            f"http://{config.metrics_listen.rpartition(':')[0]}:{running.metrics_port}/metrics"
            if running.metrics_port is not None else None
        ),
        metrics_on_game_port=metrics.on_game_port(),
        admin=(
            f"http://{config.admin_listen.rpartition(':')[0]}:{running.admin_port}/admin/"
            if running.admin_port is not None else None
        ),
        loop=eventloop.loop_name(asyncio.get_running_loop()),
        # The C speedups of packing and diffing (playhall_protocol._speedups), or the reference.
        speedups=codec.SPEEDUPS is not None,
    )
    return running


async def _listen_for_metrics(metrics: Metrics, listen: str) -> asyncio.Server | None:
    """The metrics listener at ``listen`` (``host:port``), or None if it is empty."""
    return await _listen("metrics_listen", listen, metrics.listen)


async def _listen_for_admin(admin: Admin, config: Config) -> asyncio.Server | None:
    """The operator's listener at ``admin_listen``, or None if it is empty."""
    return await _listen("admin_listen", config.admin_listen, admin.listen)


async def _listen(
    setting: str, listen: str, open_at: Callable[[str, int], Awaitable[asyncio.Server]]
) -> asyncio.Server | None:
    """A listener of its own at ``listen`` (the value of ``setting``), or None if it is empty;
    an address it cannot listen on is refused, saying which setting named it."""
    if not listen:
        return None
    host, port = parse_listen(listen)
    try:
        return await open_at(host, port)
    except OSError as exc:
        raise OSError(
            exc.errno, f"{setting} {listen}: {exc.strerror}; give each process its own "
            f"address, or an empty {setting} for none"
        ) from exc


async def serve_forever(config: Config) -> None:
    running = await start(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.drain()
