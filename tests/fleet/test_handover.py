"""A drain's handover, as pure code: which process takes which room (the same answer on every
process, spread over the fleet, draining processes left out), and what a process does with a
message on the handover channel. The registry and the loading of rooms are stand-ins; the
whole path over real processes is ``tests/server/fleet/test_failover.py``."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import msgpack
import pytest

from playhall.fleet.handover import Handover, chosen
from playhall.store.fleet import Member
from playhall.store.keys import Keys
from playhall.store.outage import Outage

from ..server.helpers import Recorder

ROOMS = [f"room{i:04d}" for i in range(3000)]


def test_every_process_chooses_the_same_one_whatever_order_it_lists_the_fleet_in() -> None:
    fleet = ["a:1", "b:1", "c:1"]
    shuffled = fleet[::-1]
    assert all(chosen(room, fleet) == chosen(room, shuffled) for room in ROOMS)


def test_the_rooms_spread_evenly_over_the_fleet() -> None:
    counts = Counter(chosen(room, ["a:1", "b:1", "c:1"]) for room in ROOMS)
    assert set(counts) == {"a:1", "b:1", "c:1"}
    assert all(800 <= count <= 1200 for count in counts.values()), counts


def test_a_process_leaving_moves_only_the_rooms_it_would_have_taken() -> None:
    before = {room: chosen(room, ["a:1", "b:1", "c:1"]) for room in ROOMS}
    after = {room: chosen(room, ["a:1", "c:1"]) for room in ROOMS}
    moved = [room for room in ROOMS if before[room] != after[room]]
    assert moved and all(before[room] == "b:1" for room in moved)


def test_nobody_to_choose() -> None:
    assert chosen("room0001", []) is None


class Fleet:
    """A registry and room loader standing in for Redis and the keeper."""

    def __init__(self, members: list[Member]) -> None:
        self.live = members
        self.taken: list[list[str]] = []
        self.done = asyncio.Event()

    async def members(self) -> list[Member]:
        return self.live

    async def take(self, room_ids: list[str]) -> int:
        self.taken.append(room_ids)
        self.done.set()
        return len(room_ids)


def member(instance: str, draining: bool = False) -> Member:
    return Member(instance=instance, started=0.0, version="0", draining=draining)


def handover_of(instance: str, fleet: Fleet) -> Handover:
    return Handover(None, Keys("ph:"), instance, fleet.members, fleet.take,  # type: ignore[arg-type]
                    Outage())


async def test_a_process_takes_its_share_of_a_drained_process_rooms_and_no_more() -> None:
    # "d:1" drains; "e:1" drains too (a rolling restart of two at once): neither is chosen.
    fleet = Fleet([member("a:1"), member("b:1"), member("d:1", True), member("e:1", True)])
    handover = handover_of("a:1", fleet)
    rooms = random.Random(7).sample(ROOMS, 200)
    handover._heard(msgpack.packb(["d:1", rooms]))
    async with asyncio.timeout(5):
        await fleet.done.wait()
    expected = [room for room in rooms if chosen(room, ["a:1", "b:1"]) == "a:1"]
    assert fleet.taken == [expected]
    assert 60 <= len(expected) <= 140


async def test_a_process_ignores_its_own_handover() -> None:
    fleet = Fleet([member("a:1")])
    handover = handover_of("a:1", fleet)
    handover._heard(msgpack.packb(["a:1", ROOMS[:10]]))
    await handover._taking.wait()
    assert fleet.taken == []


async def test_a_message_that_is_not_a_handover_is_dropped_and_logged_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logger = Recorder()
    monkeypatch.setattr("playhall.fleet.handover.logger", logger)
    fleet = Fleet([member("a:1")])
    handover = handover_of("a:1", fleet)
    strangers = [
        b"\xc1",  # never used in msgpack
        msgpack.packb("d:1"),
        msgpack.packb(["d:1"]),
        msgpack.packb(["d:1", "room0001"]),
        msgpack.packb(["d:1", ["room0001", 7]]),
        msgpack.packb([3, ["room0001"]]),
        msgpack.packb({(1, 2): 1}),  # a map keyed by an array: no Python dict holds it
    ]
    for data in strangers:
        handover._heard(data)
    await handover._taking.wait()
    assert fleet.taken == []
    assert handover.strangers == len(strangers)
    assert [event for _, event, _ in logger.lines] == ["handover_not_understood"]
