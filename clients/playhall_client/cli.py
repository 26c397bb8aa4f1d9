"""``playhall play`` (the terminal client), ``playhall bot`` (a client-side bot) and ``playhall
export`` (a finished room's game record as JSON).

The server's ``playhall`` command imports this module when it exists, calls
:func:`add_parsers` with its subcommand table, and :func:`run` for the commands added here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from playhall_client.client import ConnectionLost, ServerError
from playhall_client.terminal import DEFAULT_URL, default_token_file, play, stdin_reader


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("play", help="play from the terminal",
                       description="A line-based terminal client: lobby, rooms, moves, chat.")
    p.add_argument("--url", default=DEFAULT_URL, help=f"server address (default {DEFAULT_URL})")
    p.add_argument("--name", help="your name at the table")
    p.add_argument("--token-file", type=Path,
                   help="where your player token is kept, so a restarted client gets its "
                        "seats back (default ~/.config/playhall/token-HOST-PORT)")

    b = sub.add_parser("bot", help="run a client-side bot that plays random legal moves",
                       description="A bot over the protocol: joins or creates a room, readies, "
                                   "and plays random legal moves (it knows no rules).")
    b.add_argument("--url", default=DEFAULT_URL, help=f"server address (default {DEFAULT_URL})")
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("--room", help="join this room id")
    where.add_argument("--code", help="join the private room with this join code")
    where.add_argument("--create", metavar="GAME", help="create a room of this game")
    b.add_argument("--seats", type=int, default=2, help="seats of a created room (default 2)")
    b.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="an option of a created room (repeatable); VALUE is read as JSON "
                        "when it parses (12, true), else as text")
    b.add_argument("--fill", action="store_true",
                   help="fill the other seats of a created room with server bots")
    b.add_argument("--games", type=int, default=1,
                   help="games to play: the first, then rematches (default 1)")
    b.add_argument("--name", help="the bot's name")
    b.add_argument("--token-file", type=Path, help="reuse the player token saved in this file")
    b.add_argument("--seed", type=int, help="seed for the bot's random choices")

    e = sub.add_parser("export", help="write a finished room's game record as JSON",
                       description="Fetch a finished room's game record (the 'record' request) "
                                   "and write it to standard output as JSON.")
    e.add_argument("room", help="the room id")
    e.add_argument("--url", default=DEFAULT_URL, help=f"server address (default {DEFAULT_URL})")
    e.add_argument("--code", help="the join code of a private room")


def run(args: argparse.Namespace) -> int:
    try:
        if args.command == "play":
            return asyncio.run(_play(args))
        if args.command == "bot":
            return asyncio.run(_bot(args))
        if args.command == "export":
            return asyncio.run(_export(args))
    except KeyboardInterrupt:
        return 130
    print(f"unknown command {args.command!r}", file=sys.stderr)
    return 2


def _write(text: str) -> None:
    print(text, flush=True)


async def _play(args: argparse.Namespace) -> int:
    token_file = args.token_file or default_token_file(args.url)
    return await play(args.url, name=args.name, token_file=token_file, read=stdin_reader(),
                      write=_write)


async def _export(args: argparse.Namespace) -> int:
    from playhall_client.client import Client

    try:
        client = await Client.connect(args.url, reconnect=False)
    except (OSError, TimeoutError, ConnectionLost, ServerError) as exc:
        print(f"cannot connect to {args.url}: {exc}", file=sys.stderr)
        return 1
    try:
        if args.code is not None:  # a private room shows itself only to those who join it
            await client.request("join", code=args.code, watch=True)
        record = await client.record(args.room)
    except (TimeoutError, OSError, ConnectionLost, ServerError) as exc:
        print(f"no record of {args.room}: {exc}", file=sys.stderr)
        return 1
    finally:
        await client.close()
    json.dump(record, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


async def _bot(args: argparse.Namespace) -> int:
    from playhall_client.bots import run_bot

    if args.games < 1:
        print("--games must be at least 1", file=sys.stderr)
        return 2
    options: dict[str, Any] = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep or not name:
            print(f"--option needs NAME=VALUE, not {item!r}", file=sys.stderr)
            return 2
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    try:
        outcomes = await run_bot(
            args.url, room=args.room, code=args.code, create=args.create, seats=args.seats,
            options=options, fill=args.fill, games=args.games, name=args.name,
            token_file=args.token_file, seed=args.seed, log=_write)
    except (TimeoutError, OSError, ConnectionLost, ServerError, RuntimeError) as exc:
        print(f"bot stopped: {exc}", file=sys.stderr)
        return 1
    print(f"played {len(outcomes)} game(s)", flush=True)
    return 0
