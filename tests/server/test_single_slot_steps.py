"""Writes that span hash slots are sequences of single-slot steps (store/results.py,
store/players.py, store/code_tries.py, store/seeks.py): a sequence cut short after any step
(a process that died) and run again ends as one whole run does, and counting under caps
admits exactly up to the cap across processes, a refusal counting nothing. Real Redis."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from playhall.store import scripts
from playhall.store.code_tries import CodeTries
from playhall.store.keys import Keys
from playhall.store.pipe import RedisPipe
from playhall.store.players import COUNT_UNDER_CAP, UNCOUNT
from playhall.store.redis_store import Store
from playhall.store.results import DECIDE, PLAYER, RatingMoved, ResultsStore
from playhall.store.seeks import Claim, SeekStore


@pytest.fixture
async def stores(redis_url: str) -> AsyncIterator[list[Store]]:
    """Two stores on one prefix, each with its own connections: two server processes."""
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    made = []
    for _ in range(2):
        made.append(Store(aioredis.Redis.from_url(redis_url), RedisPipe(redis_url), prefix))
    yield made
    for store in made:
        store.close()
        await store.redis.aclose()


# -- results ---------------------------------------------------------------------------------

GAME = "mantis"
PEOPLE = [
    ("p1", "w", 0, 27.5, 7.0, 100.0, True),
    ("p2", "l", 0, 22.5, 7.0, 100.0, False),
]


async def _written(results: ResultsStore) -> dict[str, Any]:
    """Everything a game's write leaves, to compare."""
    redis = results.redis
    found: dict[str, Any] = {}
    for player, *_ in PEOPLE:
        found[f"history {player}"] = await results.history(player, None, 10)
        found[f"stats {player}"] = await results.stats(player)
    found["leaderboard"] = await redis.zrange(results.leaderboard_key(GAME), 0, -1, withscores=True)
    found["game"] = await results.games(["room1"])
    found["noted"] = await results.note("room1")
    found["rows kept"] = await redis.exists(results.rows_key("room1"))
    found["holds kept"] = [await redis.exists(results.holds_key(p)) for p, *_ in PEOPLE]
    return found


async def _results(redis_url: str) -> ResultsStore:
    results = ResultsStore(aioredis.Redis.from_url(redis_url), RedisPipe(redis_url), _keys())
    await results.expect("room1", 50, {"stood_in": []})
    return results


def _keys() -> Keys:
    return Keys(f"t{uuid.uuid4().hex[:8]}:")


async def _write(results: ResultsStore, people: list[Any] = PEOPLE) -> bool:
    return await results.write("room1", b"\x81\xa1g\x01", 600, 50, GAME, True, people)


async def test_a_write_cut_short_after_any_step_and_run_again_ends_as_one_run(
    redis_url: str,
) -> None:
    whole = await _results(redis_url)
    assert await _write(whole)
    expected = await _written(whole)
    assert expected["stats p1"] == {
        "mantis:w": "1", "mantis:mu": "27.5", "mantis:sigma": "7.0", "mantis:at": "100.0",
        "mantis:n": "1",
    }
    assert expected["leaderboard"] == [(b"p1", 27.5)]
    assert expected["noted"] is None and not expected["rows kept"]
    assert expected["holds kept"] == [0, 0]
    with pytest.raises(RatingMoved):  # (p1's rating is not the one this was computed from)
        await _write(whole)
    again = [(p, r, 1, mu, sigma, at, shown) for p, r, _, mu, sigma, at, shown in PEOPLE]
    assert not await _write(whole, again)  # the whole write again: nothing moves
    assert await _written(whole) == expected
    for players_done in range(3):  # cut after the game's step, and after each player's (the
        # first run's holds are let go by the run again, as by the same room's write)
        cut = await _results(redis_url)
        await cut.hold_ratings("room1", GAME, PEOPLE)
        rows = msgpack.packb([list(person) for person in PEOPLE])
        keys = [cut.game_key("room1"), cut.rows_key("room1")]
        await scripts.call(cut.pipe, DECIDE, keys, [b"\x81\xa1g\x01", rows, "600"])
        for player, result, _, mu, sigma, at, _ in PEOPLE[:players_done]:
            keys = [cut.history_key(player), cut.stats_key(player), cut.holds_key(player)]
            args = ["room1", "50", "600", GAME, result, "1", repr(mu), repr(sigma), repr(at)]
            await scripts.call(cut.pipe, PLAYER, keys, args)
        # Run again with ratings read and computed anew (other numbers): what was decided
        # first holds.
        again = []
        for player, result, _, mu, sigma, at, shown in PEOPLE:
            [row] = await cut.ratings(GAME, [player])
            again.append((player, result, int(row[3] or 0), mu + 1, sigma, at, shown))
        assert not await _write(cut, again)
        assert await _written(cut) == expected, players_done


