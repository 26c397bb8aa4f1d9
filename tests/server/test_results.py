"""Finished games' results over a real server and Redis: each person's history (paged, newest
first), their counts, their ratings (once per game, also across a kill -9 between the game's
end and the write), the leaderboard and the profile."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from playhall import app
from playhall import results as results_module
from playhall_client import Client, ServerError

from .conftest import free_port, server_config
from .helpers import (
    Recorder,
    finished_against_a_bot,
    play_to_the_end,
    stored_room,
    wait_for_redis,
)
from .process import ServerProcess


@pytest.fixture
async def running(redis_url: str) -> AsyncIterator[app.Running]:
    # Ratings listed on the leaderboard after one game (a new player's sigma is 8.33).
    running = await app.start(server_config(redis_url, rating_provisional_sigma=8.3))
    yield running
    await running.drain()


async def resigned_game(
    url: str, loser: int = 1, *, private: bool = False, clients: list[Client] | None = None
) -> tuple[list[Client], str]:
    """A two-seat Mantis game between two people (new ones unless ``clients``) that ends by
    seat ``loser`` resigning."""
    players = clients or [await Client.connect(url, name=f"p{i}") for i in range(2)]
    first = await players[0].create("mantis", 2, private=private)
    second = await players[1].join(code=first.code) if private else await players[1].join(
        first.room
    )
    for client in players:
        await client.ready(first.room)
    for mirror in (first, second):
        await mirror.wait(lambda m: m.view["status"] == "playing")
    await players[loser].resign(first.room)
    for mirror in (first, second):
        await mirror.wait(lambda m: m.view["status"] == "finished")
    return players, first.room


async def history_of(client: Client, count: int, timeout: float = 20) -> list[dict[str, Any]]:
    """The client's history once it holds ``count`` games (written just after the game ends)."""
    async with asyncio.timeout(timeout):
        while True:
            games = (await client.games_played())["games"]
            if len(games) >= count:
                return list(games)
            await asyncio.sleep(0.05)


async def test_a_rated_game_goes_into_both_histories_and_ratings_once(
    running: app.Running,
) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    (winner, loser), room = await resigned_game(url, loser=1)
    for client in (winner, loser):
        [game] = await history_of(client, 1)
        assert game["room"] == room and game["game"] == "mantis" and game["rated"] is True
        assert [s["player"] for s in game["seats"]] == [winner.player, loser.player]
        assert [s["name"] for s in game["seats"]] == ["p0", "p1"]
        assert game["outcome"]["winners"] == [0] and game["outcome"]["reason"] == "resignation"
    won, lost = await winner.profile(), await loser.profile()
    assert won["games"]["mantis"]["w"] == 1 and won["games"]["mantis"]["l"] == 0
    assert lost["games"]["mantis"]["l"] == 1 and lost["games"]["mantis"]["w"] == 0
    up, down = won["games"]["mantis"]["rating"], lost["games"]["mantis"]["rating"]
    assert up["games"] == down["games"] == 1
    assert up["mu"] > 25 > down["mu"] and up["rating"] > 1500 > down["rating"]
    assert won["recent"][0]["room"] == room and won["name"] == "p0"

    # Written once: writing the same finished game again (a retry, another process's sweep)
    # changes nothing.
    _, record = await stored_room(running.config.redis_url, running.config.key_prefix, room)
    assert await running.endpoint.results.write(record, 1, frozenset()) is False
    again = await winner.profile()
    assert again["games"] == won["games"]
    assert len((await winner.games_played())["games"]) == 1

    # A rename changes the name only: the record belongs to the player id (the token).
    await winner.rename("Winnie")
    renamed = await winner.profile()
    assert renamed["name"] == "Winnie" and renamed["games"] == won["games"]
    assert renamed["recent"][0]["seats"][0]["name"] == "p0"  # as it was when they played


async def test_private_and_bot_games_are_kept_but_not_rated(running: app.Running) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    (owner, guest), room = await resigned_game(url, private=True)
    [game] = await history_of(owner, 1)
    assert game["room"] == room and game["rated"] is False and game["private"] is True
    assert "rating" not in (await owner.profile())["games"]["mantis"]
    assert (await guest.profile())["games"]["mantis"]["l"] == 1
    # Someone else sees neither the private game in the history nor in the profile.
    stranger = await Client.connect(url, name="stranger")
    assert (await stranger.games_played(owner.player))["games"] == []
    assert (await stranger.profile(owner.player))["recent"] == []

    solo = await Client.connect(url, name="solo")
    against_bot = await finished_against_a_bot(solo)
    [game] = await history_of(solo, 1)
    assert game["room"] == against_bot.room and game["rated"] is False
    assert [s["bot"] for s in game["seats"]] == [False, True]
    assert "rating" not in (await solo.profile())["games"]["mantis"]
    for client in (owner, guest, stranger, solo):
        await client.close()


