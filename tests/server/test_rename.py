"""``rename``: a player's new name reaches every viewer of the rooms they sit in (a new version
with a ``renamed`` event), over a real server; a name given to ``hello`` reaches a room when its
player comes back to it; bad names and too many renames are refused and change nothing."""

from __future__ import annotations

import pytest

from playhall_client import Client, ServerError

from .helpers import finished_against_a_bot, started_table


async def test_a_rename_reaches_players_and_spectators(url: str) -> None:
    table = await started_table(url)
    watcher = await Client.connect(url, name="watcher")
    try:
        seen = await watcher.join(table.room, watch=True)
        before = table.mirrors[1].version
        reply = await table.clients[0].request("rename", name="  Ada Lovelace ")
        assert reply["name"] == "Ada Lovelace" and reply["rooms"] == [table.room]
        for mirror in (table.mirrors[1], seen, table.mirrors[0]):
            await mirror.wait(lambda m: m.view["seats"][0]["name"] == "Ada Lovelace")
        assert table.mirrors[1].version == before + 1
        assert {"type": "renamed", "seat": 0, "name": "Ada Lovelace"} in seen.events
        # The player's chat lines carry the new name too.
        await table.clients[0].chat(table.room, "hi")
        await seen.wait(lambda m: bool(m.chat) and m.chat[-1]["name"] == "Ada Lovelace")
        # A hello with the token and no name keeps it.
        again = await Client.connect(url, token=table.clients[0].token)
        assert again.name == "Ada Lovelace"
        await again.close()
    finally:
        await watcher.close()
        await table.close()


async def test_a_reconnect_does_not_undo_a_rename_made_on_another_connection(url: str) -> None:
    """Two connections of one player: one renames; the other's connection drops and comes
    back. Its hello must not rename the player back, nor its sync the seat."""
    table = await started_table(url)
    other = await Client.connect(url, token=table.clients[0].token, name="p0")
    try:
        await other.sync(table.room)
        await table.clients[0].rename("Zed")
        await table.mirrors[1].wait(lambda m: m.view["seats"][0]["name"] == "Zed")
        assert other._ws is not None
        reconnects = other.reconnects
        other._ws.transport.abort()
        while other.reconnects == reconnects:
            await other.request("ping")  # waits until the client is back online
        await other.sync(table.room)
        assert table.mirrors[1].view["seats"][0]["name"] == "Zed"
        assert other.name == "Zed"
    finally:
        await other.close()
        await table.close()


async def test_a_waiting_room_shows_the_new_name(url: str) -> None:
    host = await Client.connect(url, name="host")
    guest = await Client.connect(url, name="Player-abcd")
    try:
        room = await host.create("mantis", 2)
        await guest.join(room.room)
        assert await guest.rename(" Bea") == "Bea" and guest.name == "Bea"
        await room.wait(lambda m: m.view["seats"][1]["name"] == "Bea")
        assert room.view["status"] == "waiting"
    finally:
        await host.close()
        await guest.close()


async def test_a_name_from_hello_reaches_the_room_at_the_next_sync(url: str) -> None:
    table = await started_table(url)
    try:
        token = table.clients[1].token
        await table.clients[1].close()
        back = await Client.connect(url, token=token, name="Cy")
        try:
            await back.sync(table.room)
            await table.mirrors[0].wait(lambda m: m.view["seats"][1]["name"] == "Cy")
        finally:
            await back.close()
    finally:
        await table.close()


async def test_a_finished_room_keeps_the_old_name(url: str) -> None:
    client = await Client.connect(url, name="Dee")
    try:
        mirror = await finished_against_a_bot(client)
        version = mirror.version
        reply = await client.request("rename", name="Eve")
        assert reply["rooms"] == [mirror.room]  # asked, and the room said no change
        assert (await client.sync(mirror.room))["version"] == version
        assert mirror.view["seats"][0]["name"] == "Dee"
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("name", "code"), [("   ", "bad_message"), ("x" * 33, "bad_message"), ("", "bad_message")]
)
async def test_bad_names_are_refused(url: str, name: str, code: str) -> None:
    client = await Client.connect(url, name="Fay")
    try:
        with pytest.raises(ServerError) as refused:
            await client.request("rename", name=name)
        assert refused.value.code == code
        again = await Client.connect(url, token=client.token)
        assert again.name == "Fay"
        await again.close()
    finally:
        await client.close()


async def test_renames_past_the_cap_are_refused_with_retry_after(url: str) -> None:
    client = await Client.connect(url, name="Gus")
    try:
        for i in range(10):
            await client.request("rename", name=f"Gus {i}")
        with pytest.raises(ServerError) as refused:
            await client.request("rename", name="Gus again")
        assert refused.value.code == "rate_limited"
        assert 0 < refused.value.reply["retry_after"] <= 60
        again = await Client.connect(url, token=client.token)
        assert again.name == "Gus 9"
        await again.close()
    finally:
        await client.close()
