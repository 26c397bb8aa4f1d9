"""The package's C parts; everything else about the package is in pyproject.toml.

Always: ``playhall_protocol._speedups`` (protocol/playhall_protocol/_speedups.c), a C twin of
packing a view diff (``codec.pack(diff.make_diff(...))``); ``playhall.store._resp``
(server/playhall/store/_resp.c), RESP encoding of a commit's arguments
(``pipe.encode_bulk_reference``); and ``playhall.games._splitmix``
(server/playhall/games/_splitmix.c), the games' shuffle (``Rng.shuffle_reference``). They are
optional: where they cannot be compiled (no C compiler or no Python headers) the install goes on
without them, and the pure Python references are used (``PLAYHALL_SPEEDUPS=0`` chooses the
protocol's and the store's at run time too). .ci/sanitized tests them built with
AddressSanitizer and UndefinedBehaviorSanitizer.

Opt-in, the compiled build:

    PLAYHALL_COMPILE=1 pip install .

compiles the modules of the per-move path listed below with mypyc (from mypy, which the build
backend then adds to the build requirements; a C compiler and the Python headers are needed).
The .py files are installed too, and Python imports the compiled module in their place. Without
PLAYHALL_COMPILE, nothing is compiled: the package is pure Python.

Not compiled: the other games (an interpreted class cannot subclass a compiled one, and a game
is added by adding a package), games/contract.py (the base every game subclasses), the package
__init__ files, and what runs once (app, cli, config, catalog, store.embedded, rooms.manager).
"""

from __future__ import annotations

import os

from setuptools import Extension, setup

SPEEDUPS = [
    Extension("playhall_protocol._speedups", ["protocol/playhall_protocol/_speedups.c"],
              optional=True),
    Extension("playhall.store._resp", ["server/playhall/store/_resp.c"], optional=True),
    Extension("playhall.games._splitmix", ["server/playhall/games/_splitmix.c"], optional=True),
]

#: Per import package, the modules compiled into that package's one shared library.
COMPILED = {
    "playhall_protocol": [
        "protocol/playhall_protocol/codec.py",
        "protocol/playhall_protocol/diff.py",
        "protocol/playhall_protocol/errors.py",
        "protocol/playhall_protocol/messages.py",
    ],
    "playhall": [
        "server/playhall/games/mantis/bot.py",
        "server/playhall/games/mantis/cards.py",
        "server/playhall/games/mantis/engine.py",
        "server/playhall/games/rng.py",
        "server/playhall/lobby.py",
        "server/playhall/net/endpoint.py",
        "server/playhall/net/ratelimit.py",
        "server/playhall/net/session.py",
        "server/playhall/net/websocket.py",
        "server/playhall/rooms/actor.py",
        "server/playhall/rooms/audience.py",
        "server/playhall/rooms/commands.py",
        "server/playhall/rooms/history.py",
        "server/playhall/rooms/inbox.py",
        "server/playhall/rooms/listing.py",
        "server/playhall/rooms/record.py",
        "server/playhall/rooms/replay.py",
        "server/playhall/rooms/table.py",
        "server/playhall/rooms/views.py",
        "server/playhall/store/pipe.py",
        "server/playhall/store/redis_store.py",
    ],
}

if os.environ.get("PLAYHALL_COMPILE") == "1":
    from mypyc.build import mypycify

    # One shared library per package, inside the package (e.g. playhall/native__mypyc...so),
    # so the compiled modules find it wherever the package itself is found.
    groups = [(paths, f"{package}.native") for package, paths in COMPILED.items()]
    setup(
        ext_modules=[
            *mypycify([p for paths, _ in groups for p in paths], separate=groups),
            *SPEEDUPS,
        ],
        # A build folder of its own, so a later pure build never packs a stale compiled module.
        options={"build": {"build_base": "build/compiled"}},
    )
else:
    setup(ext_modules=SPEEDUPS)
