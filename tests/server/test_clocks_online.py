"""Clocks, stand-ins and resignation over real websockets, against a real Redis, with clocks of
fractions of a second: a timeout under each policy in every game (at each quick table), the
stand-in taking over and the player taking the seat back, resignation in every game, a Fischer
bank that grows by its increment, the away takeover, and a clock that survives a ``kill -9``.
"""

from __future__ import annotations

import asyncio
import copy
import time
import uuid
from typing import Any

import pytest

from playhall import app
from playhall_client import Client, RoomMirror, ServerError
from tests.games.conformance import quick_cases

from .conftest import free_port, server_config
from .helpers import Table, started_table, stored_room
from .process import ServerProcess

CASES = quick_cases()
TURN_MS = 300


async def table_of(url: str, game_id: str, seats: int, options: dict[str, Any]) -> Table:
    """A started table of people (a one-seat room starts as its seat is taken)."""
    if seats > 1:
        return await started_table(url, game_id, seats, options)
    client = await Client.connect(url, name="solo")
    mirror = await client.create(game_id, 1, options=options)
    await mirror.wait(lambda m: m.view["status"] == "playing")
    return Table([client], [mirror])


def running_deadline(view: dict[str, Any]) -> float:
    """The earliest deadline among the running clocks a view shows."""
    clock = view["clock"]
    assert clock["running"], "no clock runs"
    return float(clock["at"]) + min(clock["remaining_ms"][s] for s in clock["running"]) / 1000


def clock_runs(mirror: RoomMirror) -> bool:
    clock = mirror.view.get("clock")
    return bool(clock and clock["running"]) or mirror.view["status"] == "finished"


async def try_move(client: Client, mirror: RoomMirror) -> None:
    """Act: the first legal move, or (none offered) any move; refusals are fine here."""
    moves = [m for m in mirror.view["moves"] if not m.get("template")]
    move = moves[0] if moves else {"type": "score"}
    try:
        await client.request(
            "move", room=mirror.room, version=mirror.version, mid=uuid.uuid4().hex, move=move
        )
    except ServerError:
        pass


@pytest.mark.parametrize("game_id, seats, options", CASES)
async def test_a_clock_that_runs_out_forfeits_the_seat(
    url: str, game_id: str, seats: int, options: dict[str, Any]
) -> None:
    """``forfeit``: the seat leaves the game, reason ``timeout``: with two players the other
    wins; in Mandala solo Master Yoga; in Mantis with five, each seat in turn drops out while
    play goes on without it, until the last one left wins."""
    clock = {"clock": "turn", "clock_ms": TURN_MS, "on_timeout": "forfeit"}
    table = await table_of(url, game_id, seats, {**options, **clock})
    try:
        mirror = table.mirrors[0]
        await mirror.wait(clock_runs)
        deadline = running_deadline(mirror.view)
        await mirror.wait(lambda m: m.view["status"] == "finished", 20)
        seen = time.time()
        outcome = mirror.view["outcome"]
        assert outcome["reason"] == "timeout"
        assert seen >= deadline, "the clock fired before its deadline"
        left = outcome["left"]
        assert left and not set(left) & set(outcome["winners"])
        if game_id == "mandala" and seats == 1:
            assert outcome["winners"] == []  # Master Yoga's win
        elif seats == 2:
            assert outcome["winners"] == [1 - left[0]]
        else:
            assert len(left) == seats - 1 and len(outcome["winners"]) == 1
            assert mirror.view["state"]["left"] == left
        kinds = [e["type"] for e in mirror.events]
        assert kinds.count("left") == len(left) and "game_over" in kinds
    finally:
        await table.close()