async def test_history_pages_newest_first(running: app.Running) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    players = [await Client.connect(url, name=f"p{i}") for i in range(2)]
    rooms = []
    for n in range(5):
        _, room = await resigned_game(url, loser=n % 2, clients=players)
        rooms.append(room)
        await history_of(players[0], n + 1)
    seen, after = [], None
    sizes = []
    while True:
        page = await players[0].games_played(limit=2, after=after)
        sizes.append(len(page["games"]))
        seen += [g["room"] for g in page["games"]]
        after = page.get("next")
        if after is None:
            break
    assert seen == rooms[::-1] and sizes[:3] == [2, 2, 1]
    with pytest.raises(ServerError) as bad:
        await players[0].games_played(after="not-a-cursor")
    assert bad.value.code == "bad_message"
    counts = (await players[0].profile())["games"]["mantis"]
    assert (counts["w"], counts["l"], counts["rating"]["games"]) == (2, 3, 5)  # lost n = 0, 2, 4


async def test_leaderboard_orders_by_rating_and_leaves_out_provisional(
    running: app.Running, redis_url: str
) -> None:
    url = f"ws://127.0.0.1:{running.port}/"
    a, b, c = [await Client.connect(url, name=n) for n in ("a", "b", "c")]
    await resigned_game(url, loser=1, clients=[a, b])  # a beats b
    await history_of(b, 1)
    await resigned_game(url, loser=1, clients=[b, c])  # b beats c
    await history_of(c, 1)
    board = await a.leaderboard("mantis")
    names = [p["name"] for p in board["players"]]
    ratings = [p["rating"] for p in board["players"]]
    assert names[0] == "a" and names[-1] == "c" and set(names) == {"a", "b", "c"}
    assert ratings == sorted(ratings, reverse=True)
    first = await a.leaderboard("mantis", limit=1)
    assert [p["name"] for p in first["players"]] == ["a"] and first["next"] == "1"
    assert [p["name"] for p in (await a.leaderboard("mantis", limit=1, after="1"))["players"]] == [
        names[1]
    ]
    # The same games on a server whose bound a single game does not reach: nobody is listed.
    strict = await app.start(
        server_config(redis_url, key_prefix=running.config.key_prefix, rating_provisional_sigma=6)
    )
    try:
        other = await Client.connect(f"ws://127.0.0.1:{strict.port}/")
        assert (await other.leaderboard("mantis"))["players"] == []
        assert (await other.profile(a.player))["games"]["mantis"]["rating"]["provisional"]
        with pytest.raises(ServerError) as unknown:
            await other.profile("nobody")
        assert unknown.value.code == "no_such_player"
        await other.close()
    finally:
        await strict.drain()
    for client in (a, b, c):
        await client.close()


async def test_a_game_ended_by_a_killed_server_is_rated_once_by_the_next(
    redis_url: str,
) -> None:
    """kill -9 after the game's end is stored but before its results are written (the first
    process waits ``results_delay`` before writing them): the next process writes them, once."""
    port = free_port()
    prefix = f"k{uuid.uuid4().hex[:8]}:"
    first = ServerProcess(port, redis_url, prefix, "results-1", ["--results-delay", "3600"])
    await first.start()
    second = ServerProcess(first.port, redis_url, prefix, "results-2", [])
    r = aioredis.Redis.from_url(redis_url)
    try:
        players = [await Client.connect(first.url, name=f"p{i}") for i in range(2)]
        _, room = await resigned_game(first.url, loser=0, clients=players)
        _, record = await stored_room(redis_url, prefix, room)
        assert record.status == "finished"
        assert await r.zscore(f"{prefix}{{results}}:due", room) is not None
        first.kill()
        assert not await r.exists(f"{prefix}game:{{{room}}}")
        assert not await r.exists(f"{prefix}stats:{{{players[1].player}}}")

        await second.start()
        await wait_for_redis(lambda: _exists(r, f"{prefix}game:{{{room}}}"))
        for player, won in ((players[0].player, False), (players[1].player, True)):
            stats = await r.hgetall(f"{prefix}stats:{{{player}}}")
            assert stats[b"mantis:n"] == b"1"
            assert stats[b"mantis:w" if won else b"mantis:l"] == b"1"
        assert await r.zscore(f"{prefix}{{results}}:due", room) is None
        # The note's retry (a third process, or the same one again) finds it written.
        async with app_on(redis_url, prefix) as third:
            assert await third.endpoint.results.write(record, 1, frozenset()) is False
        stats = await r.hgetall(f"{prefix}stats:{{{players[1].player}}}")
        assert stats[b"mantis:n"] == b"1" and stats[b"mantis:w"] == b"1"
        for client in players:
            await client.close()
    finally:
        await r.aclose()
        first.kill()
        second.terminate()


