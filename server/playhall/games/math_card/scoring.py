"""End-of-game scoring (rulings 9, 13-15) as pure functions over the board.

Everything is computed with exact :class:`fractions.Fraction` and only leaves this module as
``[num, den]`` int pairs, so states and views stay plain data. The same functions serve the engine
(at the end) and the bot (estimating a board from its view: a hidden puzzle is then skipped).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Any

from .board import PUBLIC, Lanes, Slot, private_lanes
from .cards import ORIENTABLE, card
from .functions import apply_function

PUZZLE = "000021"
PUBLIC_AREAS = ("left", "right")


def pair(x: Fraction | None) -> list[int] | None:
    """A fraction as plain data."""
    return None if x is None else [x.numerator, x.denominator]


def unpair(p: list[int] | None) -> Fraction | None:
    return None if p is None else Fraction(p[0], p[1])


def read_sequence(lanes: Lanes, lane: int, from_left: bool = True) -> list[Slot]:
    """A lane's slots in reading order (private lanes: owner's left to right; public lane:
    from the left or from the right end, ruling 14)."""
    row = lanes[lane]
    return list(row) if from_left else list(reversed(row))


def _operate(op_id: str, left: Fraction, right: Fraction, flip: bool) -> Fraction | None:
    """One operator; ``flip`` exchanges the operands of a ``?`` operator (ruling 9)."""
    if op_id == "000002":
        return left + right
    if op_id == "000013":
        return left - right
    if op_id == "000014":
        return left * right
    if op_id in ("000015", "000017"):
        num, den = (right, left) if flip and op_id == "000017" else (left, right)
        return None if den == 0 else num / den
    if op_id == "000016":
        return Fraction(left.__floor__()) + right if not flip else left + right.__floor__()
    raise ValueError(f"not an operator: {op_id}")


def orientable_positions(seq: list[Slot]) -> list[int]:
    """Indices (in reading order) of the operators whose orientation matters."""
    return [
        i
        for i, e in enumerate(seq)
        if i % 2 == 1 and e is not None and e["card"] in ORIENTABLE and "part" not in e
    ]


def evaluate(seq: list[Slot], flips: frozenset[int] = frozenset()) -> Fraction | None:
    """The value of the filled run from the start (ruling 13), or None (empty, division by 0).

    No precedence: left to right. A trailing operator is dropped. An operator-value function card
    in an operator slot maps the running value (ruling 10)."""
    run: list[dict[str, Any]] = []
    for entry in seq:
        if entry is None:
            break
        run.append(entry)
    if not run or "part" in run[0]:
        return None
    first = card(run[0]["card"])["value"]
    if first is None:
        return None
    acc = Fraction(first)
    for i in range(1, len(run) - 1, 2):
        op, operand = run[i], run[i + 1]
        if card(op["card"])["kind"] == "function":
            acc = apply_function(op["card"], acc)
            continue
        value = card(operand["card"])["value"]
        if value is None:
            return None
        result = _operate(op["card"], acc, Fraction(value), i in flips)
        if result is None:
            return None
        acc = result
    return acc


def flip_choices(seq: list[Slot]) -> list[frozenset[int]]:
    """Every orientation of the lane's ``?`` operators, no flips first (the tie-break)."""
    spots = orientable_positions(seq)
    return [
        frozenset(s for s, on in zip(spots, bits, strict=True) if on)
        for bits in product((False, True), repeat=len(spots))
    ]


def puzzle_value(entry: dict[str, Any]) -> int | None:
    """The face-down card's value, or None when it is hidden from whoever is scoring."""
    under = entry.get("under")
    return None if under is None else card(under)["value"]


def assertion_vp(entry: dict[str, Any]) -> int:
    """VP of an assertion as it counts in the public direction sums (ruling 14)."""
    if entry["card"] == PUZZLE:
        v = puzzle_value(entry)
        return 0 if v is None else v // 2
    return card(entry["card"])["vp"]


