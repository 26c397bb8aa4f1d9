"""The edge's side of forwarding, as pure code: what it does with the batches owners send it
(frames to their connections, answers to their requests, a lost batch noticed by its number)
and with a request whose answer never comes. The bus under it is a stand-in that records what
is published (the same code over real Redis and real processes: tests/server/fleet)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from playhall.fleet.edge import Edge, RemoteRoom
from playhall.fleet.messages import CLEAR, FRAME, MOVED, REPLY, Forward, pack_batch
from playhall.rooms.handle import ReplyTo
from playhall.rooms.table import RoomError
from playhall.store.keys import Keys
from playhall.store.outage import Outage

from .buses import StandInBus


class Published(StandInBus):
    """A bus that records every publish; each reaches ``listeners`` subscribers."""

    def __init__(self, listeners: int = 1) -> None:
        self.listeners = listeners
        self.sent: list[tuple[bytes, Forward]] = []

    def publish(self, channel: bytes, payload: bytes) -> Any:
        self.sent.append((channel, Forward.unpack(payload)))
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.listeners)
        return future


class Viewer:
    def __init__(self, connection: int) -> None:
        self.id = connection
        self.player, self.name, self.address = f"p{connection}", "n", "a"
        self.frames: list[tuple[bytes, str | None]] = []
        self.stale: set[str] = set()

    # A room's viewer (playhall.rooms.audience.Viewer); the edge reaches it through Connections.
    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames.append((frame, room))

    def is_stale(self, room: str) -> bool:
        return room in self.stale

    def clear_stale(self, room: str) -> None:
        self.stale.discard(room)


class Connections:
    """This process's connections, as the reply router keeps them."""

    def __init__(self, *viewers: Viewer) -> None:
        self.viewers = {v.id: v for v in viewers}
        self.answers: list[tuple[int, int, dict[str, Any] | None, str | None]] = []

    def deliver(self, to: ReplyTo, kind: str, room: str, result: Any, error: Any) -> None:
        self.answers.append((to.connection, to.request, result, error and error.code))

    def push(self, connection: int, frame: bytes, room: str | None) -> bool:
        viewer = self.viewers.get(connection)
        if viewer is None:
            return False
        if room is None or room not in viewer.stale:
            viewer.frames.append((frame, room))
        return True

    def clear_stale(self, connection: int, room: str) -> None:
        self.viewers[connection].stale.discard(room)

    def mark_stale(self, connection: int, room: str) -> None:
        self.viewers[connection].stale.add(room)

    def viewer(self, connection: int) -> Viewer | None:
        return self.viewers.get(connection)


def edge(bus: Published, connections: Connections, timeout: float = 5.0) -> Edge:
    made = Edge(bus, Keys("ph:"), "edge-1", timeout, Outage())
    made.connections = connections
    return made


async def settled(bus: Published, count: int) -> None:
    """Until ``count`` requests were published (the edge publishes from a task of its own)."""
    async with asyncio.timeout(5):
        while len(bus.sent) < count:
            await asyncio.sleep(0)


async def test_frames_go_to_their_connection_and_a_lost_batch_starts_the_rooms_again() -> None:
    bus = Published()
    viewer = Viewer(7)
    connections = Connections(viewer)
    node = edge(bus, connections)
    first = [[FRAME, 7, "r1", b"u1"], [FRAME, 7, None, b"p"]]
    node.received(pack_batch("owner-a", 1, first, node.id))
    node.received(pack_batch("owner-a", 2, [[FRAME, 7, "r1", b"u2"]], node.id))
    assert viewer.frames == [(b"u1", "r1"), (b"p", None), (b"u2", "r1")]
    assert bus.sent == []

    # Batch 3 lost: batch 4 is not passed on; the room is synced again for the connection.
    node.received(pack_batch("owner-a", 4, [[FRAME, 7, "r1", b"u4"]], node.id))
    assert viewer.frames[-1] == (b"u2", "r1")
    assert viewer.stale == {"r1"}
    assert (node.counters.batches_lost, node.counters.resyncs) == (1, 1)
    await settled(bus, 1)
    channel, sync = bus.sent[0]
    assert channel == b"ph:room:{r1}:in"
    assert (sync.kind, sync.connection, sync.edge, sync.player) == ("sync", 7, node.id, "p7")
    assert node.id.startswith("edge-1#")
    # The owner clears the mark before the snapshot it sends.
    node.received(pack_batch("owner-a", 5, [[CLEAR, 7, "r1"], [FRAME, 7, "r1", b"snap"]], node.id))
    assert viewer.frames[-1] == (b"snap", "r1") and not viewer.stale