async def test_two_games_of_one_player_never_rate_from_the_same_old_rating(
    redis_url: str,
) -> None:
    results = await _results(redis_url)
    await results.expect("room2", 60, {"stood_in": []})
    await results.hold_ratings("room1", GAME, PEOPLE)  # room1's write is under way
    other = [("p1", "w", 0, 30.0, 6.0, 101.0, True), ("p3", "l", 0, 20.0, 6.0, 101.0, False)]
    with pytest.raises(RatingMoved):  # held by room1's write
        await results.write("room2", b"\x80", 600, 60, GAME, True, other)
    assert await results.stats("p3") == {}  # nothing of room2 written, p3 not held
    assert await results.redis.exists(results.holds_key("p3")) == 0
    assert await _write(results)
    with pytest.raises(RatingMoved):  # p1's rating moved since room2 read it
        await results.write("room2", b"\x80", 600, 60, GAME, True, other)
    other[0] = ("p1", "w", 1, 30.0, 6.0, 101.0, True)  # read again
    assert await results.write("room2", b"\x80", 600, 60, GAME, True, other)
    stats = await results.stats("p1")
    assert (stats["mantis:n"], stats["mantis:w"], stats["mantis:mu"]) == ("2", "2", "30.0")


# -- caps ------------------------------------------------------------------------------------


async def test_caps_admit_exactly_to_the_cap_across_processes_and_a_refusal_counts_nothing(
    stores: list[Store],
) -> None:
    keys = stores[0].keys
    address = keys.address_counter_key("10.1.1.1", "created")

    async def event(n: int) -> bool:
        player = f"p{n % 4}"
        caps = [(keys.player_counter_key(player, "created"), 6), (address, 15)]
        return await stores[n % 2].players.count_under_caps(caps, 60) is None

    admitted = await asyncio.gather(*(event(n) for n in range(40)))
    assert sum(admitted) == 15
    read = stores[0].redis.get
    counts = [int(await read(keys.player_counter_key(f"p{i}", "created")) or 0) for i in range(4)]
    assert sum(counts) == 15 and max(counts) <= 6  # the refused events left nothing counted
    assert int(await read(address) or 0) == 15


async def test_counting_back_down_takes_nothing_from_a_later_window(stores: list[Store]) -> None:
    store = stores[0]
    key = store.keys.player_counter_key("p1", "created")
    ok, ends = await scripts.call(store.pipe, COUNT_UNDER_CAP, [key], ["60000", "5"])
    assert ok == 1
    await store.redis.delete(key)  # that window ended: a later one started, by others
    await scripts.call(store.pipe, COUNT_UNDER_CAP, [key], ["90000", "5"])
    assert await scripts.call(store.pipe, UNCOUNT, [key], [ends.decode()]) == 0
    assert await store.redis.get(key) == b"1"


async def test_a_try_refused_by_the_address_is_given_back_to_the_player(
    stores: list[Store],
) -> None:
    tries = CodeTries(stores[0].redis, stores[0].keys.p, free=1, first=2.0, longest=60.0)
    assert (await tries.take(["player:p1", "address:a"], 1_000_000)).wait == 0.0
    assert (await tries.take(["player:p2", "address:a"], 1_000_000)).wait == 2.0
    stored = await stores[0].redis.hgetall(f"{tries.prefix}tries:player:{{p2}}")
    assert stored == {b"n": b"0", b"at": b"0"}  # counted, then given back
    assert (await tries.take(["player:p2", "address:b"], 1_000_000)).tries == 1


# -- quick play ------------------------------------------------------------------------------

POOL = "mantis:0123"


def _seeks(store: Store) -> SeekStore:
    return SeekStore(store.redis, store.pipe, store.keys)


