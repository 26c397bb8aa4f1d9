"""Rounds of fleet pings (``playhall.fleet.ping.Pings.ask_round``) on a stand-in bus that keeps
what is published: every other process of a fleet of up to ``PEERS_PER_ROUND`` others, the next
``PEERS_PER_ROUND`` in turn in a bigger one. tests/server/test_ping_channel.py and
tests/server/fleet/test_fleet_pings.py run the pings over Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from playhall.counters import Counters
from playhall.fleet.ping import ASK, PEERS_PER_ROUND, Pings
from playhall.store.keys import Keys

from ..cancels import cancelled_while_stopping
from .buses import StandInBus

KEYS = Keys("ph:")


class KeptBus(StandInBus):
    """Keeps each ask's addressee; every publish has a listener."""

    def __init__(self, peers: list[str]) -> None:
        self.by_channel = {KEYS.ping_channel(peer).encode(): peer for peer in peers}
        self.asked: list[str] = []

    def publish(self, channel: bytes, payload: bytes) -> Any:
        assert msgpack.unpackb(payload)[:2] == [ASK, "me"]
        self.asked.append(self.by_channel[channel])
        heard: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        heard.set_result(1)
        return heard


def pings(bus: KeptBus) -> Pings:
    async def members() -> list[Any]:
        return []

    return Pings(bus, KEYS, "me", members, every=1.0, timeout=1.0, refresh=1.0,  # type: ignore[arg-type]
                 counters=Counters())


def rounds(peers: list[str], count: int, bus: KeptBus | None = None) -> list[list[str]]:
    """What each of ``count`` rounds asked."""
    bus = bus if bus is not None else KeptBus(peers)
    asking = pings(bus)
    made = []
    for _ in range(count):
        bus.asked.clear()
        asking.ask_round(peers)
        made.append(list(bus.asked))
    return made


async def test_a_fleet_of_up_to_the_bound_is_asked_whole_every_round() -> None:
    peers = [f"p{i}" for i in range(PEERS_PER_ROUND)]
    assert rounds(peers, 3) == [peers] * 3
    assert rounds(peers[:2], 2) == [peers[:2]] * 2


async def test_a_bigger_fleet_is_asked_the_bound_a_round_each_in_turn() -> None:
    peers = [f"p{i:02}" for i in range(20)]
    made = rounds(peers, 5)
    assert all(len(asked) == len(set(asked)) == PEERS_PER_ROUND for asked in made)
    # 40 asks over 20 peers: each asked twice, in turn, none skipped.
    assert [peer for asked in made for peer in asked] == peers + peers


async def test_the_turn_goes_on_when_the_fleet_shrinks() -> None:
    peers = [f"p{i:02}" for i in range(12)]
    bus = KeptBus(peers)
    asking = pings(bus)
    asking.ask_round(peers)  # p00..p07
    asking.ask_round(peers)  # p08..p11, p00..p03: the turn is at p04
    fewer = peers[:10]  # two went
    bus.asked.clear()
    asking.ask_round(fewer)
    assert bus.asked == ["p04", "p05", "p06", "p07", "p08", "p09", "p00", "p01"]


async def test_a_stop_cancelled_while_it_waits_for_the_asking_loop_ends_cancelled() -> None:
    bus = KeptBus([])
    subscribed: list[bytes] = []

    async def subscribe(channel: bytes, handler: Any) -> None:
        subscribed.append(channel)

    bus.subscribe = subscribe  # type: ignore[attr-defined]
    asking = pings(bus)
    await asking.start()
    assert subscribed == [KEYS.ping_channel("me").encode()] and asking._task is not None
    stopper = await cancelled_while_stopping(asking.stop)
    assert stopper.cancelled()
    assert asking._task.done()