async def test_a_batch_from_an_owner_never_heard_must_start_at_one() -> None:
    bus = Published()
    viewer = Viewer(3)
    node = edge(bus, Connections(viewer))
    node.received(pack_batch("owner-b", 2, [[FRAME, 3, "r9", b"x"]], node.id))
    assert viewer.stale == {"r9"} and viewer.frames == []
    await settled(bus, 1)
    assert bus.sent[0][1].kind == "sync"


async def test_a_batch_seen_already_is_passed_over() -> None:
    bus = Published()
    viewer = Viewer(4)
    node = edge(bus, Connections(viewer))
    node.received(pack_batch("owner-g", 1, [[FRAME, 4, "r2", b"u1"]], node.id))
    node.received(pack_batch("owner-g", 2, [[FRAME, 4, "r2", b"u2"]], node.id))
    node.received(pack_batch("owner-g", 2, [[FRAME, 4, "r2", b"u2"]], node.id))  # again
    node.received(pack_batch("owner-g", 1, [[FRAME, 4, "r2", b"u1"]], node.id))  # older
    node.received(pack_batch("owner-g", 3, [[FRAME, 4, "r2", b"u3"]], node.id))
    assert [frame for frame, _ in viewer.frames] == [b"u1", b"u2", b"u3"]
    assert not viewer.stale and node.counters.batches_lost == 0 and bus.sent == []


async def test_a_joined_rooms_first_frames_overtaken_by_a_later_batch_are_synced_again() -> None:
    """An owner's first batch to this process (the join's snapshot) overtaken by its second
    (the join's answer: the owner's pipe to a node it had not used yet sent the second before
    the first once connected). No frame of the room came yet, but the gap says one may have
    been lost: the room is synced again, and the late batch's frames are not passed on."""
    bus = Published()
    connections = Connections(Viewer(6))
    viewer = connections.viewers[6]
    node = edge(bus, connections)
    RemoteRoom("r5", node).submit("join", viewer, {}, ReplyTo(6, 11))
    await settled(bus, 1)
    join = bus.sent[0][1]
    node.received(pack_batch("owner-j", 2, [[REPLY, join.corr, {"version": 3}, None]], node.id))
    assert connections.answers == [(6, 11, {"version": 3}, None)]
    await settled(bus, 2)
    assert (bus.sent[1][1].kind, bus.sent[1][0]) == ("sync", b"ph:room:{r5}:in")
    assert viewer.stale == {"r5"}
    node.received(pack_batch("owner-j", 1, [[CLEAR, 6, "r5"], [FRAME, 6, "r5", b"s3"]], node.id))
    assert viewer.frames == [] and viewer.stale == {"r5"}
    node.received(pack_batch("owner-j", 3, [[CLEAR, 6, "r5"], [FRAME, 6, "r5", b"s"]], node.id))
    assert viewer.frames == [(b"s", "r5")] and not viewer.stale


async def test_a_lost_batch_answers_at_once_the_requests_it_may_have_answered() -> None:
    """A move's answer in a batch that was lost (a Cluster failover moved this process's
    channel under it): the move is answered store_failed (retryable, applied once by its id)
    as soon as the gap is seen, not at its deadline; a request to a room another owner serves
    still waits for its answer."""
    bus = Published()
    connections = Connections(Viewer(2))
    node = edge(bus, connections, timeout=60)
    node.received(pack_batch("owner-a", 1, [[FRAME, 2, "r1", b"u1"]], node.id))
    node.received(pack_batch("owner-b", 1, [[FRAME, 2, "r2", b"v1"]], node.id))
    RemoteRoom("r1", node).submit("move", connections.viewers[2], {"mid": "m"}, ReplyTo(2, 8))
    RemoteRoom("r2", node).submit("move", connections.viewers[2], {"mid": "n"}, ReplyTo(2, 9))
    await settled(bus, 2)
    node.received(pack_batch("owner-a", 3, [], node.id))  # batch 2 (the answer to 8) lost
    assert connections.answers == [(2, 8, None, "store_failed")]
    assert node.counters.forwards_given_up == 1
    r2_move = next(f.corr for c, f in bus.sent if c == b"ph:room:{r2}:in" and f.kind == "move")
    node.received(pack_batch("owner-b", 2, [[REPLY, r2_move, {"version": 2}, None]], node.id))
    assert connections.answers[1] == (2, 9, {"version": 2}, None)


