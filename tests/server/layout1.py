"""A Redis as the last release left it (key layout 1, ``playhall.store.layout``), kept as
``data/layout1.json`` for ``test_layout_migration.py``: every key under one prefix (type,
time to live, value), the players' tokens and what each room is.

It was made by driving that release's own server process (git ``455a6d4``) with the client
library, ``python -m tests.server.layout1 <a checkout of 455a6d4>`` (:func:`make`): rooms in
every state that release writes (waiting, public with chat and private with a join code;
playing, between people and against a bot whose turn it is, so in the active set; finished,
its results written, with chat after the end; a quick-play table waiting for its bots), then
every key read while the process runs. Its leases and fleet registry entries are left out:
that is the Redis a lease time after the process stopped (a crash; a clean stop also takes
its rooms off the lobby, which this keeps), the earliest a new release can start on it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from . import redis_replies as replies

DATA = Path(__file__).parent / "data" / "layout1.json"

#: The prefix the keys were written under (replaced by each test's own).
PREFIX = "old:"


def _b(value: object) -> str:
    return base64.b64encode(replies.raw(value)).decode()


def _u(text: str) -> bytes:
    return base64.b64decode(text)


async def snapshot(client: aioredis.Redis, prefix: str, leave_out: str) -> dict[str, Any]:
    """Every key under ``prefix`` whose name (after it) does not match ``leave_out``."""
    found: dict[str, Any] = {}
    async for raw in client.scan_iter(match=prefix + "*", count=1000):
        name = replies.raw(raw).decode()[len(prefix) :]
        if re.match(leave_out, name):
            continue
        kind = replies.raw(await client.type(raw)).decode()
        value: Any
        if kind == "string":
            value = _b(await client.get(raw))
        elif kind == "hash":
            value = {_b(k): _b(v) for k, v in (await client.hgetall(raw)).items()}
        elif kind == "list":
            value = [_b(v) for v in await client.lrange(raw, 0, -1)]
        elif kind == "set":
            value = sorted(_b(v) for v in await client.smembers(raw))
        elif kind == "zset":
            scored: list[Any] = await client.zrange(raw, 0, -1, withscores=True)
            value = [[_b(m), s] for m, s in scored]
        elif kind == "stream":
            value = [
                [i.decode(), {_b(k): _b(v) for k, v in fields.items()}]
                for i, fields in replies.stream_entries(await client.xrange(raw))
            ]
        else:
            raise ValueError(f"{name}: a {kind} (the last release writes none)")
        found[name] = {"type": kind, "pttl": await client.pttl(raw), "value": value}
    return found


async def restore(client: aioredis.Redis, keys: dict[str, Any], prefix: str) -> None:
    """Write ``keys`` (a :func:`snapshot`) under ``prefix``, with their times to live."""
    for name, key in keys.items():
        full, value, kind = prefix + name, key["value"], key["type"]
        if kind == "string":
            await client.set(full, _u(value))
        elif kind == "hash":
            await client.hset(full, mapping={_u(k): _u(v) for k, v in value.items()})
        elif kind == "list":
            await client.rpush(full, *(_u(v) for v in value))
        elif kind == "set":
            await client.sadd(full, *(_u(v) for v in value))
        elif kind == "zset":
            await client.zadd(full, {_u(m): s for m, s in value})
        elif kind == "stream":
            for entry, fields in value:
                await client.xadd(full, {_u(k): _u(v) for k, v in fields.items()}, id=entry)
        if key["pttl"] > 0:
            await client.pexpire(full, key["pttl"])


async def make(old_checkout: Path) -> None:
    """Run the last release's server from ``old_checkout`` on a private Redis, drive it into
    every state, and write :data:`DATA`."""
    from playhall.store.embedded import EmbeddedRedis
    from playhall_client import Client

    from .helpers import at_a_bots_turn, newer_than
    from .process import ServerProcess, free_port

    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp), port=free_port())
        redis.start()
        server = ServerProcess(free_port(), redis.url, PREFIX, "last-release",
                               ["--bot-delay", "3600"], log_path=Path(tmp) / "server.log")
        server.env["PYTHONPATH"] = os.pathsep.join(  # its code, not this checkout's
            str(old_checkout / part) for part in ("server", "protocol", "clients")
        )
        await server.start()
        client = aioredis.Redis.from_url(redis.url)
        try:
            people = {name: await Client.connect(server.url, name=name)
                      for name in ("alice", "bob", "carol", "dave")}
            alice, bob, carol, dave = people.values()
            rooms: dict[str, Any] = {}
            waiting = await alice.create("mantis", 2)
            await alice.chat(waiting.room, "anyone?")
            rooms["waiting"] = waiting.room
            private = await bob.create("mantis", 2, private=True)
            rooms["private"], rooms["code"] = private.room, private.view["code"]
            playing = await alice.create("mantis", 2)
            await bob.join(playing.room)
            await alice.ready(playing.room)
            await bob.ready(playing.room)
            await playing.wait(lambda m: m.view["status"] == "playing")
            bobs = bob.rooms[playing.room]
            for _ in range(2):  # a move each, whoever's turn it is
                async with asyncio.timeout(10):
                    while not (playing.my_turn or bobs.my_turn):
                        await asyncio.sleep(0.01)
                mover, mirror = (alice, playing) if playing.my_turn else (bob, bobs)
                version = mirror.version
                await mover.move(playing.room, mirror.view["moves"][0])
                await playing.wait(newer_than(version))
                await bobs.wait(newer_than(version))
            await bob.chat(playing.room, "good luck")
            rooms["playing"] = playing.room
            rooms["bot"] = (await at_a_bots_turn(carol)).room
            done = await alice.create("mantis", 2)
            await bob.join(done.room)
            await alice.ready(done.room)
            await bob.ready(done.room)
            await done.wait(lambda m: m.view["status"] == "playing")
            await alice.resign(done.room)
            await done.wait(lambda m: m.view["status"] == "finished")
            await alice.chat(done.room, "gg")
            rooms["finished"] = done.room
            seek = await dave.seek("mantis", (2, 2), bots_after=600)
            rooms["seek"] = seek.room
            async with asyncio.timeout(30):  # the results of the finished game, written
                while not await client.exists(f"{PREFIX}game:{done.room}"):
                    await asyncio.sleep(0.05)
            keys = await snapshot(client, PREFIX, r"lease:|fleet($|:)")
            tokens = {name: person.token for name, person in people.items()}
            for person in people.values():
                await person.close()
        except BaseException:
            print((Path(tmp) / "server.log").read_text(), file=sys.stderr)
            raise
        finally:
            await client.aclose()
            server.terminate()
            redis.stop()
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(
        {"release": "455a6d4", "prefix": PREFIX, "rooms": rooms, "tokens": tokens,
         "keys": keys}, indent=1, sort_keys=True,
    ) + "\n")


if __name__ == "__main__":
    asyncio.run(make(Path(sys.argv[1])))
