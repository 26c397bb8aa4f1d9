"""Lobby and room life: games on offer, listings that update live, private rooms and join
codes, seats, ready and start, bots, chat, presence, rematch."""

from __future__ import annotations

import asyncio

import pytest

from playhall.catalog import all_games
from playhall_client import Client, ServerError

from .helpers import (
    finished_against_a_bot,
    newer_than,
    next_push,
    play_to_the_end,
    started_table,
)


async def test_games_lists_every_game_with_seats_and_options(url: str) -> None:
    client = await Client.connect(url)
    try:
        games = {g["id"]: g for g in await client.games()}
        assert set(games) == set(all_games()) and "mantis" in games
        mantis = games["mantis"]
        assert (mantis["min_seats"], mantis["max_seats"]) == (2, 6)
        assert all({"name", "default", "kind", "help"} <= set(o) for o in mantis["options"])
    finally:
        await client.close()


async def test_lobby_lists_public_rooms_and_updates_watchers_live(url: str) -> None:
    watcher = await Client.connect(url, name="watcher")
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        assert await watcher.watch_lobby("mantis") == []
        room = await alice.create("mantis", 3)
        update = await next_push(watcher, "lobby")
        assert update["rooms"][0]["room"] == room.room and update["rooms"][0]["taken"] == 1
        await bob.join(room.room)
        update = await next_push(watcher, "lobby")
        assert update["rooms"][0]["taken"] == 2 and update["rooms"][0]["players"][:2] == [
            "alice",
            "bob",
        ]
        listed = await watcher.list_rooms("mantis")
        assert [r["room"] for r in listed] == [room.room]
        assert await watcher.list_rooms("mandragora") == []
        private = await alice.create("mantis", 2, private=True)
        assert private.view["code"] and private.view["private"] is True
        assert [r["room"] for r in await watcher.list_rooms()] == [room.room]  # private: unlisted
        await bob.leave(room.room)
        update = await next_push(watcher, "lobby")
        assert update["rooms"][0]["taken"] == 1
    finally:
        for c in (watcher, alice, bob):
            await c.close()


