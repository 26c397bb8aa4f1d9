"""What a ``presence`` push tells the players beyond who is here, over a real server: the names
of the people watching, and when the server's bot would stand in for an absent player (their
last connection's going plus ``away_takeover``), cleared when they come back."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playhall_client import Client

from .helpers import started_table


async def _presence_where(client: Client, room: str, test: Any) -> dict[str, Any]:
    """The first presence push of ``room`` that passes ``test`` (earlier ones are skipped)."""
    async with asyncio.timeout(10):
        while True:
            message = await client.pushes.get()
            if message.get("t") == "presence" and message["room"] == room and test(message):
                return message


async def test_presence_names_the_watchers(url: str) -> None:
    table = await started_table(url)
    watchers = [await Client.connect(url, name=name) for name in ("zoe", "abe")]
    try:
        for watcher in watchers:
            await watcher.join(table.room, watch=True)
        seen = await _presence_where(table.clients[0], table.room, lambda m: m["watching"] == 2)
        assert seen["watchers"] == ["abe", "zoe"]
        await table.mirrors[0].wait(lambda m: m.watchers == ["abe", "zoe"] and m.watching == 2)
        assert seen["stand_in_at"] == [None, None]
    finally:
        for watcher in watchers:
            await watcher.close()
        await table.close()


async def test_presence_says_when_a_stand_in_would_take_an_absent_players_seat(
    url: str,
) -> None:
    table = await started_table(url)
    try:
        token = table.clients[1].token
        before = time.time()
        await table.clients[1].close()
        gone = await _presence_where(
            table.clients[0], table.room, lambda m: m["stand_in_at"][1] is not None
        )
        assert gone["presence"] == [True, False]
        after = time.time()
        assert gone["stand_in_at"][0] is None
        assert before + 60 <= gone["stand_in_at"][1] <= after + 60  # away_takeover: 60 s
        back = await Client.connect(url, token=token)
        try:
            await back.sync(table.room)
            here = await _presence_where(
                table.clients[0], table.room, lambda m: m["stand_in_at"][1] is None
            )
            assert here["presence"] == [True, True]
            assert here["stand_in_at"] == [None, None]
        finally:
            await back.close()
    finally:
        await table.close()
