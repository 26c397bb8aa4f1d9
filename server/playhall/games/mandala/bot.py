"""A server-side bot for Mandala, working from the seat's view only.

It scores every legal move with a few rules of thumb a human player uses and plays the best:

- a pick is worth what it adds to my cups (a colour new to my river opens a space; a colour
  already there scores its space for every card), plus part of what it denies my opponent;
- completing a mandala is worth the estimated difference of the resolution that follows (both
  sides picking greedily in turn, first pick by the field rule);
- a field card is worth most when it takes or keeps the lead in that mandala (the first pick),
  a mountain card when I lead there (I will pick it up) and it is a colour I value; playing to a
  mountain also refills the hand;
- a discard only refreshes the hand, so it is a last resort.

Ties are broken by ``Rng(seed)`` so the choice is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall.games.contract import Move, View
from playhall.games.rng import Rng, RngState

DENIAL = 0.6  # how much of the opponent's gain a pick is worth to me when I take it away


def take_value(player: dict[str, Any], colour: str, count: int, has_field: bool) -> float:
    """What taking ``count`` cards of ``colour`` is worth to ``player`` (a view's player entry,
    or any dict with a ``river`` and, when known, a ``cup``)."""
    if not has_field:
        return 0.0
    river = player["river"]
    if colour in river:
        return float(count * (river.index(colour) + 1))
    if len(river) >= 6:
        return 0.0
    space = len(river) + 1
    # One card goes to the river and scores nothing; the space it opens pays for the rest, for
    # cards of that colour already waiting in my cup (known only for myself), and for later ones.
    waiting = player.get("cup", {}).get(colour, 0)
    return (count - 1 + waiting) * space + 0.5 * space


def _greedy_resolution(
    view: View, me: int, mountain: list[dict[str, Any]], sizes: list[int], first: int
) -> float:
    """My gain minus my opponent's if both pick greedily from ``mountain`` starting with
    ``first``."""
    players = [{"river": list(p["river"]), "cup": p.get("cup", {})} for p in view["players"]]
    stacks = [dict(s) for s in mountain]
    chooser, balance = first, 0.0
    while stacks:
        other = 1 - chooser

        def worth(stack: dict[str, Any], c: int = chooser, o: int = other) -> float:
            own = take_value(players[c], stack["colour"], stack["count"], sizes[c] > 0)
            return own + DENIAL * take_value(
                players[o], stack["colour"], stack["count"], sizes[o] > 0
            )

        best = max(stacks, key=worth)
        gain = take_value(players[chooser], best["colour"], best["count"], sizes[chooser] > 0)
        river = players[chooser]["river"]
        if sizes[chooser] > 0 and best["colour"] not in river and len(river) < 6:
            river.append(best["colour"])
        balance += gain if chooser == me else -gain
        stacks.remove(best)
        chooser = other
    return balance


def _colours_after(mandala: dict[str, Any]) -> int:
    present = {s["colour"] for s in mandala["mountain"]}
    for field in mandala["fields"]:
        present |= {c for c, n in field.items() if n > 0}
    return len(present)


def _after(view: View, me: int, move: Move) -> dict[str, Any]:
    """The target mandala as it would be after ``move`` (a shallow what-if copy)."""
    m = view["mandalas"][move["mandala"]]
    mountain = [dict(s) for s in m["mountain"]]
    fields = [dict(f) for f in m["fields"]]
    if move["type"] == "mountain":
        for stack in mountain:
            if stack["colour"] == move["colour"]:
                stack["count"] += 1
                break
        else:
            mountain.append({"colour": move["colour"], "count": 1})
    else:
        fields[me][move["colour"]] += move["count"]
    return {"mountain": mountain, "fields": fields}


def _score_action(view: View, me: int, move: Move) -> float:
    player = view["players"][me]
    hand_size = player["hand_count"]
    if move["type"] == "discard":
        return -2.0 + 0.2 * move["count"]
    m = _after(view, me, move)
    sizes = [sum(f.values()) for f in m["fields"]]
    if _colours_after(m) == 6:
        first = me if sizes[me] > sizes[1 - me] else 1 - me
        return 2.0 * _greedy_resolution(view, me, m["mountain"], sizes, first)
    lead = sizes[me] - sizes[1 - me]
    if move["type"] == "field":
        before = view["mandalas"][move["mandala"]]["field_sizes"]
        took_lead = before[me] <= before[1 - me] < sizes[me]
        prize = sum(take_value(player, s["colour"], s["count"], True) for s in m["mountain"])
        left = hand_size - move["count"]
        return (
            (3.0 if took_lead else 0.5)
            + 0.15 * prize
            - 0.7 * move["count"]
            - (1.5 if left < 2 else 0.0)
        )
    # A mountain card feeds whoever picks first there: worth its value to me if I lead, a loss
    # if my opponent does (measured with my valuation: theirs was no better in trials).
    side = (lead > 0) - (lead < 0)
    side_value = side * take_value(player, move["colour"], 1, True)
    drawn = min(3, view["hand_limit"] - hand_size + 1)
    risk = 1.0 if _colours_after(m) == 5 and lead < 0 else 0.0
    return side_value + 0.4 * drawn - risk


def _score_choice(view: View, me: int, move: Move) -> float:
    index = view["resolution"]["mandala"]
    mandala = view["mandalas"][index]
    stack = next(s for s in mandala["mountain"] if s["colour"] == move["colour"])
    sizes = mandala["field_sizes"]
    players = view["players"]
    own = take_value(players[me], stack["colour"], stack["count"], sizes[me] > 0)
    deny = take_value(players[1 - me], stack["colour"], stack["count"], sizes[1 - me] > 0)
    return own + DENIAL * deny


def choose(view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
    """The best-scoring legal move; ``Rng(seed)`` breaks ties."""
    rng = Rng(seed)
    me = seat
    best: Move | None = None
    best_score = float("-inf")
    for move in moves:
        if move["type"] == "choose":
            score = _score_choice(view, me, move)
        else:
            score = _score_action(view, me, move)
        score += rng.below(1000) / 1_000_000
        if score > best_score:
            best, best_score = move, score
    assert best is not None, "bot asked to move with no legal moves"
    return dict(best)