async def test_a_subscriber_back_from_away_answers_every_waiting_request_at_once() -> None:
    bus = Published()
    connections = Connections(Viewer(2))
    node = edge(bus, connections, timeout=60)
    RemoteRoom("r1", node).submit("chat", connections.viewers[2], {"text": "hi"}, ReplyTo(2, 4))
    await settled(bus, 1)
    node.reconnected()
    assert connections.answers == [(2, 4, None, "store_failed")]


async def test_a_moved_room_is_synced_again_where_it_is_now() -> None:
    bus = Published()
    viewer = Viewer(1)
    node = edge(bus, Connections(viewer))
    two_rooms = [[FRAME, 1, "r1", b"a"], [FRAME, 1, "r2", b"b"]]
    node.received(pack_batch("owner-c", 1, two_rooms, node.id))
    node.received(pack_batch("owner-c", 2, [[MOVED, "r1"]], node.id))
    await settled(bus, 1)
    assert [(f.kind, c) for c, f in bus.sent] == [("sync", b"ph:room:{r1}:in")]


async def test_a_moved_room_taken_here_before_the_word_came_is_synced_here_too() -> None:
    """Its owner lost the room's lease in a Redis outage, and this process took the room for a
    retried move before that owner's MOVED came: the connection watching it from here is not
    in the room's audience here, and this word is all that tells it. Its sync goes on the
    room's channel, where this process's owner side hears it (test_owner.py). A lost batch
    still passes such a room over: its connections here see it first hand."""
    bus = Published()
    viewer = Viewer(1)
    node = edge(bus, Connections(viewer))
    node.received(pack_batch("owner-c", 1, [[FRAME, 1, "r1", b"a"]], node.id))
    node.holds = lambda room_id: room_id == "r1"
    node.received(pack_batch("owner-c", 2, [[MOVED, "r1"]], node.id))
    await settled(bus, 1)
    assert [(f.kind, f.connection, c) for c, f in bus.sent] == [("sync", 1, b"ph:room:{r1}:in")]
    assert viewer.stale == {"r1"}  # until the room here sends the snapshot

    other = Viewer(2)
    node = edge(bus := Published(), Connections(other))
    node.received(pack_batch("owner-d", 1, [[FRAME, 2, "r1", b"a"]], node.id))
    node.holds = lambda room_id: room_id == "r1"
    node.received(pack_batch("owner-d", 3, [], node.id))
    await asyncio.sleep(0)
    assert bus.sent == [] and other.stale == set()


async def test_frames_for_a_connection_gone_here_tell_the_owner_to_detach_it() -> None:
    bus = Published()
    node = edge(bus, Connections())
    node.received(pack_batch("owner-d", 1, [[FRAME, 5, "r1", b"a"]], node.id))
    await settled(bus, 1)
    assert (bus.sent[0][1].kind, bus.sent[0][1].connection) == ("detach", 5)


async def test_a_batch_for_a_previous_run_of_this_process_detaches_its_connections() -> None:
    """Restarted under the same name: connection 5 of the previous run is not this run's
    connection 5 (which must get nothing of it); the owner is told the old one is gone."""
    bus = Published()
    viewer = Viewer(5)
    node = edge(bus, Connections(viewer))
    node.received(pack_batch("owner-h", 40, [[FRAME, 5, "r1", b"old"]], "edge-1#0ld"))
    assert viewer.frames == []
    await settled(bus, 1)
    gone = bus.sent[0][1]
    assert (gone.kind, gone.connection, gone.edge) == ("detach", 5, "edge-1#0ld")


async def test_an_answer_reaches_its_request_and_a_late_one_is_dropped() -> None:
    bus = Published()
    connections = Connections(Viewer(2))
    node = edge(bus, connections, timeout=0.05)
    room = RemoteRoom("r1", node)
    room.submit("move", connections.viewers[2], {"mid": "m"}, ReplyTo(2, 41))
    room.submit("move", connections.viewers[2], {"mid": "n"}, ReplyTo(2, 42))
    await settled(bus, 2)
    first, second = (f.corr for _, f in bus.sent)
    node.received(pack_batch("owner-e", 1, [[REPLY, first, {"version": 9}, None]], node.id))
    assert connections.answers == [(2, 41, {"version": 9}, None)]
    # No answer to the second within the timeout: store_failed, retryable; a late answer is
    # dropped (the request has had its one answer).
    async with asyncio.timeout(5):
        while len(connections.answers) < 2:
            await asyncio.sleep(0.01)
    assert connections.answers[1] == (2, 42, None, "store_failed")
    assert (node.counters.forwarded, node.counters.forward_timeouts) == (2, 1)
    node.received(pack_batch("owner-e", 2, [[REPLY, second, {"version": 10}, None]], node.id))
    assert len(connections.answers) == 2


