"""The owner's side of forwarding, as pure code: what it sends each edge, numbered, and a batch
lost on its way to Redis followed shortly by another (so the edge sees the gap even when
nothing else is due). The bus is a stand-in that records what is published."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from redis.exceptions import ConnectionError as RedisConnectionError

from playhall.fleet.messages import FRAME, REPLY, Forward, unpack_batch
from playhall.fleet.owner import EdgeMail, Owner, RemoteViewer
from playhall.rooms.audience import Viewer
from playhall.store.keys import Keys

from .buses import StandInBus


class FailingOnce(StandInBus):
    """A bus whose first publish fails as a reset connection does; the rest reach one edge."""

    def __init__(self) -> None:
        self.sent: list[tuple[bytes, tuple[str, int, list[Any], str]]] = []

    def publish(self, channel: bytes, payload: bytes) -> Any:
        future = asyncio.get_running_loop().create_future()
        if not self.sent:
            future.set_exception(RedisConnectionError("reset"))
        else:
            future.set_result(1)
        self.sent.append((channel, unpack_batch(payload)))
        return future


async def test_a_batch_lost_on_its_way_is_followed_by_the_next_number() -> None:
    bus = FailingOnce()
    gone: list[str] = []
    mail = EdgeMail(bus, Keys("ph:"), lambda edge, at: gone.append(edge))
    mail.post("host:1#ab", [FRAME, 3, "r1", b"frame"])
    async with asyncio.timeout(5):
        while len(bus.sent) < 2:
            await asyncio.sleep(0.01)
    (channel, first), (_, second) = bus.sent
    assert channel == b"ph:edge:{host:1}"
    assert first[1:] == (1, [[FRAME, 3, "r1", b"frame"]], "host:1#ab")
    assert second[1:] == (2, [], "host:1#ab")  # empty, numbered next: the edge sees the gap
    assert gone == []



class Counting(StandInBus):
    """A bus whose publishes reach ``listeners[i]`` subscribers, the i-th publish (the last
    count for the rest)."""

    def __init__(self, *listeners: int) -> None:
        self.listeners = listeners
        self.sent: list[tuple[str, int, list[Any], str]] = []

    def publish(self, channel: bytes, payload: bytes) -> Any:
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.listeners[min(len(self.sent), len(self.listeners) - 1)])
        self.sent.append(unpack_batch(payload))
        return future


async def until(condition: Any) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.01)


async def test_an_edge_whose_channel_moves_under_a_batch_is_not_taken_for_gone() -> None:
    """A batch reaches nobody (a Cluster moved the edge's channel to a new primary, where the
    edge subscribes a moment later): an empty batch follows shortly, and reaches the edge,
    which sees the gap; its viewers are not detached."""
    bus = Counting(0, 0, 1)  # the first batch, and one more sent with it, reach nobody
    gone: list[str] = []
    mail = EdgeMail(bus, Keys("ph:"), lambda edge, at: gone.append(edge))
    mail.post("host:1#ab", [FRAME, 3, "r1", b"f1"])
    await until(lambda: len(bus.sent) == 1)
    mail.post("host:1#ab", [FRAME, 3, "r1", b"f2"])
    await until(lambda: len(bus.sent) == 3)
    assert [batch[1:3] for batch in bus.sent] == [
        (1, [[FRAME, 3, "r1", b"f1"]]), (2, [[FRAME, 3, "r1", b"f2"]]), (3, []),
    ]
    assert gone == []


async def test_an_edge_that_hears_nothing_a_moment_later_either_is_gone() -> None:
    bus = Counting(0)
    gone: list[tuple[str, float]] = []
    mail = EdgeMail(bus, Keys("ph:"), lambda edge, at: gone.append((edge, at)))
    mail.post("host:1#ab", [FRAME, 3, "r1", b"f1"])
    await until(lambda: gone)
    assert len(bus.sent) == 2 and bus.sent[1][1:3] == (2, [])
    assert [edge for edge, _ in gone] == ["host:1"]


class Reaching(FailingOnce):
    """A bus every publish of which reaches one edge."""

    def publish(self, channel: bytes, payload: bytes) -> Any:
        future = asyncio.get_running_loop().create_future()
        future.set_result(1)
        self.sent.append((channel, unpack_batch(payload)))
        return future


class HeldRoom:
    def __init__(self) -> None:
        self.submitted: list[str] = []
        self.viewers: list[Any] = []

    def submit(self, kind: str, viewer: Any, args: Any, reply_to: Any = None) -> None:
        self.submitted.append(kind)
        self.viewers.append(viewer)


class Held:
    """The room manager as the owner's side sees it: one room, held here."""

    closing = False

    def __init__(self) -> None:
        self.room = HeldRoom()

    def ready(self, room_id: str) -> HeldRoom:
        return self.room


