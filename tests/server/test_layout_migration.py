"""A Redis written by the last release (key layout 1: ``data/layout1.json``, made by that
release's own server, see ``layout1.py``) is moved to layout 2 when this release starts on
it, once, and every room goes on: the lobby lists them, people join the waiting ones (one by
its join code), the game in play takes moves and chat, the game against a bot is picked up by
the restore pass and the bot moves, the finished game is in its players' histories. A process
of the last release still alive keeps the new one from starting, saying why. Real server
processes, real Redis, real websockets."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from playhall.store.keys import Keys
from playhall.store.layout import move_to_current, new_name
from playhall_client import Client

from .layout1 import DATA, restore
from .process import ServerProcess, free_port

#: The fixture's rooms were left alone long before any run: with the expiry checks on, the
#: waiting ones would be closed at once (as they should), which is not what this tests.
SETTINGS = ["--waiting-ttl", "0", "--abandoned-ttl", "0"]


@pytest.fixture
def last_release() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text())
    return data


async def _restored(redis_url: str, data: dict[str, Any]) -> tuple[aioredis.Redis, str]:
    prefix = f"m{uuid.uuid4().hex[:8]}:"
    admin = aioredis.Redis.from_url(redis_url)
    await restore(admin, data["keys"], prefix)
    return admin, prefix


async def _names(admin: aioredis.Redis, prefix: str) -> set[str]:
    return {k.decode()[len(prefix) :] async for k in admin.scan_iter(match=prefix + "*")}


async def test_the_last_releases_rooms_are_moved_to_layout_2_and_go_on(
    redis_url: str, tmp_path: Path, last_release: dict[str, Any]
) -> None:
    admin, prefix = await _restored(redis_url, last_release)
    keys, rooms, tokens = Keys(prefix), last_release["rooms"], last_release["tokens"]
    old = set(last_release["keys"])
    moved = {name: new_name(keys, prefix + name) for name in old}
    assert {name for name, new in moved.items() if new is None} >= {"active", "expiry"}
    assert len([new for new in moved.values() if new is not None]) > 20
    server = ServerProcess(free_port(), redis_url, prefix, f"{prefix}new",
                           [*SETTINGS, "--log-level", "info"], log_path=tmp_path / "new.log")
    await server.start()
    people: list[Client] = []
    try:
        assert await admin.get(keys.layout) == b"2"
        names = await _names(admin, prefix)
        for name, new in moved.items():
            # Gone from its old name, there under its new one (the quick-play pool's table may
            # have been started by its bots already, which empties the pool: see below).
            if new is not None:
                assert name not in names, name
                assert new[len(prefix) :] in names or name.startswith("seek:"), name
        told = [line["keys"] for line in server.log_lines() if line["event"] == "key_layout_moved"]
        assert told == [len([new for new in moved.values() if new is not None])]

        async def person(name: str, token: str | None = None) -> Client:
            client = await Client.connect(server.url, name=name, token=token)
            people.append(client)
            return client

        alice, bob, carol = [await person(n, tokens[n]) for n in ("alice", "bob", "carol")]
        # Who they are and which rooms they sit in, as the last release knew them.
        assert {rooms["waiting"], rooms["playing"], rooms["finished"]} <= set(
            alice.welcome["rooms"])
        assert rooms["private"] in bob.welcome["rooms"]
        # The lobby as the last release listed it.
        listed = {r["room"] for r in await alice.list_rooms("mantis")}
        assert {rooms["waiting"], rooms["playing"], rooms["bot"]} <= listed
        assert rooms["private"] not in listed
        # Newcomers take the waiting rooms' seats, one by its join code.
        erin, frank = await person("erin"), await person("frank")
        waiting = await erin.join(rooms["waiting"])
        assert waiting.chat and waiting.chat[-1]["text"] == "anyone?"
        assert erin.player in [s.get("player") for s in waiting.view["seats"]]
        private = await frank.join(code=rooms["code"])
        assert private.room == rooms["private"]
        # The game in play takes the next move and a chat line, from whoever's turn it is.
        playing = {c: await c.join(rooms["playing"]) for c in (alice, bob)}
        await asyncio.gather(*(m.wait(lambda m: m.view["status"] == "playing")
                               for m in playing.values()))
        assert playing[alice].chat[-1]["text"] == "good luck"
        mover = next(c for c, m in playing.items() if m.my_turn)
        before = playing[mover].version
        await mover.move(rooms["playing"], playing[mover].view["moves"][0])
        await playing[alice].wait(lambda m: m.version > before)
        await bob.chat(rooms["playing"], "still here")
        await playing[alice].wait(lambda m: m.chat[-1]["text"] == "still here")
        # The game against a bot was loaded by the restore pass: its bot moves, carol's turn.
        bot = await carol.join(rooms["bot"])
        await bot.wait(lambda m: m.my_turn, timeout=20)
        # The finished game is in its players' histories, with its counts.
        played = await alice.games_played()
        assert rooms["finished"] in [g["room"] for g in played["games"]]
        assert (await alice.request("profile"))["games"]["mantis"]["l"] == 1
        # The quick-play table whose bots were due (long since) got them: its due entry and
        # table were found under their new names; and it has left quick play.
        dave = await person("dave", tokens["dave"])
        table = await dave.join(rooms["seek"])
        await table.wait(lambda m: m.view["status"] == "playing", timeout=20)
        assert any(seat.get("bot") for seat in table.view["seats"])
        pool = next(n[len("seek:") :] for n in old if n.startswith("seek:") and n != "seek:due")
        assert not await admin.exists(keys.seek_table_key(pool, rooms["seek"]))
        assert not await admin.exists(keys.seeker_key(dave.player))
    finally:
        for client in people:
            await client.close()
        await admin.aclose()
        await asyncio.to_thread(server.terminate)
    assert not [line for line in server.log_lines() if "exception" in line]


async def test_a_process_of_the_last_release_still_alive_keeps_the_new_one_from_starting(
    redis_url: str, last_release: dict[str, Any]
) -> None:
    admin, prefix = await _restored(redis_url, last_release)
    try:
        # Its entry in the last release's fleet registry, as that release's heartbeat writes it.
        entry = {"draining": False, "instance": "old-1", "started": 1.0, "version": "0.1.0"}
        await admin.set(f"{prefix}fleet:old-1", json.dumps(entry), px=60_000)
        await admin.sadd(f"{prefix}fleet", "old-1")
        server = ServerProcess(free_port(), redis_url, prefix, f"{prefix}new", SETTINGS)
        done = await asyncio.to_thread(
            subprocess.run, server.args, env=server.env, capture_output=True, timeout=60
        )
        assert done.returncode == 2
        assert "older Playhall release are running on this Redis (old-1)" in done.stderr.decode()
        # Nothing was moved, and no lock is left behind.
        assert await _names(admin, prefix) == set(last_release["keys"]) | {"fleet", "fleet:old-1"}
    finally:
        await admin.aclose()


async def test_processes_starting_together_move_the_keys_once(
    redis_url: str, last_release: dict[str, Any]
) -> None:
    admin, prefix = await _restored(redis_url, last_release)
    keys = Keys(prefix)
    try:
        counts = await asyncio.gather(
            *(move_to_current(admin, keys, f"p{i}") for i in range(3))
        )
        movable = [n for n in last_release["keys"] if new_name(keys, prefix + n) is not None]
        assert sorted(counts) == [0, 0, len(movable)]
        assert await admin.get(keys.layout) == b"2"
        assert not await admin.exists(f"{keys.layout}:lock")
        assert await move_to_current(admin, keys, "later") == 0  # once
    finally:
        await admin.aclose()