@pytest.mark.parametrize("game_id, seats, options", CASES)
async def test_a_clock_that_runs_out_gives_the_seat_a_stand_in_until_the_player_acts(
    url: str, game_id: str, seats: int, options: dict[str, Any]
) -> None:
    """``bot``: the seat is marked stand-in, the server's bot moves for it, and the player
    takes it back by acting again."""
    clock = {"clock": "turn", "clock_ms": TURN_MS, "on_timeout": "bot"}
    table = await table_of(url, game_id, seats, {**options, **clock})
    try:
        mirror = table.mirrors[0]
        await mirror.wait(clock_runs)

        def stood_in(m: RoomMirror) -> bool:
            return any(s["stand_in"] == "timeout" for s in m.view["seats"])

        await mirror.wait(stood_in, 20)
        seat = next(i for i, s in enumerate(mirror.view["seats"]) if s["stand_in"])
        since = mirror.version
        # The bot plays for the seat: the game goes on without the player.
        await mirror.wait(lambda m: m.version > since, 20)
        assert any(e == {"type": "stand_in", "seat": seat, "reason": "timeout"}
                   for e in mirror.events)
        owner = table.clients[seat]
        await try_move(owner, table.mirrors[seat])
        # (the event, not the mark: a 300 ms clock may run out again right after)
        await table.mirrors[seat].wait(lambda m: {"type": "took_back", "seat": seat} in m.events)
    finally:
        await table.close()


async def test_the_stand_in_change_shows_the_clocks_as_it_found_them(redis_url: str) -> None:
    """The change that gives a timed-out seat its stand-in is the room's last change: its
    view's clock is measured then (``at`` no earlier than the deadline that ran out) and the
    seat's clock no longer runs. (The bot is slow here, so that view stays a while.)"""
    running = await app.start(server_config(redis_url, bot_delay=5.0))
    url = f"ws://127.0.0.1:{running.port}/"
    clock = {"clock": "turn", "clock_ms": TURN_MS, "on_timeout": "bot"}
    table = await started_table(url, "mantis", 2, clock)
    try:
        mirror = table.mirrors[0]
        seat = table.mover()
        deadline = running_deadline(mirror.view)
        await mirror.wait(lambda m: m.view["seats"][seat]["stand_in"] == "timeout", 10)
        shown = mirror.view["clock"]
        assert shown["at"] >= deadline
        assert seat not in shown["running"]
        assert shown["remaining_ms"][seat] == TURN_MS  # a turn clock: the next turn's whole time
    finally:
        await table.close()
        await running.drain()


async def test_a_game_the_stand_ins_finished_changes_no_more(url: str) -> None:
    """Both players let their clocks run out and the stand-ins play the game to its end. The
    finished room shows no stand-in; a late move is refused ``game_over`` at the room's
    current version and takes no seat back; a ``sync`` changes nothing either."""
    clock = {"clock": "turn", "clock_ms": TURN_MS, "on_timeout": "bot", "target": 3}
    table = await started_table(url, "mantis", 2, clock)
    try:
        mirror = table.mirrors[0]
        await mirror.wait(lambda m: any(s["stand_in"] for s in m.view["seats"]), 20)
        late = next(i for i, s in enumerate(mirror.view["seats"]) if s["stand_in"])
        await mirror.wait(lambda m: m.view["status"] == "finished", 30)
        finished = mirror.version
        owner = table.clients[late]
        with pytest.raises(ServerError) as refused:
            await owner.move(mirror.room, {"type": "score"}, version=finished - 1)
        assert refused.value.code == "game_over"
        assert refused.value.reply["version"] == finished
        assert (await owner.sync(mirror.room))["version"] == finished
        assert [s["stand_in"] for s in mirror.view["seats"]] == [None, None]
    finally:
        await table.close()


@pytest.mark.parametrize("game_id, seats, options", CASES)
async def test_resigning_in_every_game(
    url: str, game_id: str, seats: int, options: dict[str, Any]
) -> None:
    table = await table_of(url, game_id, seats, options)
    try:
        mirror = table.mirrors[0]
        reply = await table.clients[0].resign(mirror.room)
        await mirror.wait(lambda m: m.version >= reply["version"])
        assert {"type": "left", "seat": 0, "reason": "resignation"} in mirror.events
        if seats > 2:  # Mantis: the seat drops out and play goes on (Ruling 10)
            assert mirror.view["status"] == "playing"
            assert mirror.view["state"]["left"] == [0]
            assert 0 not in mirror.view["to_act"]
        else:
            outcome = mirror.view["outcome"]
            assert outcome["reason"] == "resignation" and outcome["left"] == [0]
            assert outcome["winners"] == ([] if seats == 1 else [1])
        with pytest.raises(ServerError) as refused:
            await table.clients[0].resign(mirror.room)
        assert refused.value.code in ("game_over", "illegal_move")
    finally:
        await table.close()


