"""The ``playhall`` command.

``playhall serve`` runs the server. ``playhall play`` (terminal client) and ``playhall bot``
(a client-side bot) are the client package's; this module only routes to them, importing them
when asked so the server never depends on client code.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Callable
from dataclasses import Field
from typing import Any

from playhall import eventloop, log
from playhall.config import Config, parse


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="playhall", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    client_cli = _client_cli()
    if client_cli is not None:
        client_cli.add_parsers(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        overrides = {k: v for k, v in vars(args).items() if k != "command"}
        config = Config.from_env(**overrides)
        log.configure(config.log_format, config.log_level)
        from playhall.app import serve_forever

        try:
            factory = eventloop.loop_factory(config.event_loop)
        except eventloop.LoopUnavailable as exc:
            parser.exit(2, f"playhall serve: {exc}\n")
        with asyncio.Runner(loop_factory=factory) as runner:
            runner.run(serve_forever(config))
        return 0
    assert client_cli is not None
    return int(client_cli.run(args))


def _client_cli():  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module("playhall_client.cli")
    except ModuleNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