async def test_a_request_this_release_does_not_know_is_refused_not_handed_to_the_room() -> None:
    """During a rolling upgrade a newer process may forward a request this one has no handler
    for: it is refused (bad_message), and the room never sees it."""
    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    held = Held()
    owner.rooms = held  # type: ignore[assignment]
    owner.received("r1", Forward("host:1#ab", 4, 9, 12, "teleport", "p", "n", "a", {}).pack())
    async with asyncio.timeout(5):
        while not bus.sent:
            await asyncio.sleep(0.01)
    [(_, (_, _, [[what, corr, result, error]], to))] = bus.sent
    assert (what, corr, result, error[0], to) == (REPLY, 9, None, "bad_message", "host:1#ab")
    assert held.room.submitted == []


async def test_a_request_of_a_connection_here_reaches_the_room_as_that_connection() -> None:
    """A sync (or any request) this process's own edge sent on a room's channel, which this
    process took meanwhile, reaches the room with the connection itself: a RemoteViewer
    beside it would get every frame a second time. Another process's connection, or one
    gone here, is a RemoteViewer as ever."""
    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    held = Held()
    owner.rooms = held  # type: ignore[assignment]
    session = cast(Viewer, object())  # this process's connection: only its identity counts
    owner.home = "host:2#cd"
    owner.own = lambda connection: session if connection == 4 else None
    for edge, connection in (("host:2#cd", 4), ("host:1#ab", 4), ("host:2#cd", 5)):
        owner.received("r1", Forward(edge, connection, 9, 12, "sync", "p", "n", "a", {}).pack())
    here, there, gone = held.room.viewers
    assert here is session
    assert isinstance(there, RemoteViewer) and (there.edge, there.id) == ("host:1#ab", 4)
    assert isinstance(gone, RemoteViewer) and (gone.edge, gone.id) == ("host:2#cd", 5)


async def test_a_detach_from_an_edge_that_no_longer_knows_the_connection_keeps_its_name() -> None:
    """An edge that finds a frame for a connection it no longer holds tells the owner to detach
    it, with no name (it has none left): the viewer, still in the room until the detach is
    handled, keeps the name it had (presence would show it nameless). A request of the
    connection itself still renames it."""
    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    held = Held()
    owner.rooms = held  # type: ignore[assignment]
    owner.received("r1", Forward("host:1#ab", 4, 9, 12, "join", "p", "bob", "a", {}).pack())
    owner.received("r1", Forward("host:1#ab", 4, 0, None, "detach", "", "", "", {}).pack())
    joined, detached = held.room.viewers
    assert joined is detached and joined.name == "bob"
    owner.received("r1", Forward("host:1#ab", 4, 9, 13, "rename", "p", "robert", "a", {}).pack())
    assert joined.name == "robert"


async def test_a_request_on_a_room_channel_left_just_now_still_reaches_the_owner_side() -> None:
    """Redis delivered a request on a room's channel after this process let the room go but
    before it had the UNSUBSCRIBE (the publisher counted a listener): the bus has no handler
    for it any more, and hands it to the owner's side, which answers it (here: the room is
    held again, and takes it)."""
    from playhall.fleet.node import FleetNode
    from playhall.store.bus import Bus
    from playhall.store.outage import Outage

    bus = Bus("redis://unused", Reaching(), Outage(), name="t", timeout=1.0)  # type: ignore[arg-type]
    node = FleetNode(bus, Keys("ph:"), "host:2", timeout=1.0, check_every=1.0, outage=Outage())
    held = Held()
    node.owner.rooms = held  # type: ignore[assignment]
    assert bus.fallback is not None
    message = Forward("host:1#ab", 4, 0, 12, "sync", "p", "n", "a", {}).pack()
    bus.fallback(b"ph:room:{r1}:in", message)
    bus.fallback(b"ph:edge:{host:9}", message)  # not a room's channel: nothing
    assert held.room.submitted == ["sync"]


