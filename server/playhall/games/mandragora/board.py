"""The board: ten areas, who may select which, the two sowing loops, setup patterns, sowing.

Everything here is a plain function over a list of ten stacks, shared by the engine and the bot's
search so the two can never disagree about where a piece goes. A stack is a string of piece codes,
bottom first, top last (``"PMK"``: a Korrigan on a Mandragora on a Pachypodium): immutable, so a
position is copied with ``list(areas)`` in the bot's inner loop, and still plain data.
"""

from __future__ import annotations

#: Number of areas: 1-8 are playing areas, 0 is seat 0's base, 9 is seat 1's base.
AREA_COUNT = 10
PLAYING_AREAS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
SHARED_AREAS: tuple[int, ...] = (2, 4)

#: Ruling 1: seat 0 is the seed's "Player", seat 1 its "Opponent".
BASE: tuple[int, int] = (0, 9)
#: Areas each seat may select: its own three, then the two shared ones.
SELECTABLE: tuple[tuple[int, ...], tuple[int, ...]] = ((1, 3, 5, 2, 4), (6, 7, 8, 2, 4))

#: Ruling 2: each seat's sowing loop. After the last entry the loop starts over. The opponent's
#: base is on neither loop, so a piece in a base never moves again.
LOOPS: tuple[tuple[int, ...], tuple[int, ...]] = (
    (1, 2, 3, 4, 5, 0, 6, 4, 7, 2, 8),
    (6, 4, 7, 2, 8, 9, 1, 2, 3, 4, 5),
)


def _start_positions(loop: tuple[int, ...]) -> dict[int, int]:
    """Loop index of the first piece's destination for each area (ruling 2: the position after
    the area's *first* occurrence, which is what gives the seed's shared-area directions)."""
    starts: dict[int, int] = {}
    for index, area in enumerate(loop):
        starts.setdefault(area, (index + 1) % len(loop))
    return starts


_STARTS: tuple[dict[int, int], dict[int, int]] = (
    _start_positions(LOOPS[0]),
    _start_positions(LOOPS[1]),
)

#: Ruling 7: setup patterns, each area's three letters listed bottom to top (ruling 3). The
#: seed's D duplicates C; the rulings replace it with the source implementation's D.
PATTERNS: dict[str, dict[int, str]] = {
    "A": {1: "MMM", 2: "KMK", 3: "MAM", 4: "MMM", 5: "MMM", 6: "MCM", 7: "PMP", 8: "MMM"},
    "B": {1: "MMM", 2: "MCM", 3: "MMM", 4: "MAM", 5: "PMP", 6: "MMM", 7: "MMM", 8: "KMK"},
    "C": {1: "MMM", 2: "MCM", 3: "PMP", 4: "MAM", 5: "MMM", 6: "MMM", 7: "KMK", 8: "MMM"},
    "D": {1: "MMM", 2: "PMK", 3: "MCM", 4: "KMK", 5: "MMM", 6: "MMM", 7: "MAM", 8: "MMM"},
    "E": {1: "MMM", 2: "MAM", 3: "KMK", 4: "MMM", 5: "MMM", 6: "PMP", 7: "MCM", 8: "MMM"},
}
PATTERN_NAMES: tuple[str, ...] = tuple(PATTERNS)


def initial_areas(pattern: str) -> list[str]:
    """The ten stacks at the start of a game with ``pattern`` (bases empty)."""
    layout = PATTERNS[pattern]
    return [layout.get(area, "") for area in range(AREA_COUNT)]


def selectable_areas(areas: list[str], seat: int) -> list[int]:
    """Areas ``seat`` may sow from now: selectable by that seat and holding a piece."""
    return [area for area in SELECTABLE[seat] if areas[area]]


def sow(areas: list[str], seat: int, area: int) -> list[tuple[str, int]]:
    """Sow ``area`` for ``seat`` IN PLACE and return each piece's landing, in order.

    All pieces are picked up; the top one is sown first (ruling 3, last in, first out) and each
    arriving piece goes on top of its destination. A long sowing passes through the emptied
    source area and drops pieces there like anywhere else (ruling 2: nothing is skipped).
    The caller copies ``areas`` (``list(areas)``) first if it needs the old position.
    """
    loop = LOOPS[seat]
    size = len(loop)
    hand = areas[area]
    areas[area] = ""
    position = _STARTS[seat][area]
    landings: list[tuple[str, int]] = []
    for piece in reversed(hand):
        target = loop[position]
        areas[target] += piece
        landings.append((piece, target))
        position = (position + 1) % size
    return landings


def last_target(seat: int, area: int, count: int) -> int:
    """Where the last of ``count`` pieces sown from ``area`` by ``seat`` lands, without sowing:
    the bot uses it to try extra-turn moves first and to count them in its evaluation."""
    loop = LOOPS[seat]
    return loop[(_STARTS[seat][area] + count - 1) % len(loop)]
