"""Bytes per update frame, per game: what a room's broadcast sends its viewers.

    python bench/update_bytes.py [--seeds 20] [--json FILE]

Every registered game at each of its quick tables plays ``--seeds`` random rooms
(tests/rooms/random_rooms.py: random legal moves, with now and then a rename, a stand-in or a
seat leaving) through a room's audience with one viewer per seat and one spectator, every
version broadcast. Reported per table: the update frames sent (one per viewer and version),
their mean size in bytes, the mean size of their diffs, the mean ops per diff, and how many
versions sent some viewer a snapshot instead (no bigger than its update). The counts do not
depend on the machine: the same seeds give the same frames (clock readings aside; the quick
tables have no clock). Not part of the test command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "protocol"), str(ROOT / "server"), str(ROOT / "clients")]

from playhall.config import Config  # noqa: E402
from playhall.rooms.audience import Audience  # noqa: E402
from playhall_protocol import decode  # noqa: E402
from playhall_protocol.codec import pack  # noqa: E402
from tests.games.conformance import quick_cases  # noqa: E402
from tests.rooms.random_rooms import game_of, players, random_room  # noqa: E402


class Viewer:
    def __init__(self, player: str) -> None:
        self.player = self.name = player
        self.address = ""
        self.id = 0
        self.frames: list[bytes] = []

    def push(self, frame: bytes, room: str | None = None) -> None:
        self.frames.append(frame)

    def is_stale(self, room: str) -> bool:
        return False

    def clear_stale(self, room: str) -> None:
        pass


def measure(game_id: str, seats: int, options: dict[str, Any], seeds: int) -> dict[str, Any]:
    updates: list[int] = []
    diffs: list[int] = []
    ops: list[int] = []
    snapshots = 0
    for seed in range(seeds):
        audience = Audience(f"r{seed % 1000}", game_of(game_id), Config())
        viewers: list[Viewer] = []
        for n, record_events in enumerate(random_room(game_id, seats, options, seed)):
            record, events = record_events
            if n == 0:
                for seat, player in enumerate(players(seats)):
                    viewers.append(Viewer(player))
                    audience.attach(record, viewers[-1], seat)
                viewers.append(Viewer("watcher"))
                audience.attach(record, viewers[-1], None)
                for viewer in viewers:
                    audience.send_snapshot(record, viewer)
                    viewer.frames.clear()
                continue
            audience.broadcast(record, events)
        for viewer in viewers:
            for frame in viewer.frames:
                message = decode(frame)
                if message["t"] == "update":
                    updates.append(len(frame))
                    diffs.append(len(pack(message["diff"])))
                    ops.append(len(message["diff"]))
                elif message["t"] == "snapshot":
                    snapshots += 1
    return {
        "game": game_id, "seats": seats, "options": options, "updates": len(updates),
        "bytes_per_update": statistics.fmean(updates), "diff_bytes": statistics.fmean(diffs),
        "ops_per_diff": statistics.fmean(ops), "snapshots": snapshots,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for case in quick_cases():
        game_id, seats, options = case.values
        rows.append(measure(game_id, seats, options, args.seeds))
    print("| game | seats | update frames | bytes per update | of which the diff | ops per diff "
          "| snapshots instead |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['game']} | {row['seats']} | {row['updates']:,} | "
              f"{row['bytes_per_update']:.1f} | {row['diff_bytes']:.1f} | "
              f"{row['ops_per_diff']:.2f} | {row['snapshots']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