async def test_resigning_needs_a_seat_and_a_game(url: str) -> None:
    table = await started_table(url, "mantis", 2)
    watcher = await Client.connect(url, name="w")
    try:
        await watcher.join(table.room, watch=True)
        with pytest.raises(ServerError) as refused:
            await watcher.resign(table.room)
        assert refused.value.code == "not_seated"
        waiting = await table.clients[0].create("mantis", 2)
        with pytest.raises(ServerError) as refused:
            await table.clients[0].resign(waiting.room)
        assert refused.value.code == "wrong_status"
    finally:
        await watcher.close()
        await table.close()


async def test_a_fischer_bank_grows_by_its_increment(url: str) -> None:
    clock = {"clock": "fischer", "clock_ms": 5_000, "increment_ms": 1_000}
    table = await started_table(url, "mantis", 2, clock)
    try:
        mover = table.mover()
        mirror = table.mirrors[mover]
        # A copy: the mirror applies diffs to its view in place.
        before = copy.deepcopy(mirror.view["clock"])
        assert before["running"] == [mover] and before["remaining_ms"] == [5_000, 5_000]
        reply = await table.clients[mover].move(mirror.room, {"type": "score"})
        await mirror.wait(lambda m: m.version >= reply["version"])
        after = mirror.view["clock"]
        # The bank as it was, less the time the move took on the server's clock (both ends
        # are in the views: ``at``), plus the increment.
        used_ms = (after["at"] - before["at"]) * 1000
        assert after["remaining_ms"][mover] == pytest.approx(5_000 - used_ms + 1_000, abs=1)
        other = 1 - mover
        if mirror.view["to_act"] == [other]:
            assert after["running"] == [other] and after["remaining_ms"][other] == 5_000
    finally:
        await table.close()


async def test_an_away_player_gets_a_stand_in_and_coming_back_gives_the_seat_back(
    redis_url: str,
) -> None:
    running = await app.start(server_config(redis_url, away_takeover=0.3))
    url = f"ws://127.0.0.1:{running.port}/"
    table: Table | None = None
    try:
        table = await started_table(url, "mantis", 2)
        mover = table.mover()
        other = 1 - mover
        token = table.clients[mover].token
        await table.clients[mover].close()
        watcher = table.mirrors[other]
        gone = time.time()
        await watcher.wait(lambda m: m.view["seats"][mover]["stand_in"] == "away", 10)
        assert time.time() - gone >= 0.3
        # The stand-in moves for the seat while its player is away.
        await watcher.wait(lambda m: m.view["to_act"] != [mover] or m.version > 3, 10)
        back = await Client.connect(url, token=token)
        try:
            mirror = await back.join(table.room)
            assert mirror.view["seats"][mover]["stand_in"] is None  # at once, in the snapshot
            await watcher.wait(lambda m: m.view["seats"][mover]["stand_in"] is None)
        finally:
            await back.close()
    finally:
        if table is not None:
            await table.close()
        await running.drain()


async def test_a_kill_9_before_the_deadline_neither_resets_the_clock_nor_fires_it_early(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    port = free_port()
    server = ServerProcess(port, redis_url, prefix, "clock-kill")
    await server.start()
    clock = {"clock": "turn", "clock_ms": 4_000, "on_timeout": "forfeit"}
    try:
        table = await started_table(server.url, "mantis", 2, clock)
        deadline = running_deadline(table.mirrors[0].view)
        mover = table.mover()
        for client in table.clients:
            client.reconnect = False
        await table.close()
        # The scenario's own timing: the process dies shortly before the deadline.
        await asyncio.sleep(max(0.0, deadline - 1.5 - time.time()))
        server.kill()
        killed = time.time()
        assert killed < deadline
        await server.start()
        restarted = time.time()

        async def timed_out() -> Any:
            while True:
                _, record = await stored_room(redis_url, prefix, table.room)
                if record.outcome is not None:
                    return record
                await asyncio.sleep(0.05)  # polling Redis for the condition

        record = await asyncio.wait_for(timed_out(), 20)
        assert record.outcome["reason"] == "timeout"
        assert record.outcome["left"] == [mover]
        fired = record.clocks["at"]  # the time the forfeit was made
        assert fired >= deadline, "fired before the stored deadline"
        assert fired <= max(deadline, restarted) + 2.0, "fired late: the clock was reset"
    finally:
        server.terminate()
