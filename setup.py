"""The package's C parts; everything else about the package is in pyproject.toml.

Always: ``playhall_protocol._speedups`` (protocol/playhall_protocol/_speedups.c), a C twin of
packing a view diff (``codec.pack(diff.make_diff(...))``); and ``playhall.store._resp``
(server/playhall/store/_resp.c), RESP encoding of a commit's arguments
(``pipe.encode_bulk_reference``). They are optional: where they cannot be compiled (no C
compiler or no Python headers) the install goes on without them, and the pure Python references
are used (``PLAYHALL_SPEEDUPS=0`` chooses them at run time too). .ci/sanitized tests them built
with AddressSanitizer and UndefinedBehaviorSanitizer.

Opt-in, the compiled build:

    PLAYHALL_COMPILE=1 pip install .

compiles the modules of the per-move path listed below with mypyc (from mypy, which the build
backend then adds to the build requirements; a C compiler and the Python headers are needed).
The .py files are installed too, and Python imports the compiled module in their place. Without
PLAYHALL_COMPILE, nothing is compiled: the package is pure Python.

Always too: the games' rules pages, docs/games/*.md, are copied into the package as
``playhall/rules/<id>.md`` when the package is built (``build_py`` below), so a wheel carries them
for the server's /rules/ pages (playhall.net.rules) while git keeps one copy, the docs'.

Not compiled: the other games (an interpreted class cannot subclass a compiled one, and a game
is added by adding a package), games/contract.py (the base every game subclasses), the package
__init__ files, and what runs once (app, cli, config, catalog, store.embedded, rooms.manager).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

#: The games' pages (the one source) and where a built package carries them.
RULES_SOURCE = Path(__file__).resolve().parent / "docs" / "games"
RULES_PACKAGED = Path("playhall") / "rules"


class build_py_with_rules(build_py):
    """setuptools' build_py, then docs/games/*.md into the built package as playhall/rules/.

    An editable install builds nothing into the tree: the server reads docs/games/ there."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        pages = sorted(RULES_SOURCE.glob("*.md"))
        if not pages:
            raise RuntimeError(f"no game pages in {RULES_SOURCE}: the rules cannot be packaged")
        target = Path(self.build_lib) / RULES_PACKAGED
        target.mkdir(parents=True, exist_ok=True)
        for page in pages:
            shutil.copyfile(page, target / page.name)


SPEEDUPS = [
    Extension("playhall_protocol._speedups", ["protocol/playhall_protocol/_speedups.c"],
              optional=True),
    Extension("playhall.store._resp", ["server/playhall/store/_resp.c"], optional=True),
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
        "server/playhall/counters.py",
        "server/playhall/fleet/edge.py",
        "server/playhall/fleet/messages.py",
        "server/playhall/fleet/owner.py",
        "server/playhall/games/mantis/bot.py",
        "server/playhall/games/mantis/cards.py",
        "server/playhall/games/mantis/engine.py",
        "server/playhall/games/rng.py",
        "server/playhall/lobby.py",
        "server/playhall/net/endpoint.py",
        "server/playhall/net/ratelimit.py",
        "server/playhall/net/replies.py",
        "server/playhall/net/session.py",
        "server/playhall/net/websocket.py",
        "server/playhall/rooms/actor.py",
        "server/playhall/rooms/audience.py",
        "server/playhall/rooms/commands.py",
        "server/playhall/rooms/handle.py",
        "server/playhall/rooms/history.py",
        "server/playhall/rooms/inbox.py",
        "server/playhall/rooms/listing.py",
        "server/playhall/rooms/record.py",
        "server/playhall/rooms/replay.py",
        "server/playhall/rooms/room_options.py",
        "server/playhall/rooms/spectators.py",
        "server/playhall/rooms/table.py",
        "server/playhall/rooms/views.py",
        "server/playhall/store/bus.py",
        "server/playhall/store/pipe.py",
        "server/playhall/store/keys.py",
        "server/playhall/store/rooms.py",
        "server/playhall/store/scripts.py",
        "server/playhall/store/subscriber.py",
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
        cmdclass={"build_py": build_py_with_rules},
    )
else:
    setup(ext_modules=SPEEDUPS, cmdclass={"build_py": build_py_with_rules})
