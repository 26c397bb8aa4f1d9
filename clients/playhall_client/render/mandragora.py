"""Terminal rendering of a Mandragora Mania view (works from the view alone, no rules).

The board is drawn in the seed's shape: seat 1's base (9) top left, seat 1's areas 8 7 6 along
the top, the shared areas 2 and 4 in the middle, seat 0's areas 1 3 5 along the bottom and seat
0's base (0) bottom right. Each stack is printed bottom to top, left to right, because the order
matters (the top piece is sown first); areas the player to move may select are starred.
"""

from __future__ import annotations

from typing import Any

# (row, column, area) of every cell; columns are aligned across the three rows.
_CELLS: tuple[tuple[int, int, int], ...] = (
    (0, 0, 9), (0, 1, 8), (0, 3, 7), (0, 5, 6),
    (1, 2, 2), (1, 4, 4),
    (2, 1, 1), (2, 3, 3), (2, 5, 5), (2, 6, 0),
)
_COLUMNS = 7


def _who(seat: Any, me: int | None) -> str:
    shown = f"seat {seat + 1}" if isinstance(seat, int) else f"seat {seat}"  # counted from 1
    return shown + (" (you)" if seat == me else "")


def _cell(view: dict[str, Any], area: int) -> str:
    stack = "".join(str(p) for p in view["areas"][area]) or "."
    star = "*" if area in view.get("movable", []) else ""
    return f"{area}:{stack}{star}"


def _board(view: dict[str, Any]) -> list[str]:
    texts = {area: _cell(view, area) for _, _, area in _CELLS}
    widths = [0] * _COLUMNS
    for _, column, area in _CELLS:
        widths[column] = max(widths[column], len(texts[area]))
    rows = [[" " * widths[c] for c in range(_COLUMNS)] for _ in range(3)]
    for row, column, area in _CELLS:
        rows[row][column] = texts[area].ljust(widths[column])
    return ["  " + "  ".join(row).rstrip() for row in rows]


def _status(view: dict[str, Any], me: int | None) -> str:
    outcome = view.get("outcome")
    if outcome:
        scores = outcome["scores"]
        stuck = outcome.get("stuck")
        why = f" ({_who(stuck, me)} had no move)" if stuck is not None else ""
        if not outcome["winners"]:
            return f"Game over: draw {scores[0]}-{scores[1]}{why}"
        return f"Game over: {_who(outcome['winners'][0], me)} wins {scores[0]}-{scores[1]}{why}"
    chain = view.get("chain", 0)
    extra = f", extra turn x{chain}" if chain else ""
    return f"To move: {_who(view['turn'], me)}{extra}"


def _last(view: dict[str, Any]) -> str | None:
    last = view.get("last")
    if not last:
        return None
    path = " ".join(f"{step['piece']}>{step['area']}" for step in last["landings"])
    gained = f" +{last['points']}" if last.get("points") else ""
    extra = ", extra turn" if last.get("extra_turn") else ""
    return f"Last: seat {last['seat'] + 1} sowed {last['area']}: {path}{gained}{extra}"


def render(view: dict[str, Any], seat: int | None) -> str:
    first = view.get("first")
    lines = [f"Mandragora Mania - pattern {view.get('pattern')} - {_who(first, None)} moved first"]
    for s, base in enumerate(view.get("bases", [0, 9])):
        own = " ".join(str(a) for a in view.get("selectable", [[], []])[s])
        values = " ".join(f"{k}{v}" for k, v in view.get("values", [{}, {}])[s].items())
        lines.append(f"  {_who(s, seat)}: {view['scores'][s]} pts | base {base} | "
                     f"sows {own} | values {values}")
    lines.append("")
    lines.extend(_board(view))
    lines.append("")
    names = view.get("piece_names", {})
    lines.append("  stacks read bottom > top (top is sown first); * = may be sown now")
    lines.append("  " + ", ".join(f"{k}={v}" for k, v in names.items()))
    last = _last(view)
    if last:
        lines.append(last)
    lines.append(_status(view, seat))
    return "\n".join(lines)


def move_label(move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    if move.get("type") == "sow" and "area" in move:
        return f"sow area {move['area']}"
    return " ".join(f"{k}={v}" for k, v in move.items())
