"""CPU per move of a room's whole command path, in one process: no network, Redis faked at the
commit connection (the commit's arguments are still built and encoded).

    python bench/room_path.py [--moves 3000] [--seats 2] [--spectators 0] [--profile | --count]

Real Mantis rooms (target 105) of ``--seats`` players (2), each seat with a viewer, and
``--spectators`` more viewers (0), play to the end, one move at a time:
the client's frame read as the server reads it (``Request``: decoded and checked), then
``Room.ask`` (queue, actor, apply, record, commit, views, diffs, frames, reply), until
``--moves`` moves are made. Reported: process CPU microseconds per move. ``--profile`` prints
the cProfile of the moves instead (cProfile inflates Python-heavy parts; use it for shares).
``--count`` prints instructions per move under valgrind's callgrind instead, which the machine's
load does not move: the script runs itself twice under it, with ``--moves`` and twice as many,
and divides the difference (start-up and imports cancel out).
Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

import redis.asyncio as aioredis  # noqa: E402

from playhall import log  # noqa: E402
from playhall.catalog import get_game  # noqa: E402
from playhall.config import Config  # noqa: E402
from playhall.counters import Counters  # noqa: E402
from playhall.games.rng import int_key  # noqa: E402
from playhall.lobby import Lobby  # noqa: E402
from playhall.net.replies import ReplyRouter  # noqa: E402
from playhall.net.session import Request  # noqa: E402
from playhall.results import results_of  # noqa: E402
from playhall.rooms.actor import Room  # noqa: E402
from playhall.rooms.record import RoomRecord, Seat  # noqa: E402
from playhall.store.pipe import encode_command  # noqa: E402
from playhall.store.redis_store import Store  # noqa: E402
from playhall_protocol import encode  # noqa: E402


class FakePipe:
    """Answers every command in the next pass of the loop, as Redis would a successful
    commit. Commands are encoded as the real connection encodes them."""

    on_answer: Any = None
    preamble: list[bytes]  # set by the Store; never read here

    async def call(self, *args: bytes) -> int:
        return await self.call_encoded(encode_command(list(args)))

    async def call_encoded(self, *command: bytes) -> int:
        # Answered from a later callback, as the real connection's reader does.
        future = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(future.set_result, 1)
        return await future

    def close(self) -> None:
        pass


class FakeViewer:
    def __init__(self, id: int, player: str) -> None:
        self.id = id
        self.player = self.name = player
        self.address = "127.0.0.1"
        self.frames = 0

    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames += 1

    def is_stale(self, room: str) -> bool:
        return False

    def clear_stale(self, room: str) -> None:
        pass


async def run(moves: int, profiler: cProfile.Profile | None, seats: int = 2,
              spectators: int = 0) -> float:
    # The redis-py client is never used: only the commit goes out, through the fake pipe.
    store = Store(aioredis.Redis(), FakePipe(), "bench:")
    config = Config()
    # A game's end notes its results as due and writes them through redis-py, which goes
    # nowhere here: both are left out (they happen once a game, not once a move).
    results = results_of(store, config)

    async def expect(old: RoomRecord, new: RoomRecord) -> None:
        pass

    results.expect = expect  # type: ignore[method-assign]
    results.ended = lambda new: None  # type: ignore[method-assign]
    game = get_game("mantis")
    assert game is not None
    made, cpu = 0, 0.0
    while made < moves:
        players = [f"p{seat}" for seat in range(seats)]
        record = RoomRecord(
            id=f"room{made}",
            game="mantis",
            options=game.normalize_options({"target": 105}),
            seats=tuple(Seat(p, p, False, True) for p in players),
            secret=int_key(made + 1),
            creator=players[0],
        )

        async def create(r: RoomRecord, player: str, address: str) -> None:
            pass

        room = Room(
            record,
            game,
            store=store,
            config=config,
            lobby=Lobby(store),
            lease="lease",
            replies=ReplyRouter(Counters()),  # unused: every command here is asked
            create_room=create,
            on_idle=lambda r: None,
        )
        room.start()
        viewers = [FakeViewer(seat, p) for seat, p in enumerate(players)]
        for seat, viewer in enumerate(viewers):
            room.audience.attach(room.record, viewer, seat)
        for n in range(spectators):
            room.audience.attach(room.record, FakeViewer(len(players) + n, f"w{n}"), None)
        await room.ask("start", viewers[0], {})
        mid = 0
        while room.record.status == "playing" and made < moves:
            assert room.record.state is not None
            seat = game.to_act(room.record.state)[0]
            move = room.audience.view(room.record, seat)["moves"][0]
            mid += 1
            frame = encode({"t": "move", "id": mid, "room": record.id,
                            "version": room.record.version, "mid": mid, "move": move})
            started = time.process_time()
            if profiler is not None:
                profiler.enable()
            request = Request(frame)
            assert request.error is None, request.error
            args = request.message
            await room.ask("move", viewers[seat], args)
            if profiler is not None:
                profiler.disable()
            cpu += time.process_time() - started
            made += 1
        await room.stop()
    return cpu / made


def instructions(moves: int, options: list[str]) -> int:
    """What callgrind counts for a whole run of this script making ``moves`` moves."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        # One hash seed for every run: the order of sets of strings, and with it some of the
        # work, would otherwise differ from run to run.
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, __file__, "--moves", str(moves), *options],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        summary = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        assert summary is not None
        return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--count", action="store_true", help="instructions under callgrind")
    parser.add_argument("--seats", type=int, default=2, help="players in each room (2-6)")
    parser.add_argument("--spectators", type=int, default=0, help="spectators in each room")
    args = parser.parse_args()
    if args.count:
        options = ["--seats", str(args.seats), "--spectators", str(args.spectators)]
        few, many = instructions(args.moves, options), instructions(2 * args.moves, options)
        print(f"{(many - few) / args.moves:,.0f} instructions per move "
              f"({args.moves} and {2 * args.moves} moves)")
        return
    log.configure("json", "warning")
    profiler = cProfile.Profile() if args.profile else None
    per_move = asyncio.run(run(args.moves, profiler, args.seats, args.spectators))
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    print(f"{per_move * 1e6:.1f} us of CPU per move ({args.moves} moves)")


if __name__ == "__main__":
    main()
