"""A Mantis bot that plays from the public view only.

Before the flip a player sees the top card's back: three colours, one of which is the face.
Cards of that back already visible face up (in a tank, or the card just flipped) cannot be the
top card, so the face is one of the remaining candidates, each equally likely. For every legal
move the bot averages, over those candidates, the value of the position the flip would leave,
and plays the best move:

    value = my points + TANK * my tank cards + (my extra turn, two players: EXTRA)
            - DENY * the strongest opponent's (points + TANK * tank cards)

so scoring banks points, stealing gains tank cards (future points) and pulls cards away from
the leader. Reaching the target wins at once and outranks everything. Ties between equally good
moves are broken by the seeded RNG, so the choice is reproducible for a given seed.

The weights were tuned by playing against a uniformly random player (see the tests and
docs/games/mantis.md for the measured win rates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall.games.contract import Move, View
from playhall.games.rng import Rng, RngState

from .cards import BACKS, CARD_OF_CODE, COLOURS, FACE, card_of

TANK = 0.5  # a tank card is worth about half a point: it may be scored later, or stolen
DENY = 0.6  # how much hurting the strongest opponent is worth against helping yourself
EXTRA = 1.0  # a two-player extra turn is worth about one more point
WIN = 1000.0

_COLOUR_INDEX = {name: i for i, name in enumerate(COLOURS)}
_BACK_INDEX = {tuple(back): i for i, back in enumerate(BACKS)}


def _candidates(view: View) -> list[int]:
    """The colours the top card's face may have, given the cards visible face up."""
    back = _BACK_INDEX[tuple(sorted(_COLOUR_INDEX[c] for c in view["top_back"]))]
    seen = {CARD_OF_CODE[code] for tank in view["tanks"] for code in tank}
    last = view.get("last")
    if last is not None:
        seen.add(CARD_OF_CODE[last["card"]])
    faces = [c for c in BACKS[back] if card_of(back, c) not in seen]
    return faces or list(BACKS[back])


def _worth(points: int, tank: int) -> float:
    return points + TANK * tank


def _value(points: list[int], tanks: list[int], seat: int, target: int, extra: bool) -> float:
    """The value for ``seat`` of a position given every seat's points and tank sizes."""
    if points[seat] >= target:
        return WIN
    rival = max(_worth(points[o], tanks[o]) for o in range(len(points)) if o != seat)
    return _worth(points[seat], tanks[seat]) + (EXTRA if extra else 0.0) - DENY * rival


def expected_value(view: View, seat: int, move: Move) -> float:
    """The move's value averaged over the possible faces of the top card."""
    counts = [[0] * len(COLOURS) for _ in view["tanks"]]
    for s, tank in enumerate(view["tanks"]):
        for code in tank:
            counts[s][FACE[CARD_OF_CODE[code]]] += 1
    points = list(view["scores"])
    sizes = [len(t) for t in view["tanks"]]
    two = len(points) == 2
    faces = _candidates(view)
    total = 0.0
    for colour in faces:
        pts, tanks, extra = list(points), list(sizes), False
        if move["type"] == "score":
            k = counts[seat][colour]
            if k:
                pts[seat] += k + 1
                tanks[seat] -= k
            else:
                tanks[seat] += 1
        else:
            victim = move["target"]
            k = counts[victim][colour]
            if k:
                tanks[victim] -= k
                tanks[seat] += k + 1
                extra = two
            else:
                tanks[victim] += 1
        total += _value(pts, tanks, seat, view["target"], extra)
    return total / len(faces)


def choose(view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
    """The legal move with the best expected value; seeded tie-break."""
    if view.get("top_back") is None or len(moves) == 1:
        return dict(moves[0])
    scored: list[tuple[float, int]] = [
        (expected_value(view, seat, m), i) for i, m in enumerate(moves)
    ]
    best = max(v for v, _ in scored)
    top: list[Any] = [i for v, i in scored if v >= best - 1e-9]
    return dict(moves[Rng(seed).choice(top)])