def judge(entry: dict[str, Any], x: Fraction | None) -> tuple[bool, int, int] | None:
    """(true?, VP, DP) of an assertion against a lane value, or None when the combination is
    skipped (no value, ruling 13; or a puzzle hidden from the scorer)."""
    cid = entry["card"]
    info = card(cid)
    if cid == PUZZLE:
        v = puzzle_value(entry)
        if v is None:
            return None
        if x is None:
            return (False, 0, 2)
        return (x == v, v // 2, v // 2)
    if x is None:
        return None
    integer = x.denominator == 1
    if cid == "000003":
        ok = integer and x.numerator % 2 == 0
    elif cid == "000020":
        ok = integer and x.numerator % 2 == 1
    elif cid == "000018":
        ok = integer
    elif cid == "000019":
        ok = True
    elif cid == "000022":
        ok = integer and x.numerator % 3 == 0
    else:  # a value-assertion: lane value equals its formula's value
        ok = x == info["value"]
    return (ok, info["vp"], info["dp"])


def points(entry: dict[str, Any], x: Fraction | None, strict: bool) -> int | None:
    """What one combination is worth; ``strict`` combinations lose DP when false (ruling 15)."""
    verdict = judge(entry, x)
    if verdict is None:
        return None
    ok, vp, dp = verdict
    if ok:
        return vp
    return -dp if strict else 0


def _best_lane(
    seq: list[Slot], groups: list[tuple[list[dict[str, Any]], bool]]
) -> tuple[int, Fraction | None, frozenset[int]]:
    """Orient the lane's ``?`` operators once for all of a player's combinations with it."""
    best: tuple[int, Fraction | None, frozenset[int]] | None = None
    for flips in flip_choices(seq):
        x = evaluate(seq, flips)
        total = sum(
            p
            for entries, strict in groups
            for e in entries
            if (p := points(e, x, strict)) is not None
        )
        if best is None or total > best[0]:
            best = (total, x, flips)
    assert best is not None
    return best


def _combos(
    seat: int,
    lane: int,
    seq: list[Slot],
    x: Fraction | None,
    groups: list[tuple[str, list[dict[str, Any]], bool]],
) -> list[dict[str, Any]]:
    """The scored combinations of one lane for the result breakdown."""
    out = []
    for area, entries, strict in groups:
        for e in entries:
            p = points(e, x, strict)
            out.append(
                {
                    "seat": seat,
                    "lane": lane,
                    "area": area,
                    "card": e["card"],
                    "value": pair(x),
                    "points": p,
                }
            )
    return out


def score_lanes(
    board: dict[str, Any], seat: int, public_from_left: bool
) -> tuple[int, list[dict[str, Any]]]:
    """One player's VP from the three combination kinds (ruling 15), with the public lane read
    in the given direction."""
    areas = board["areas"]
    lanes: Lanes = board["lanes"]
    own = areas[f"private{seat}"]
    public_asserts = [("left", areas["left"], True), ("right", areas["right"], True)]
    total = 0
    combos: list[dict[str, Any]] = []
    for lane in private_lanes(seat):
        seq = read_sequence(lanes, lane)
        groups = [*public_asserts, (f"private{seat}", own, False)]
        got, x, _ = _best_lane(seq, [(entries, strict) for _, entries, strict in groups])
        total += got
        combos += _combos(seat, lane, seq, x, groups)
    seq = read_sequence(lanes, PUBLIC, public_from_left)
    got, x, _ = _best_lane(seq, [(own, True)])
    total += got
    combos += _combos(seat, PUBLIC, seq, x, [(f"private{seat}", own, True)])
    return total, combos


def public_direction(board: dict[str, Any], first: int) -> bool:
    """True when the public lane is read from the left (ruling 14). On equal sums the second
    player picks: best margin over the first player, then most VP, then from the left."""
    left = sum(assertion_vp(e) for e in board["areas"]["left"])
    right = sum(assertion_vp(e) for e in board["areas"]["right"])
    if left != right:
        return left < right
    second = 1 - first

    def key(from_left: bool) -> tuple[int, int]:
        mine = score_lanes(board, second, from_left)[0]
        theirs = score_lanes(board, first, from_left)[0]
        return (mine - theirs, mine)

    return key(True) >= key(False)


def score_board(board: dict[str, Any], first: int) -> dict[str, Any]:
    """Both players' VP, the public direction and every scored combination."""
    from_left = public_direction(board, first)
    vp = []
    combos: list[dict[str, Any]] = []
    for seat in (0, 1):
        got, mine = score_lanes(board, seat, from_left)
        vp.append(got)
        combos += mine
    return {"vp": vp, "public_direction": "left" if from_left else "right", "combos": combos}


def lane_values(lanes: Lanes) -> list[list[int] | None]:
    """Each lane's value as printed (no flips; public from the left): a display aid."""
    return [pair(evaluate(read_sequence(lanes, lane))) for lane in range(len(lanes))]