async def _exists(r: aioredis.Redis, key: str) -> bool:
    return bool(await r.exists(key))


class app_on:  # noqa: N801 (used as a context manager's name)
    """A server in this process on ``prefix``'s keys, for the time of a ``with``."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        self.config = server_config(redis_url, key_prefix=prefix)
        self.running: app.Running | None = None

    async def __aenter__(self) -> app.Running:
        self.running = await app.start(self.config)
        return self.running

    async def __aexit__(self, *exc: object) -> None:
        assert self.running is not None
        await self.running.drain()



async def test_a_game_a_stand_in_finished_counts_as_last_place_for_its_player(
    redis_url: str,
) -> None:
    """The player who went away and let the server's bot finish is placed last (documented in
    docs/operations.md), whoever the bot's play made the winner."""
    config = server_config(redis_url, away_takeover=0.3)
    running = await app.start(config)
    try:
        url = f"ws://127.0.0.1:{running.port}/"
        stays = await Client.connect(url, name="stays")
        goes = await Client.connect(url, name="goes")
        mirror = await stays.create("mantis", 2)
        await goes.join(mirror.room)
        for client in (stays, goes):
            await client.ready(mirror.room)
        await mirror.wait(lambda m: m.view["status"] == "playing")
        gone = goes.player
        await goes.close()
        # The stand-in comes once the game waits for the absent player (on their turn).
        await play_to_the_end(stays, mirror, timeout=60)
        [game] = await history_of(stays, 1)
        assert game["rated"] is True and game["seats"][1].get("stand_in") is True
        assert "stand_in" not in game["seats"][0]
        before, after = game["seats"][1]["rating"]
        assert after < before  # last place, even if the bot won for them
        assert game["seats"][0]["rating"][1] > game["seats"][0]["rating"][0]
        profile = await stays.profile(gone)
        assert profile["games"]["mantis"]["rating"]["games"] == 1
        await stays.close()
    finally:
        await running.drain()


async def test_results_whose_ratings_stay_held_are_left_to_the_sweep_not_taken_for_a_bug(
    running: app.Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another game's write holds the players' ratings (one under way, or left by a process
    that died, until its hold lapses): the write gives up with RatingsBusy, which the server
    logs as ``results_deferred`` and leaves to its sweep, not as a bug with a traceback."""
    url = f"ws://127.0.0.1:{running.port}/"
    (winner, loser), room = await resigned_game(url, loser=1)
    _, record = await stored_room(running.config.redis_url, running.config.key_prefix, room)
    results = running.endpoint.results
    async with asyncio.timeout(10):  # the game's own results written (its holds let go)
        for client in (winner, loser):
            while "mantis" not in (await client.profile()).get("games", {}):
                await asyncio.sleep(0.05)
    other = dataclasses.replace(record, id="heldRatings")  # a second game of theirs
    players = [s.player or "" for s in record.seats]
    counts = [int(row[3] or 0) for row in await results.db.ratings(record.game, players)]
    people = [(p, "w", n, 25.0, 8.0, 0.0, False) for p, n in zip(players, counts, strict=True)]
    await results.db.hold_ratings("anotherRoom", record.game, people)
    log = Recorder()
    monkeypatch.setattr(results_module, "logger", log)
    # The way a game's end goes: noted as due, then written once stored.
    await results.expect(record, other)
    results.ended(other)
    async with asyncio.timeout(10):  # (the write's tries back off for about a second)
        while not log.lines:
            await asyncio.sleep(0.02)
    # (Its sweep may meet the note too, and defer it the same way.)
    assert {(level, event, fields["room"]) for level, event, fields in log.lines} == {
        ("warning", "results_deferred", "heldRatings")  # not results_failed, no traceback
    }
    assert "kept moving" in log.lines[0][2]["reason"]
    # Left to the sweep: still noted as due.
    assert await results.db.note("heldRatings") is not None
    for client in (winner, loser):
        await client.close()
