"""Every write and read of the players', addresses', join-code tries', refusals', results',
quick play's and the fleet registry's keys touches one hash slot per script call, multi-key
command and transaction: run on a Redis Cluster node (``cluster_node``), which refuses
anything else with ``CROSSSLOT``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from playhall.store.code_tries import CodeTries
from playhall.store.fleet import Member
from playhall.store.pipe import RedisPipe
from playhall.store.redis_store import Store
from playhall.store.results import ResultsStore
from playhall.store.seeks import SeekStore

from .cluster_node import cluster_node


@pytest.fixture(scope="module")
def node_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with cluster_node(tmp_path_factory.mktemp("cluster-node")) as url:
        yield url


@pytest.fixture
async def store(node_url: str) -> AsyncIterator[Store]:
    client = aioredis.Redis.from_url(node_url)
    store = Store(client, RedisPipe(node_url), f"t{uuid.uuid4().hex[:8]}:", player_ttl=600)
    yield store
    store.close()
    await client.aclose()


async def test_the_node_refuses_what_a_cluster_refuses(store: Store) -> None:
    """(So the tests below could fail.)"""
    with pytest.raises(ResponseError, match="same slot"):
        await store.redis.eval("return 1", 2, "a", "b")
    with pytest.raises(ResponseError, match="same slot"):
        await store.redis.mget(["a", "b"])


async def test_players_addresses_and_caps(store: Store) -> None:
    players, keys = store.players, store.keys
    await players.create_player("p1", "Ann", "hash", 600)
    await players.player_used("p1", 600)
    await players.touch_player("p1", 600)
    await players.rename_player("p1", "Anne")
    assert (await players.player("p1")) is not None
    await players.add_player_room("p1", "r1")
    assert await players.player_rooms("p1") == []  # (no such room: forgotten)
    await players.remove_player_room("p1", "r1")
    await players.note_created("p1", "r2", ["r0"], 600)
    assert await players.created_rooms("p1") == {"r2": None}
    assert await players.admit_connection("10.0.0.1", "i:1", 2, 5000)
    for call in players.renew_connections({"10.0.0.1": ["i:1"]}, 5000):
        await call
    await players.release_connection("10.0.0.1", "i:1")
    assert (await players.count_in_window(keys.player_counter_key("p1", "renamed"), 60))[0] == 1
    caps = [
        (keys.player_counter_key("p1", "created"), 5),
        (keys.address_counter_key("10.0.0.1", "created"), 1),
    ]
    assert await players.count_under_caps(caps, 60) is None
    refused = await players.count_under_caps(caps, 60)  # the address's is full: undone
    assert refused is not None and refused[0] == 1


async def test_join_code_tries(store: Store) -> None:
    tries = CodeTries(store.redis, store.keys.p, free=1, first=2.0, longest=60.0)
    taken = await tries.take(["player:p1", "address:::1"], 1_000_000)
    assert taken.wait == 0.0
    await tries.give_back(["player:p1", "address:::1"], taken)
    await tries.take(["player:p2", "address:::1"], 1_000_000)
    assert (await tries.take(["player:p3", "address:::1"], 1_000_000)).wait > 0  # given back


async def test_refused_addresses(store: Store) -> None:
    refused = store.refused
    await refused.refuse("::1", 60, "op", "why", 1000.0)
    await refused.refuse("10.0.0.2", 60, "op", "why", 1000.0)
    assert await refused.refused_among(["::1", "10.0.0.2", "10.0.0.3"]) == {"::1", "10.0.0.2"}
    assert {r.address for r in await refused.all(10)} == {"::1", "10.0.0.2"}
    assert await refused.lift("::1")
    assert await refused.stamp() == 3


async def test_results(store: Store) -> None:
    results = ResultsStore(store.redis, store.pipe, store.keys)
    await results.expect("room1", 5, {"stood_in": []})
    assert [room for room, _, _ in await results.due(10, 5)] == ["room1"]
    assert await results.note("room1") is not None
    people = [
        ("p1", "w", 0, 27.0, 7.0, 1.0, True),
        ("p2", "l", 0, 23.0, 7.0, 1.0, False),
    ]
    assert await results.write("room1", b"\x80", 0, 5, "mantis", True, people)
    again = [(p, r, 1, mu, sigma, at, shown) for p, r, _, mu, sigma, at, shown in people]
    assert not await results.write("room1", b"\x80", 0, 5, "mantis", True, again)
    assert await results.recorded("room1")
    await results.ratings("mantis", ["p1", "p2"])
    assert await results.history("p1", None, 5) == [("room1", 5)]
    assert await results.games(["room1", "room2"]) == [{}, None]
    assert (await results.stats("p2"))["mantis:l"] == "1"
    assert await results.leaders("mantis", 0, 5) == ["p1"]
    await results.unlist("mantis", ["p1"])
    await results.forget("room1")


async def test_quick_play(store: Store) -> None:
    seeks = SeekStore(store.redis, store.pipe, store.keys)
    pool = "mantis:abc"
    what, opened = await seeks.claim(pool, "p1", (2, 2), None, (None, None), 9, "r1", 1, 60)
    assert what == "open" and await seeks.exists(opened)
    what, seat = await seeks.claim(pool, "p2", (2, 2), None, (None, None), 9, "r2", 2, 60)
    assert (what, seat) == ("seat", opened)
    assert await seeks.holding("p2") == seat
    assert await seeks.release(seat, "p2")
    assert await seeks.due(10, 5) == [opened]
    assert await seeks.take_due(opened)
    await seeks.retry_due(opened, 5)
    await seeks.drop_holder("p1", opened)
    await seeks.close(opened)
    assert not await seeks.exists(opened)


async def test_fleet_registry(store: Store) -> None:
    await store.fleet.beat(Member("a:1", 1.0, "v", False), 5000)
    await store.fleet.beat(Member("b:2", 1.0, "v", False), 5000)
    assert [m.instance for m in await store.fleet.members()] == ["a:1", "b:2"]
    await store.fleet.leave("a:1")
    assert [m.instance for m in await store.fleet.members()] == ["b:2"]
