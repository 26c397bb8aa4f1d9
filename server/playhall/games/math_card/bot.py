"""A simple server-side bot that plays from its view only.

Deck building: a ready-made deck, picked with the seed. Play: every candidate move that changes
the board is tried on a copy of the *visible* board and scored with the real scoring function
(an opponent's hidden puzzle is simply skipped, as the view hides it); the bot plays the move
that most improves its VP margin (plus small nudges so it builds lanes and uses its cards), and
ends the turn when nothing improves. Choices (swaps, rearranges, moving an assertion) are
answered the same way; discards and searches are seeded picks with a simple preference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall.games.rng import Rng, RngState

from . import board
from .cards import card, function_uses
from .scoring import score_board

Move = dict[str, Any]

#: Small nudges added to a move's margin change so that the bot builds lanes and plays cards
#: even when the score does not move yet (a lane scores nothing until assertions meet it).
NUDGE = {
    "set_value": 0.2,
    "set_operator": 0.15,
    "set_function": 0.25,
    "assert": 0.05,
    "legend": 0.3,
    "function_effect": 0.1,
    "use": 0.3,
    "move_value": 0.0,
}
PVP_TARGET = 10


def _board(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "lanes": [list(row) for row in view["lanes"]],
        "areas": {k: [dict(e) for e in v] for k, v in view["areas"].items()},
    }


def _margin(b: dict[str, Any], seat: int, first: int) -> int:
    vp = score_board(b, first)["vp"]
    return int(vp[seat] - vp[1 - seat])


def _simulate(b: dict[str, Any], seat: int, move: Move) -> dict[str, Any] | None:
    """The visible board after ``move``, or None when the move does not change the board."""
    kind = move["type"]
    lanes = b["lanes"]
    if kind in ("set_value", "set_operator", "set_function"):
        find = {
            "set_value": board.value_target,
            "set_operator": board.operator_target,
            "set_function": board.function_target,
        }[kind]
        slot = find(lanes, move["lane"], seat)
        if slot is None:
            return None
        lanes[move["lane"]][slot] = {"card": move["card"], "owner": seat}
        if kind == "set_function":
            lanes[move["lane"]][slot + 1] = {"card": move["card"], "owner": seat, "part": "value"}
    elif kind == "move_value":
        lane, slot = move["from"]
        lanes[move["lane"]][board.moved_slot(seat, lane, slot)] = lanes[lane][slot]
        lanes[lane][slot] = None
    elif kind == "assert":
        entry = {"card": move["card"], "owner": seat}
        if "under" in move:
            entry["under"] = move["under"]
        b["areas"][f"private{seat}" if move["area"] == "private" else move["area"]].append(entry)
    elif kind == "function_calc":
        board.take_calc_cards(b, [move["input"], move["output"]])
    elif kind == "swap":
        (la, sa), (lb, sb) = move["a"], move["b"]
        lanes[la][sa], lanes[lb][sb] = lanes[lb][sb], lanes[la][sa]
    elif kind == "rearrange":
        moved = [lanes[lane][slot] for lane, slot in move["cycle"]]
        for i, (lane, slot) in enumerate(move["cycle"]):
            lanes[lane][slot] = moved[i - 1]
    elif kind == "move_assertion":
        entry = b["areas"][move["area"]].pop(move["index"])
        b["areas"][f"private{move['to']}"].append(entry)
    else:
        return None
    return b


def _worth(view: dict[str, Any], seat: int, move: Move, base: int) -> float:
    """How much better the bot's position looks after ``move`` (0 = no better)."""
    first = view["first"] if view["first"] is not None else 0
    after = _simulate(_board(view), seat, move)
    gain = 0.0 if after is None else float(_margin(after, seat, first) - base)
    gain += NUDGE.get(move["type"], 0.0)
    if move["type"] == "function_calc":
        pvp = card(move["card"])["pvp"]
        gain += 0.4 * pvp
        if view["players"][seat]["pvp"] + pvp >= PVP_TARGET and after is not None:
            gain += 100.0 if _margin(after, seat, first) > 0 else -100.0
    if move["type"] == "function_effect" and "operator_value" in function_uses(move["card"]):
        gain -= 0.2  # keep multi-use functions for the lanes rather than their effect
    return gain


def _keep_score(card_id: str) -> int:
    """How much the bot wants to keep a card in hand (lowest is discarded first)."""
    row = card(card_id)
    return {
        "value_assertion": 4,
        "operator": 3,
        "value": 2,
        "function": 3,
        "legend": 2,
        "assertion": 1,
    }[row["kind"]] + row["vp"]


def choose(view: dict[str, Any], seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
    rng = Rng(seed)
    real = [m for m in moves if m["type"] != "resign"]
    if not real:
        return dict(moves[0])
    if view["phase"] == "deckbuild":
        picks = [m for m in real if m["type"] == "pick_deck"]
        return dict(rng.choice(picks))
    pending = view["pending"]
    if pending is not None and pending["kind"] in ("hand_limit", "opponent_discard"):
        low = min(_keep_score(m["card"]) for m in real)
        return dict(rng.choice([m for m in real if _keep_score(m["card"]) == low]))
    if pending is not None and pending["kind"] == "search":
        high = max(_keep_score(m["card"]) for m in real)
        return dict(rng.choice([m for m in real if _keep_score(m["card"]) == high]))
    if pending is not None and pending["kind"] == "optional_discard":
        return dict(real[0])  # cycle the lowest-id matching card (decline comes last)
    first = view["first"] if view["first"] is not None else 0
    base = _margin(_board(view), seat, first)
    scored = [
        (_worth(view, seat, m, base), i) for i, m in enumerate(real) if m["type"] != "end_turn"
    ]
    if pending is not None:  # swap / rearrange / move_assertion: the best answer
        best = max(s for s, _ in scored)
        return dict(real[rng.choice([i for s, i in scored if s == best])])
    good = [(s, i) for s, i in scored if s > 0]
    if not good:
        return {"type": "end_turn"}
    best = max(s for s, _ in good)
    return dict(real[rng.choice([i for s, i in good if s == best])])
