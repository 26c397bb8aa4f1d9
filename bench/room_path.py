"""CPU per move of a room's whole command path, in one process: no network, Redis faked at the
commit connection (the commit's arguments are still built and encoded).

    python bench/room_path.py [--moves 3000] [--profile]

Real 2-seat Mantis rooms (target 105) with two viewers each play to the end, one move at a time
through ``Room.ask`` (queue, actor, apply, record, commit, views, diffs, frames, reply), until
``--moves`` moves are made. Reported: process CPU microseconds per move. ``--profile`` prints
the cProfile of the moves instead (cProfile inflates Python-heavy parts; use it for shares).
Not part of the test command: numbers belong in docs/benchmarks.md, with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
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
from playhall.rooms.actor import Room  # noqa: E402
from playhall.rooms.record import RoomRecord, Seat  # noqa: E402
from playhall.store.pipe import encode_command  # noqa: E402
from playhall.store.redis_store import Store  # noqa: E402


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
        return await future  # type: ignore[no-any-return]

    def close(self) -> None:
        pass


class FakeViewer:
    def __init__(self, player: str) -> None:
        self.player = self.name = player
        self.frames = 0

    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames += 1

    def is_stale(self, room: str) -> bool:
        return False

    def clear_stale(self, room: str) -> None:
        pass


async def run(moves: int, profiler: cProfile.Profile | None) -> float:
    # The redis-py client is never used: only the commit goes out, through the fake pipe.
    store = Store(aioredis.Redis(), FakePipe(), "bench:")
    config = Config()
    game = get_game("mantis")
    assert game is not None
    made, cpu = 0, 0.0
    while made < moves:
        seats = (Seat("a", "a", False, True), Seat("b", "b", False, True))
        record = RoomRecord(
            id=f"room{made}",
            game="mantis",
            options=game.normalize_options({"target": 105}),
            seats=seats,
            secret=int_key(made + 1),
            creator="a",
        )

        async def create(r: RoomRecord) -> None:
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
        viewers = (FakeViewer("a"), FakeViewer("b"))
        for seat, viewer in enumerate(viewers):
            room.audience.attach(room.record, viewer, seat)
        await room.ask("start", viewers[0], {})
        mid = 0
        while room.record.status == "playing" and made < moves:
            assert room.record.state is not None
            seat = game.to_act(room.record.state)[0]
            move = room.audience.view(room.record, seat)["moves"][0]
            mid += 1
            args = {"room": record.id, "version": room.record.version, "mid": mid, "move": move}
            started = time.process_time()
            if profiler is not None:
                profiler.enable()
            await room.ask("move", viewers[seat], args)
            if profiler is not None:
                profiler.disable()
            cpu += time.process_time() - started
            made += 1
        await room.stop()
    return cpu / made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    log.configure("json", "warning")
    profiler = cProfile.Profile() if args.profile else None
    per_move = asyncio.run(run(args.moves, profiler))
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    print(f"{per_move * 1e6:.1f} us of CPU per move ({args.moves} moves)")


if __name__ == "__main__":
    main()