class ReachingBus(Reaching):
    """:class:`Reaching` with what a fleet node hooks into on a bus."""

    def __init__(self) -> None:
        super().__init__()
        self.on_reconnect: list[Any] = []
        self.fallback: Any = None


async def test_a_room_moving_away_is_told_behind_the_frames_already_posted_to_the_edge() -> None:
    """The edge must see its viewers' last frames of the room before ``MOVED`` (after it, it
    asks the room's next owner): both go in the pass's one batch, in the order posted."""
    from playhall.fleet.messages import MOVED
    from playhall.fleet.node import FleetNode
    from playhall.fleet.owner import RemoteViewer
    from playhall.store.outage import Outage

    bus = ReachingBus()
    node = FleetNode(bus, Keys("ph:"), "host:2", timeout=1.0, check_every=1.0,  # type: ignore[arg-type]
                     outage=Outage())
    viewer = RemoteViewer("host:1#ab", 3, "p", "n", "a", node.owner.mail)
    viewer.push(b"last frame", "r1")
    node.moved("r1", [viewer], closing=True)
    async with asyncio.timeout(5):
        while not bus.sent:
            await asyncio.sleep(0.01)
    assert [batch[1:] for _, batch in bus.sent] == [
        (1, [[FRAME, 3, "r1", b"last frame"], [MOVED, "r1"]], "host:1#ab")
    ]


async def test_an_answer_leaves_at_once_with_what_its_edge_was_due_the_rest_at_the_pass_end(
) -> None:
    """A forwarded request's answer is published when it is posted, with the frames its edge
    was due before it (the mover's update), rather than at the end of the loop pass, after
    every other room's work of the pass: the edge's player waits for it. What other edges are
    due goes at the pass's end, as before; numbers run on per edge."""
    from playhall.rooms.handle import ReplyTo

    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    owner.mail.post("host:1#ab", [FRAME, 3, "r1", b"update"])
    owner.mail.post("host:3#ef", [FRAME, 7, "r1", b"update"])
    owner.reply(ReplyTo(3, 12, "host:1#ab", 9), {"version": 5}, None)
    # Published by the call: no loop pass has run since.
    assert [batch[1:] for _, batch in bus.sent] == [
        (1, [[FRAME, 3, "r1", b"update"], [REPLY, 9, {"version": 5}, None]], "host:1#ab")
    ]
    await until(lambda: len(bus.sent) == 2)
    assert bus.sent[1][1][1:] == (1, [[FRAME, 7, "r1", b"update"]], "host:3#ef")
    owner.mail.post("host:1#ab", [FRAME, 3, "r1", b"next"])
    await until(lambda: len(bus.sent) == 3)
    assert bus.sent[2][1][1:] == (2, [[FRAME, 3, "r1", b"next"]], "host:1#ab")


async def test_an_answer_with_nothing_else_due_leaves_no_flush_behind() -> None:
    from playhall.rooms.handle import ReplyTo

    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    owner.reply(ReplyTo(3, 12, "host:1#ab", 9), None, None)
    assert [batch[1:] for _, batch in bus.sent] == [(1, [[REPLY, 9, None, None]], "host:1#ab")]
    assert not owner.mail._scheduled  # no loop callback made to find nothing to send


class Unloadable:
    """The room manager with Redis away: the room is not held here, and loading it fails."""

    closing = False

    def ready(self, room_id: str) -> None:
        return None

    async def get(self, room_id: str) -> Any:
        raise RedisConnectionError("Connection reset by peer")


async def test_a_request_for_a_room_redis_fails_to_load_is_refused_store_failed() -> None:
    """Refused at once, retryable. Compiled, this handler once failed with a TypeError (its
    exception bound to a name the handler before had typed ``RoomError``): the edge waited
    for its timeout instead."""
    bus = Reaching()
    owner = Owner(bus, Keys("ph:"), "host:2")
    owner.rooms = Unloadable()  # type: ignore[assignment]
    owner.received("r1", Forward("host:1#ab", 4, 9, 12, "move", "p", "n", "a", {}).pack())
    async with asyncio.timeout(5):
        while not bus.sent:
            await asyncio.sleep(0.01)
    [(_, (_, _, [[what, corr, result, error]], to))] = bus.sent
    assert (what, corr, result, to) == (REPLY, 9, None, "host:1#ab")
    assert error[:2] == ["store_failed", "Redis is unreachable; retry"]