async def test_a_refusal_crosses_with_its_code_reason_and_fields() -> None:
    bus = Published()
    node = edge(bus, Connections(Viewer(4)))
    asked = asyncio.ensure_future(RemoteRoom("r1", node).ask("join", Viewer(4), {}))
    await settled(bus, 1)
    corr = bus.sent[0][1].corr
    error = ["too_many_tries", "wait", {"retry_after": 1.5}]
    node.received(pack_batch("owner-f", 1, [[REPLY, corr, None, error]], node.id))
    with pytest.raises(RoomError) as refused:
        await asked
    assert (refused.value.code, refused.value.extra) == ("too_many_tries", {"retry_after": 1.5})


def test_a_forward_survives_the_wire() -> None:
    message = Forward("e", 3, 9, 12, "move", "p", "n", "1.2.3.4",
                      {"mid": 5, "move": {1: b"\x00", "k": [1.5]}})
    again = Forward.unpack(message.pack())
    assert again.args == message.args and again.request == 12 and again.address == "1.2.3.4"
    assert msgpack.unpackb(message.pack(), strict_map_key=False)[0] == "e"


async def test_a_sync_whose_answer_may_be_lost_is_asked_again() -> None:
    """A second lost batch while the connection's sync waits: that sync's answer may have
    been in it, so it is given up and asked anew (and the first answer, if it comes, is
    dropped)."""
    bus = Published()
    viewer = Viewer(7)
    node = edge(bus, Connections(viewer))
    node.received(pack_batch("owner-g", 1, [[FRAME, 7, "r1", b"u1"]], node.id))
    node.received(pack_batch("owner-g", 3, [], node.id))
    await settled(bus, 1)
    node.received(pack_batch("owner-g", 5, [], node.id))
    async with asyncio.timeout(5):
        while len(bus.sent) < 2:
            await asyncio.sleep(0.01)
    first, second = (f for _, f in bus.sent)
    assert (first.kind, second.kind) == ("sync", "sync") and first.corr != second.corr
    node.received(pack_batch("owner-g", 6, [[REPLY, second.corr, {"room": "r1"}, None]], node.id))
    assert viewer.stale == {"r1"}  # the snapshot's CLEAR clears it, not the answer


class Recorded:
    """A room taken into this process, recording what it is handed."""

    def __init__(self) -> None:
        self.id = "r1"
        self.submitted: list[str] = []

    def submit(self, kind: str, viewer: Any, args: Any, reply_to: Any = None) -> None:
        self.submitted.append(kind)


async def test_a_request_answered_by_its_timeout_is_not_carried_out_by_a_late_take() -> None:
    """Nobody held the room and loading it here took longer than the request may wait: the
    request was answered store_failed (retryable), so it must not be carried out as well."""
    bus = Published(listeners=0)
    connections = Connections(Viewer(2))
    node = edge(bus, connections, timeout=0.05)
    room = Recorded()
    loaded = asyncio.Event()

    async def slow_take(room_id: str) -> Any:
        await asyncio.sleep(0.2)
        loaded.set()
        return room

    node.take = slow_take
    RemoteRoom("r1", node).submit("move", connections.viewers[2], {"mid": "m"}, ReplyTo(2, 7))
    async with asyncio.timeout(5):
        await loaded.wait()  # set by the take, in the forward's task, which then goes straight on
    assert connections.answers == [(2, 7, None, "store_failed")]
    assert room.submitted == []


class Unreachable(StandInBus):
    """A bus whose every publish fails as it does with Redis away."""

    def __init__(self) -> None:
        self.sent = 0

    def publish(self, channel: bytes, payload: bytes) -> Any:
        self.sent += 1
        future = asyncio.get_running_loop().create_future()
        future.set_exception(RedisConnectionError("Connection reset by peer"))
        return future


async def test_a_request_redis_fails_to_forward_is_answered_store_failed_at_once() -> None:
    """Not left to its timeout. Compiled, this handler once failed with a TypeError (its
    exception bound to a name the handler before had typed ``RoomError``)."""
    connections = Connections(Viewer(2))
    node = edge(Unreachable(), connections, timeout=30)  # type: ignore[arg-type]
    RemoteRoom("r1", node).submit("move", connections.viewers[2], {"mid": "m"}, ReplyTo(2, 41))
    async with asyncio.timeout(5):
        while not connections.answers:
            await asyncio.sleep(0.01)
    assert connections.answers == [(2, 41, None, "store_failed")]
    assert node.outage.failures == 1
