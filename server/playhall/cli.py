"""The ``playhall`` command.

``playhall serve`` runs the server; ``playhall check-game`` runs the game contract's checks
(:mod:`playhall.games.conformance`) against one game, a built-in, an installed plugin or a
module; ``playhall verify`` checks a game record, replaying it through this server's engines
(:mod:`playhall.record_check`); ``playhall replay`` replays a game record through the game's
engine and shows it with the terminal client's replay screen; ``playhall admin`` sends an
operator's commands to a running server (:mod:`playhall.admin`). ``playhall play`` (terminal
client) and ``playhall bot`` (a client-side bot) are the client package's; this module only
routes to them, importing them when asked so the server never depends on client code.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import Field
from pathlib import Path
from typing import Any

from playhall import admin, eventloop, log
from playhall.catalog import GameConflict
from playhall.config import Config, parse
from playhall.games.contract import Game


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="run the game server",
        description="Run the game server. Every flag is also a PLAYHALL_<NAME> "
        "environment variable (flags win).",
    )
    defaults = Config()
    for f in Config.settings():
        default = getattr(defaults, f.name)
        shown = default if default != "" else "unset"
        p.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            type=_converter(f),
            help=f"{f.metadata['help']} (default {shown}; env PLAYHALL_{f.name.upper()})",
        )


def _converter(f: Field[Any]) -> Callable[[str], Any]:
    def convert(raw: str) -> Any:
        try:
            return parse(f, raw)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _check_game_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check-game",
        help="check a game against the game contract",
        description="Play random legal games of one game at each of its quick tables and check "
        "the game contract on the way: apply never mutates, views are plain data, hidden facts "
        "never change a view, the game ends, replay is exact, the bot plays offered moves. "
        "Exits 0 when every check holds, 1 when one fails, 2 when the game cannot be loaded.",
    )
    p.add_argument(
        "game",
        help="a game id (built-in or installed plugin) or a module exposing GAME (my_game, "
        "or my_game.engine:GAME)",
    )
    p.add_argument("--seeds", type=int, default=50, help="random games per table (default 50)")
    p.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")


def _replay_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a finished game from its record, step by step",
        description="Replay a game record (playhall export ROOM > game.json) through the "
        "game's engine and show it step by step as one seat saw it, as a spectator saw it "
        "(the default), or with every seat's view at once. Keys, each followed by Enter: "
        "Enter or n the next step, p the step before, a number goes to that step, e the "
        "last, q quits. Exits 1 when the record does not replay, 2 when it cannot be read.",
    )
    p.add_argument("record", type=Path, help="the game record, JSON")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--seat", type=int, metavar="N",
                       help="as seat N saw it (seats counted from 1)")
    shown.add_argument("--all", action="store_true", help="every seat's view at each step")


def _load_game(target: str) -> Game:
    """The game ``target`` names: an id in the catalog, else a module (``pkg.mod`` or
    ``pkg.mod:NAME``). Raises ``LookupError`` saying why none could be loaded."""
    from playhall import catalog

    found, failures = catalog.plugins()
    for failure in failures:
        if failure.entry_point.split(" = ")[0] == target:
            raise LookupError(
                f"{failure.package} declares {failure.entry_point} but it failed to load: "
                f"{failure.reason}"
            )
    games = catalog.merge([*catalog.built_in(), *found])
    if target in games:
        return games[target].game
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise LookupError(f"no game has the id {target!r} and no module is named so") from exc
        raise LookupError(f"importing {module_name} failed: {exc!r}") from exc
    except Exception as exc:  # the module's own code raised: that is the author's to see
        raise LookupError(f"importing {module_name} failed: {exc!r}") from exc
    game = catalog.game_of(getattr(module, attr, None) if attr else module)
    if game is None:
        raise LookupError(f"{target} names no playhall.games.contract.Game instance")
    reason = catalog.check_id(game)
    if reason is not None:
        raise LookupError(f"{target}: {reason}")
    return game


def _check_game(args: argparse.Namespace) -> int:
    from playhall.games.conformance import check_game

    try:
        game = _load_game(args.game)
    except (LookupError, GameConflict) as exc:
        print(f"playhall check-game: {exc}", file=sys.stderr)
        return 2
    print(f"{game.title} ({game.id}): {args.seeds} random games per table")
    failed = False
    for result in check_game(game, args.seeds, args.first_seed):
        table = f"{result.seats} seats, options {result.options}"
        if result.failure is None:
            print(f"  ok    {table}: {result.games} games")
        else:
            failed = True
            print(f"  FAIL  {table}: {result.failure}")
    print("failed" if failed else "every check holds")
    return 1 if failed else 0


def _verify_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="check a game record (playhall export's JSON)",
        description="Check a finished game's record: the revealed secret against the "
        "commitment, the key made of it and the seats' contributions, every step's version, "
        "seat, time and hash, the outcome against the steps, then every move replayed through "
        "the game's engine from the start, the server bots' moves and the outcome. Prints what "
        "was checked and where the record stops holding (the step and its field). Exits 0 when "
        "every check holds, 1 when one fails, 2 when the file cannot be read.",
    )
    p.add_argument("record", help="the record's JSON file (- for standard input)")


def _verify(args: argparse.Namespace) -> int:
    import json

    from playhall.record_check import check_replay
    from playhall_protocol.recordcheck import verify_record

    try:
        if args.record == "-":
            record = json.load(sys.stdin)
        else:
            with open(args.record, encoding="utf-8") as f:
                record = json.load(f)
    except (OSError, ValueError) as exc:
        print(f"playhall verify: cannot read {args.record}: {exc}", file=sys.stderr)
        return 2
    report = verify_record(record, replay=check_replay)
    for line in report.lines():
        print(line)
    print("verified" if report.ok else "NOT verified")
    return 0 if report.ok else 1


def _replay(args: argparse.Namespace) -> int:
    from playhall.rooms import record_replay

    try:
        record = json.loads(args.record.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or not isinstance(record.get("game"), str):
            raise ValueError("not a game record (no game named)")
        game = _load_game(record["game"])
    except (OSError, ValueError, LookupError, GameConflict) as exc:
        print(f"playhall replay: {args.record}: {exc}", file=sys.stderr)
        return 2
    try:
        replayed = record_replay.positions(record, game)
        seats = len(record["seats"])
        if args.all:
            wanted: list[int | None] = list(range(seats))
        elif args.seat is not None:
            if not 1 <= args.seat <= seats:
                print(f"playhall replay: --seat is 1 to {seats} in this game", file=sys.stderr)
                return 2
            wanted = [args.seat - 1]
        else:
            wanted = [None]
        viewers = [(seat, record_replay.frames(record, game, replayed, seat)) for seat in wanted]
    except record_replay.RecordError as exc:
        print(f"playhall replay: {args.record} does not replay: {exc}", file=sys.stderr)
        return 1
    from playhall_client import replay
    from playhall_client.terminal import stdin_reader

    labelled = [(replay.viewer_label(frames[0]["view"], seat), frames) for seat, frames in viewers]

    async def show() -> int:
        named = record.get("title")
        title = named if isinstance(named, str) else game.title
        return await replay.run(
            labelled, stdin_reader(), lambda text: print(text, flush=True), title
        )

    return asyncio.run(show())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="playhall", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    _check_game_parser(sub)
    _verify_parser(sub)
    _replay_parser(sub)
    admin.add_parser(sub)
    client_cli = _client_cli()
    if client_cli is not None:
        client_cli.add_parsers(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        overrides = {k: v for k, v in vars(args).items() if k != "command"}
        config = Config.from_env(**overrides)
        log.configure(config.log_format, config.log_level)
        from playhall.app import serve_forever
        from playhall.host_identity import HostTokens
        from playhall.net.admin import check_listen
        from playhall.store.layout import OlderProcesses

        try:
            HostTokens.from_config(config)  # a key that cannot be read stops here, saying why
            check_listen(config.admin_listen, config.admin_token)
        except ValueError as exc:
            parser.exit(2, f"playhall serve: {exc}\n")

        try:
            factory = eventloop.loop_factory(config.event_loop)
        except eventloop.LoopUnavailable as exc:
            parser.exit(2, f"playhall serve: {exc}\n")
        try:
            with asyncio.Runner(loop_factory=factory) as runner:
                runner.run(serve_forever(config))
        except (GameConflict, OlderProcesses) as exc:
            parser.exit(2, f"playhall serve: {exc}\n")
        return 0
    if args.command == "check-game":
        return _check_game(args)
    if args.command == "verify":
        return _verify(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "admin":
        return admin.run(args)
    assert client_cli is not None
    return int(client_cli.run(args))


def _client_cli():  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module("playhall_client.cli")
    except ModuleNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
