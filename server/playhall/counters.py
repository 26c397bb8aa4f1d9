"""What a server process counts as it happens: requests and their answers, stored changes and
how long Redis took to store them, clocks running out, stand-ins and forfeits, games started
and finished, connections closed and why, frames and bytes sent.

Plain ints in one object per server process, incremented on the path and read by the metrics
collector (``playhall.net.metrics``) only when Prometheus scrapes: a move pays a few integer
additions, never a lookup of labelled metric objects or a lock. (Counts that exist anyway,
such as the rooms in memory or the connections open, are not kept here: the collector reads
them from the server's state at scrape time.) This module imports nothing of the server's, so
every part may count into it, and it is compiled with the move path (``COMPILED`` in
setup.py), where an increment is a native attribute write.

Every label value counted here comes from the server's own code (request types the protocol
defines, error codes, change kinds, game ids, close reasons), never from a client's bytes: the
metrics' label sets stay bounded.
"""

from __future__ import annotations

#: Upper bounds (seconds) of the commit-latency histogram's buckets. A commit normally takes
#: well under a millisecond; a busy server's tens of milliseconds; ``redis_timeout`` (5 s by
#: default) is where a commit gives up. (Not ``Final``: compiled, a final tuple of floats is
#: folded into each use, and read at import it was not yet set.)
COMMIT_BUCKETS: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
)

#: Upper bounds (seconds) of the fleet round-trip histogram's buckets (``playhall.fleet.ping``):
#: every 50 µs from 0.1 to 1 ms, where a round trip through a nearby Redis falls, so that its
#: median can be read to within a bucket's width; then coarser up to ``redis_timeout``.
ROUND_TRIP_BUCKETS: tuple[float, ...] = (
    *(n / 20_000 for n in range(2, 21)),
    0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
)


def _bucket(bounds: list[float], seconds: float) -> int:
    """The index of the first bucket whose upper bound ``seconds`` is within (``len(bounds)``:
    the last, +Inf)."""
    bucket = 0
    last = len(bounds)
    while bucket < last and seconds > bounds[bucket]:  # most stop at one of the first
        bucket += 1
    return bucket


class Counters:
    """One server process's counts since it started (Prometheus counters: they only grow)."""

    def __init__(self) -> None:
        #: Moves answered ``ok``: apart from ``requests`` because it is the one counted per move.
        self.moves_ok = 0
        #: (request type, result) -> answers, every request but the moves answered ``ok``. The
        #: result is ``ok`` or the error code; the type ``invalid`` for a message that names no
        #: request, ``unread`` for one dropped unread (over the connection's rate).
        self.requests: dict[tuple[str, str], int] = {}
        #: Change kind (``move``, ``bot_move``, ``join``…) -> changes a room stored.
        self.commits: dict[str, int] = {}
        #: Commits answered by Redis per histogram bucket (not cumulative; the last is +Inf),
        #: and the seconds they took in all.
        self.commit_buckets: list[int] = [0] * (len(COMMIT_BUCKETS) + 1)
        # The bounds as a list of this object's, read per commit as a native attribute.
        self._bounds: list[float] = list(COMMIT_BUCKETS)
        self.commit_seconds = 0.0
        #: Seats whose clock ran out.
        self.clock_timeouts = 0
        #: Reason (``timeout``, ``away``) -> seats the server's bot stood in for.
        self.stand_ins: dict[str, int] = {}
        #: Reason (``timeout``, ``resignation``) -> seats that left a game being played.
        self.forfeits: dict[str, int] = {}
        #: Game id -> games started / finished.
        self.games_started: dict[str, int] = {}
        self.games_finished: dict[str, int] = {}
        #: Reason -> connections closed (see ``playhall.net.metrics.close_reason``).
        self.connections_closed: dict[str, int] = {}
        #: Data frames handed to sockets, and their bytes (websocket headers included).
        self.frames_sent = 0
        self.bytes_sent = 0
        #: Room frames a connection's full outbox dropped (the room is resent as a snapshot).
        self.frames_dropped = 0
        #: The fleet (playhall.fleet): requests forwarded to the process holding their room;
        #: those that got no answer in time; those answered before their time because a batch
        #: that may have held their answer was lost; rooms taken here because nobody held
        #: them; batches from owners found lost; rooms synced again for a connection after a
        #: loss, a move or an owner's death; other processes found gone.
        self.forwarded = 0
        self.forward_timeouts = 0
        self.forwards_given_up = 0
        self.rooms_taken = 0
        self.batches_lost = 0
        self.resyncs = 0
        self.edges_gone = 0
        #: Round trips to the other processes over Redis (``playhall.fleet.ping``) per
        #: histogram bucket (not cumulative; the last is +Inf) and their seconds in all; asks
        #: a process heard but did not answer in time.
        self.round_trip_buckets: list[int] = [0] * (len(ROUND_TRIP_BUCKETS) + 1)
        self._round_trip_bounds: list[float] = list(ROUND_TRIP_BUCKETS)
        self.round_trip_seconds = 0.0
        self.pings_lost = 0

    def request(self, kind: str, result: str) -> None:
        """A request of type ``kind`` was answered: ``result`` is ``ok`` or the error code."""
        key = (kind, result)
        self.requests[key] = self.requests.get(key, 0) + 1

    def committed(self, kind: str, seconds: float) -> None:
        """A room stored a change of ``kind``; Redis answered in ``seconds``."""
        commits = self.commits
        commits[kind] = commits.get(kind, 0) + 1
        self.commit_seconds += seconds
        self.commit_buckets[_bucket(self._bounds, seconds)] += 1

    def round_trip(self, seconds: float) -> None:
        """A round trip to another process of the fleet took ``seconds``."""
        self.round_trip_seconds += seconds
        self.round_trip_buckets[_bucket(self._round_trip_bounds, seconds)] += 1

    def game_changed(self, game: str, status: str) -> None:
        """A room of ``game`` went to ``status``: a game started or finished."""
        if status == "playing":
            self.games_started[game] = self.games_started.get(game, 0) + 1
        elif status == "finished":
            self.games_finished[game] = self.games_finished.get(game, 0) + 1

    def stood_in(self, reason: str) -> None:
        self.stand_ins[reason] = self.stand_ins.get(reason, 0) + 1

    def forfeited(self, reason: str) -> None:
        self.forfeits[reason] = self.forfeits.get(reason, 0) + 1

    def connection_closed(self, reason: str) -> None:
        self.connections_closed[reason] = self.connections_closed.get(reason, 0) + 1
