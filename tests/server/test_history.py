"""``history`` over a real server and Redis: the events of a room's last versions, read from its
log, as the asker may see them (a seat's own hidden events to that seat only, never to the other
seat or a spectator); the same events the asker was sent live; bounded by ``limit``; and a
private room's history is no outsider's."""

from __future__ import annotations

import pytest

from playhall_client import Client, ServerError

from .helpers import at_least, started_table


async def test_history_repeats_what_was_sent_live_and_survives_a_new_connection(
    url: str,
) -> None:
    table = await started_table(url)
    try:
        for _ in range(4):
            seat = table.mover()
            mirror = table.mirrors[seat]
            await mirror.wait(lambda m: m.version >= table.mirrors[0].version)
            reply = await table.clients[seat].move(table.room, mirror.view["moves"][0])
            await table.mirrors[0].wait(at_least(reply["version"]))
        seen_live = [e for e in table.mirrors[0].events]
        # A new connection (a reloaded page) has no memory of them: the server gives them back.
        fresh = await Client.connect(url, token=table.clients[0].token)
        try:
            await fresh.sync(table.room)
            log = await fresh.history(table.room)
            told = [event for line in log for event in line["events"]]
            assert told[-len(seen_live):] == seen_live[-len(told):]
            assert any(e["type"] == "started" for e in told)
            versions = [line["version"] for line in log]
            assert versions == sorted(versions) and versions[-1] == table.mirrors[0].version
            assert len(await fresh.history(table.room, limit=2)) <= 2
        finally:
            await fresh.close()
    finally:
        await table.close()


async def test_a_seats_hidden_events_go_to_that_seat_only(url: str) -> None:
    table = await started_table(url, game="card_battle")
    watcher = await Client.connect(url, name="watcher")
    try:
        await watcher.join(table.room, watch=True)
        mirror = table.mirrors[0]
        pick = next(m for m in mirror.view["moves"] if m["type"] == "pick_deck")
        await table.clients[0].move(table.room, pick)

        def kinds(log: list[dict[str, object]]) -> list[str]:
            return [e["type"] for line in log for e in line["events"]]  # type: ignore[attr-defined]

        own = await table.clients[0].history(table.room)
        other = await table.clients[1].history(table.room)
        spectator = await watcher.history(table.room)
        assert "deck_accepted" in kinds(own)
        assert "deck_submitted" in kinds(other) and "deck_accepted" not in kinds(other)
        assert "deck_submitted" in kinds(spectator) and "deck_accepted" not in kinds(spectator)
        assert all("visible_to" not in e for line in own for e in line["events"])
    finally:
        await watcher.close()
        await table.close()


async def test_a_private_rooms_history_is_no_outsiders(url: str) -> None:
    host = await Client.connect(url, name="host")
    outsider = await Client.connect(url, name="outsider")
    try:
        room = await host.create("mantis", 2, private=True)
        await host.ready(room.room)
        assert [e["type"] for line in await host.history(room.room) for e in line["events"]] == [
            "ready"
        ]
        with pytest.raises(ServerError) as refused:
            await outsider.history(room.room)
        assert refused.value.code == "no_such_room"
        await outsider.join(code=room.view["code"], watch=True)
        assert await outsider.history(room.room)  # a spectator who came with the code may
    finally:
        await host.close()
        await outsider.close()