async def _claim(seeks: SeekStore, player: str, room: str) -> tuple[str, Claim]:
    return await seeks.claim(POOL, player, (3, 3), None, (None, None), None, room, 1, 60)


async def _taken(seeks: SeekStore, claim: Claim) -> int:
    return int(await seeks.redis.hget(seeks.table_key(claim.pool, claim.room), "taken") or -1)


async def _two_seated(store: Store) -> tuple[SeekStore, Claim]:
    """p0's table, at which p1 claimed a seat."""
    seeks = _seeks(store)
    _, table = await _claim(seeks, "p0", "r0")
    assert await _claim(seeks, "p1", "r1") == ("seat", table)
    return seeks, table


async def test_a_claim_cut_short_before_the_seeker_was_noted_finds_its_seat_again(
    stores: list[Store],
) -> None:
    seeks, table = await _two_seated(stores[0])
    assert await _taken(seeks, table) == 2
    await seeks.redis.delete(seeks.seeker_key("p1"))  # the process died before noting it
    assert await _claim(seeks, "p1", "r2") == ("seat", table)
    assert await _taken(seeks, table) == 2
    assert await seeks.holding("p1") == table
    # The opener's own table, likewise.
    await seeks.redis.delete(seeks.seeker_key("p0"))
    assert await _claim(seeks, "p0", "r3") == ("open", table)


async def test_concurrent_seeks_of_one_player_hold_one_seat(stores: list[Store]) -> None:
    opener = _seeks(stores[0])
    _, table = await _claim(opener, "p0", "r0")
    answers = await asyncio.gather(
        *(_claim(_seeks(stores[n % 2]), "p1", f"s{n}") for n in range(6))
    )
    assert {claim for _, claim in answers} == {table}
    assert await _taken(opener, table) == 2
    assert await opener.redis.zrange(opener.pool_key(POOL), 0, -1) == [b"r0"]


async def test_a_claim_read_before_another_seek_of_its_player_claimed_takes_no_second_seat(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    seeks, table = await _two_seated(stores[0])
    await seeks.redis.delete(seeks.seeker_key("p1"))  # as if the first seek were not done yet
    read = seeks._read_pool

    async def before_the_first_claim(pool: str, player: str) -> tuple[list[Any], str]:
        listed, _ = await read(pool, player)
        return listed, ""  # read before the first seek's claim ran

    monkeypatch.setattr(seeks, "_read_pool", before_the_first_claim)
    assert await _claim(seeks, "p1", "r2") == ("seat", table)
    assert await _taken(seeks, table) == 2


async def test_a_seek_that_lost_the_race_to_another_of_the_same_player_gives_its_seat_back(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _seeks(stores[0]), _seeks(stores[1])
    _, held = await _claim(first, "p1", "r0")

    async def not_yet(player: str) -> None:  # read before the first seek's claim was noted
        return None

    monkeypatch.setattr(second, "holding", not_yet)
    other = "othergame:4567"
    _, table = await second.claim(other, "p2", (2, 2), None, (None, None), None, "r1", 1, 60)
    assert await second.claim(
        other, "p1", (2, 2), None, (None, None), None, "r2", 1, 60
    ) == ("held", held)
    assert await _taken(second, table) == 1  # p1's seat there given back
    assert await second.claim(
        other, "p1", (3, 3), None, (None, None), 9, "r3", 1, 60
    ) == ("held", held)  # and a table it opened is not left behind
    assert not await second.redis.exists(second.table_key(other, "r3"))
    assert await second.redis.zrange(second.pool_key(other), 0, -1) == [b"r1"]
    assert await second.due(10, 5) == []


async def test_a_release_cut_short_after_the_seat_was_given_back_ends_as_one(
    stores: list[Store],
) -> None:
    seeks, table = await _two_seated(stores[0])
    keys = [seeks.table_key(POOL, "r0"), seeks.pool_key(POOL), seeks.claim_key(POOL, "p1")]
    assert await seeks._give_back(keys=keys, args=["r0"]) == 1  # then the process died
    assert await seeks.release(table, "p1")
    assert await _taken(seeks, table) == 1
    assert await seeks.holding("p1") is None
    assert not await seeks.release(table, "p1")
