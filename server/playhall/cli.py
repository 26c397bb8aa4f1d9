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
from pathlib import Path

from playhall import log
from playhall.config import Config


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the game server")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, help="port for websockets and /healthz (default 8765)")
    p.add_argument("--redis-url", help="Redis to use (default: start an embedded one)")
    p.add_argument("--data-dir", type=Path, help="embedded Redis data (default ./playhall-data)")
    p.add_argument("--redis-fsync", choices=["always", "everysec"], help="embedded Redis fsync")
    p.add_argument("--instance", help="name of this process for room leases")
    p.add_argument("--bot-delay", type=float, help="seconds before a server bot moves")
    p.add_argument("--max-frame", type=int, help="largest client frame in bytes")
    p.add_argument("--rate", type=float, help="messages per second per connection")
    p.add_argument("--burst", type=int, help="message burst per connection")
    p.add_argument("--log-format", choices=["auto", "json", "console"])
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument("--web-dir", type=Path, help="serve these static files at /")


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

        asyncio.run(serve_forever(config))
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
