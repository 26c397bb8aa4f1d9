"""A finished game replayed in the terminal, step by step, from the views each seat saw.

The views come from elsewhere (``playhall replay`` makes them with the game's engine from a
game record; the server's ``replay`` request sends them for a finished room): this module only
draws them, with the same renderers as a live room, and moves between them on keys typed as
lines. A replay shows one viewer (a seat, or a spectator) or every seat at once.

A frame is what one viewer saw at one position: ``step`` (the record's step that made it:
``version``, ``kind``, ``seat``, ``move`` where that viewer may read it, ``time``; None for the
game's setup), ``events`` (those that viewer could see) and ``view`` (a room view).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall_client.terminal import (
    ReadLine,
    Write,
    _event_line,
    _move_label,
    _outcome_line,
    _render,
    _seat_name,
)

Frame = dict[str, Any]

KEYS = """\
Keys (then Enter):
  Enter, n    the next step          p, b    the step before
  N           go to step N           0       the setup, before any move
  e           the last step          q       quit
  h           this list"""


class Replay:
    """Which step is shown, and how to move between steps. ``viewers``: one list of frames per
    viewer shown, all of the same length (one frame per position)."""

    def __init__(self, viewers: Sequence[tuple[str, list[Frame]]], title: str = "") -> None:
        if not viewers or not viewers[0][1]:
            raise ValueError("a replay needs at least one viewer and one position")
        if len({len(frames) for _, frames in viewers}) != 1:
            raise ValueError("every viewer needs one frame per position")
        self.viewers = list(viewers)
        self.title = title  # the game's, for people (else its id)
        self.at = 0

    @property
    def last(self) -> int:
        return len(self.viewers[0][1]) - 1

    def key(self, line: str) -> bool:
        """Act on one typed line; False for ``q``. Moves never go past either end."""
        word = line.strip().lower()
        if word in ("q", "quit"):
            return False
        if word in ("", "n", "next"):
            self.at = min(self.last, self.at + 1)
        elif word in ("p", "b", "back", "prev"):
            self.at = max(0, self.at - 1)
        elif word in ("e", "end", "last"):
            self.at = self.last
        elif word.isdigit():
            self.at = min(self.last, int(word))
        return True

    def draw(self) -> str:
        """The step shown now, as each viewer saw it."""
        shown = [frames[self.at] for _, frames in self.viewers]
        # The step as the viewer who may read its move saw it (every seat: the mover's own).
        head = next((f for f in shown if f.get("step") and f["step"].get("move") is not None),
                    shown[0])
        lines = [_position_line(head, self.at, self.last, self.title)]
        for label, frames in self.viewers:
            lines.append(_frame_text(label, frames[self.at]))
        return "\n".join(lines)


def _position_line(frame: Frame, at: int, last: int, title: str) -> str:
    view = frame["view"]
    step = frame.get("step")
    where = f"{title or view.get('game')} · room {view.get('room')} · step {at}/{last}"
    if step is None:
        return f"== {where}: the game is set up =="
    return f"== {where} (v{step.get('version')}): {_step_text(step, view)} =="


def _step_text(step: dict[str, Any], view: dict[str, Any]) -> str:
    kind = step.get("kind")
    seat = step.get("seat")
    who = _seat_name(view, seat) if isinstance(seat, int) else "?"
    if kind == "auto":
        return "an automatic step"
    if kind == "leave_game":
        why = "resigned" if step.get("move") == "resignation" else "ran out of time"
        return f"{who} {why}"
    move = step.get("move")
    mover = "the bot in " + who if kind == "bot_move" else who
    if isinstance(move, dict):
        return f"{mover}: {_move_label(str(view.get('game')), move, view.get('state'))}"
    return f"{mover} moved"


def _frame_text(label: str, frame: Frame) -> str:
    view = frame["view"]
    game = str(view.get("game"))
    lines = [f"-- as {label} --"]
    lines += [f"  · {_event_line(event, view)}" for event in frame.get("events") or []]
    state = view.get("state")
    if state is not None:
        lines.append(_render(game, state, view.get("you")))
    if view.get("status") == "finished":
        lines.append(_outcome_line(game, view))
    else:
        to_act = view.get("to_act") or []
        lines.append("To act: " + (", ".join(_seat_name(view, n) for n in to_act) or "nobody"))
    return "\n".join(lines)


def viewer_label(view: dict[str, Any], seat: int | None) -> str:
    """``seat 2 alice``, or ``a spectator``."""
    return "a spectator" if seat is None else _seat_name(view, seat)


async def run(
    viewers: Sequence[tuple[str, list[Frame]]], read: ReadLine, write: Write, title: str = ""
) -> int:
    """Show the replay from its setup and follow the keys until ``q`` or the input ends."""
    replay = Replay(viewers, title)
    write(KEYS)
    write(replay.draw())
    while True:
        line = await read()
        if line is None or not replay.key(line):
            return 0
        if line.strip().lower() in ("h", "help", "?"):
            write(KEYS)
            continue
        write(replay.draw())