async def test_private_rooms_need_their_join_code(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        room = await alice.create("mantis", 2, private=True)
        with pytest.raises(ServerError) as err:
            await bob.join(room.room)
        assert err.value.code == "no_such_room"  # without its code, no such room
        with pytest.raises(ServerError) as err:
            await bob.join(code="NOPE00")
        assert err.value.code == "bad_code"
        mirror = await bob.join(code=room.view["code"])
        assert mirror.room == room.room and mirror.seat == 1
    finally:
        await alice.close()
        await bob.close()


async def test_seats_ready_and_start_rules(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        room = await alice.create("mantis", 3)
        await bob.join(room.room, seat=2)
        with pytest.raises(ServerError) as err:
            await bob.join(room.room, seat=0)
        assert err.value.code == "seat_taken"
        with pytest.raises(ServerError) as err:
            await alice.start(room.room)
        assert err.value.code == "not_ready" and "[1]" in err.value.reason
        with pytest.raises(ServerError) as err:
            await bob.start(room.room)
        assert err.value.code == "not_creator"
        with pytest.raises(ServerError) as err:
            await bob.add_bot(room.room, 2)
        assert err.value.code == "seat_taken"
        await bob.add_bot(room.room, 1)
        await room.wait(lambda m: m.presence == [True, True, True])  # a bot is always here
        await alice.ready(room.room)
        await room.wait(lambda m: m.view["seats"][1]["bot"] and m.view["seats"][0]["ready"])
        assert room.view["status"] == "waiting"
        await alice.start(room.room)  # the creator may start with everyone seated
        await room.wait(lambda m: m.view["status"] == "playing")
        with pytest.raises(ServerError) as err:
            await bob.ready(room.room)
        assert err.value.code == "wrong_status"
        with pytest.raises(ServerError) as err:
            await bob.join(room.room, seat=1)
        assert err.value.code == "seat_taken"
    finally:
        await alice.close()
        await bob.close()


async def test_a_person_plays_a_whole_game_against_server_bots(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 4)
        for seat in (1, 2, 3):
            await alice.add_bot(room.room, seat)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        assert room.view["outcome"]["reason"]
        assert {e["type"] for e in room.events} >= {"started"}
    finally:
        await alice.close()


async def test_chat_reaches_everyone_in_the_room_and_is_kept(url: str) -> None:
    table = await started_table(url)
    late = await Client.connect(url, name="late")
    try:
        a, b = table.clients
        await a.chat(table.room, "good luck!")
        line = await next_push(b, "chat")
        assert (line["text"], line["name"], line["seat"]) == ("good luck!", "p0", 0)
        watched = await late.join(table.room, watch=True)
        assert [c["text"] for c in watched.chat] == ["good luck!"]  # the history, on join
        await a.chat(table.room, "thanks")
        await watched.wait(lambda m: [c["text"] for c in m.chat] == ["good luck!", "thanks"])
        outsider = await Client.connect(url, name="outsider")
        with pytest.raises(ServerError) as err:
            await outsider.chat(table.room, "hi")
        assert err.value.code == "not_in_room"
        await outsider.close()
    finally:
        await table.close()
        await late.close()


async def test_hello_lists_the_rooms_a_player_sits_in_and_forgets_those_left(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    try:
        first = await alice.create("mantis", 2)
        await bob.join(first.room)
        second = await bob.create("mantis", 2)
        again = await Client.connect(url, token=bob.token)
        assert sorted(again.welcome["rooms"]) == sorted([first.room, second.room])
        await again.close()
        await bob.leave(first.room)
        again = await Client.connect(url, token=bob.token)
        assert again.welcome["rooms"] == [second.room]
        await again.close()
    finally:
        await alice.close()
        await bob.close()


async def test_presence_shows_who_is_connected(url: str) -> None:
    table = await started_table(url)
    try:
        a, b = table.clients
        await table.mirrors[0].wait(lambda m: m.presence == [True, True])
        await b.close()
        await table.mirrors[0].wait(lambda m: m.presence == [True, False])
    finally:
        await table.clients[0].close()


async def test_rematch_reseats_the_same_players(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    try:
        room = await finished_against_a_bot(alice)
        new_id = await alice.rematch(room.room)
        assert await alice.rematch(room.room) == new_id  # asking twice gives the same room
        await room.wait(lambda m: m.view["rematch"] == new_id)
        again = await alice.join(new_id)
        assert again.seat == 0 and again.view["seats"][1]["bot"]
        assert again.view["rematch_of"] == room.room
        await alice.ready(new_id)
        await again.wait(lambda m: m.view["status"] == "playing")
    finally:
        await alice.close()


async def test_full_inbox_is_refused_with_overloaded(url: str, server) -> None:  # type: ignore[no-untyped-def]
    from playhall.rooms.inbox import Command
    from playhall.rooms.table import RoomError

    table = await started_table(url)
    try:
        room = server.rooms.rooms[table.room]
        version = room.record.version
        # Fill the inbox and submit with no await in between, so the actor cannot drain it.
        while room.inbox.put(Command("_bot_turn", None, {"seat": 0})):
            pass
        with pytest.raises(RoomError) as err:
            await room.ask("sync", None, {})
        assert err.value.code == "overloaded" and "retry" in err.value.reason
        # The actor works through its backlog and the room serves again, unchanged.
        reply = await table.clients[0].request("sync", room=table.room)
        assert reply["version"] == version
    finally:
        await table.close()


async def test_a_private_rooms_rematch_is_private_with_its_own_code(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    stranger = await Client.connect(url, name="stranger")
    try:
        room = await alice.create("mantis", 2, private=True)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await play_to_the_end(alice, room)
        new_id = await alice.rematch(room.room)
        again = await alice.join(new_id)
        assert again.view["private"] and again.view["code"] not in (None, room.view["code"])
        with pytest.raises(ServerError) as err:
            await stranger.join(new_id, watch=True)
        assert err.value.code == "no_such_room"
    finally:
        await alice.close()
        await stranger.close()


async def test_moves_do_not_touch_the_lobby(url: str) -> None:
    """A playing room's summary does not change with its moves, so lobby watchers hear nothing
    of them (at thousands of moves a second they would otherwise drown)."""
    watcher = await Client.connect(url, name="watcher")
    table = await started_table(url)
    try:
        await watcher.watch_lobby()
        for _ in range(6):
            seat = table.mover()
            before = table.mirrors[seat].version
            await table.clients[seat].move(table.room, table.mirrors[seat].view["moves"][0])
            await table.mirrors[0].wait(newer_than(before))
        marker = await table.clients[0].create("mantis", 2)  # a real lobby change, after them
        update = await next_push(watcher, "lobby")
        assert update["rooms"][0]["room"] == marker.room  # nothing came before it
    finally:
        await table.close()
        await watcher.close()


async def test_a_failing_reply_router_leaves_the_room_serving(url: str, server) -> None:  # type: ignore[no-untyped-def]
    from playhall.rooms.handle import ReplyTo

    class Broken:
        delivered = 0

        def deliver(
            self, to: object, kind: str, room: str, result: object, error: object
        ) -> None:
            Broken.delivered += 1
            raise RuntimeError("a bug in the router")

    alice = await Client.connect(url, name="alice")
    room, working = None, None
    try:
        mirror = await alice.create("mantis", 2)
        room = server.rooms.rooms[mirror.room]
        working, room.replies = room.replies, Broken()
        session = next(s for s in server.endpoint.sessions if s.player == alice.player)
        room.submit("chat", session, {"text": "first"}, ReplyTo(session.id, 10**6))
        # The room's task survived the router's failure: the next command is handled as usual.
        await asyncio.wait_for(alice.chat(mirror.room, "second"), 10)
        assert Broken.delivered == 1
        assert room._task is not None and not room._task.done()
    finally:
        if room is not None and working is not None:
            room.replies = working
        await alice.close()
