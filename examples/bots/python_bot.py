"""A bot that plays any Playhall game from its legal moves, over the protocol (PROTOCOL.md
section 14), with the Python client library ``playhall_client``.

    python python_bot.py ws://127.0.0.1:8765/ --game mantis   # a new room, server bots opposite
    python python_bot.py ws://127.0.0.1:8765/ --room ROOM      # a free seat of a waiting room

It knows no rules: whenever the view says it is its turn, it sends one of the moves the view
lists (not a template, which needs a payload, nor a resignation). Prints the outcome as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

from playhall_client import Client, RoomMirror, ServerError


def newer_than(version: int) -> Callable[[RoomMirror], bool]:
    return lambda m: m.version > version


async def play(url: str, game: str | None, room: str | None, seats: int = 2) -> dict[str, Any]:
    client = await Client.connect(url, name="python-bot")
    try:
        if room is None:  # a new room; the server's bots take the other seats
            mirror = await client.create(str(game), seats)
            for seat in range(1, seats):
                await client.add_bot(mirror.room, seat)
        else:
            mirror = await client.join(room)
        await client.ready(mirror.room)
        while True:
            await mirror.wait(lambda m: m.view["status"] == "finished" or m.my_turn, 600)
            if mirror.view["status"] == "finished":
                return dict(mirror.view["outcome"])
            moves = [m for m in mirror.view["moves"] if not m.get("template")]
            move = random.choice([m for m in moves if m["type"] != "resign"] or moves)
            version = mirror.version
            try:
                await client.move(mirror.room, move, version=version)
            except ServerError as exc:
                if exc.code != "stale":  # stale: the room moved on first (an automatic step)
                    raise
            await mirror.wait(newer_than(version), 600)
    finally:
        await client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the server's websocket address")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--game", help="create a room of this game")
    where.add_argument("--room", help="join this room")
    parser.add_argument("--seats", type=int, default=2, help="seats of the new room (default 2)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(play(args.url, args.game, args.room, args.seats))))
