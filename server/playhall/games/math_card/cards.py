"""The card pool as one data table, plus the questions the rules ask about a card.

Kept as data (not classes) so the view can ship the pool to clients unchanged and so adding a card
is adding a row. Effects are code keyed by card id in :mod:`.effects`; function maths in
:mod:`.functions`. Ids ``0000xx`` are the original pool; ``1xxxxx`` are the project's additions.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Card(TypedDict):
    """One row of the pool. ``value`` is the formula's value for cards that can be values."""

    name: str
    kind: str  # value | value_assertion | assertion | operator | function | legend
    formula: str
    categories: list[str]
    vp: int
    dp: int
    pvp: int
    value: int | None
    colour: str
    text: str
    addition: bool


def _card(
    name: str,
    kind: str,
    formula: str,
    categories: str,
    vp: int = 0,
    dp: int = 0,
    value: int | None = None,
    colour: str = "",
    text: str = "",
    pvp: int = 0,
    addition: bool = False,
) -> Card:
    """A table row with the defaults spelled once (colour follows the kind unless given)."""
    default_colour = {
        "value": "yellow",
        "value_assertion": "yellow/red",
        "assertion": "red",
        "operator": "blue",
        "legend": "orange",
    }
    return Card(
        name=name,
        kind=kind,
        formula=formula,
        categories=[c for c in categories.split(",") if c],
        vp=vp,
        dp=dp,
        pvp=pvp,
        value=value,
        colour=colour or default_colour.get(kind, ""),
        text=text,
        addition=addition,
    )


CARDS: dict[str, Card] = {
    "000001": _card(
        "Junior Number One",
        "value_assertion",
        "1",
        "Natural,Assertion,Odd",
        1,
        1,
        1,
        text="When set as a value: search your deck for a Natural assertion card.",
    ),
    "000002": _card(
        "Addition",
        "operator",
        "? + ?",
        "Symmetry,Operator",
        text="When set: swap the places of two cards in value slots on the field.",
    ),
    "000003": _card(
        "It is an even number!",
        "assertion",
        "x ≡ 0 (mod 2)",
        "Assertion,Natural,Even",
        1,
        1,
        text="When placed: you may discard an Even card from hand, then draw 1.",
    ),
    "000004": _card(
        "Number Zero",
        "value",
        "0",
        "Natural,Even",
        value=0,
        text="Once per turn, when set as a value or put into the discard pile: "
        "search your deck for an assertion card.",
    ),
    "000005": _card("Number Two", "value", "2", "Natural,Even", value=2),
    "000006": _card("Number Three", "value_assertion", "3", "Natural,Odd", 1, 1, 3),
    "000007": _card("Number Four", "value_assertion", "4", "Natural,Even", 1, 1, 4),
    "000008": _card(
        "Number Five",
        "value_assertion",
        "4 + 1",
        "Natural,Odd",
        1,
        1,
        5,
        text="When set as a value with exactly 5 cards on the field: "
        "you may set one more value this turn.",
    ),
    "000009": _card(
        "SIX",
        "value_assertion",
        "7 − 1",
        "Natural,Even",
        1,
        1,
        6,
        text="With exactly 6 cards in hand: discard this card; "
        "the opponent discards a card of their choice.",
    ),
    "000010": _card("Number Seven", "value_assertion", "7", "Natural,Odd", 2, 1, 7),
    "000011": _card(
        "Number Eight",
        "value_assertion",
        "8",
        "Natural,Even",
        1,
        1,
        8,
        text="When set as a value or discarded: move an assertion from a public "
        "area into your or the opponent's private area.",
    ),
    "000012": _card(
        "Nine",
        "value_assertion",
        "9",
        "Natural,Odd",
        1,
        1,
        9,
        text="When set as a value: search your deck for a card whose value is 1.",
    ),
    "000013": _card("Subtraction", "operator", "L − R", "Operator"),
    "000014": _card("Multiplication", "operator", "? × ?", "Symmetry,Operator"),
    "000015": _card("Division", "operator", "L / R", "Operator"),
    "000016": _card(
        "Round & Add",
        "operator",
        "⌊?⌋ + ?",
        "Symmetry,Operator",
        text="Floor of one operand (the scorer chooses which) plus the other.",
    ),
    "000017": _card(
        "Magic Division",
        "operator",
        "? / ?",
        "Symmetry,Operator",
        text="The scorer chooses which operand divides which.",
    ),
    "000018": _card("Is an integer", "assertion", "⌊x⌋ = x", "Assertion", 1, 1),
    "000019": _card("Is a Rational Number", "assertion", "x = p/q", "Assertion", 1, 1),
    "000020": _card(
        "It is an Odd number!",
        "assertion",
        "x ≡ 1 (mod 2)",
        "Assertion,Natural,Odd",
        1,
        1,
        text="When placed: you may discard an Odd card from hand, then draw 1.",
    ),
    "000021": _card(
        "Puzzle Assertion",
        "assertion",
        "???",
        "Assertion,Delay",
        text="Placed with a value card from hand face down beneath it. At scoring: "
        "lane value = that value, VP = DP = ⌊value/2⌋; against a lane with no "
        "value it is false with DP 2.",
    ),
    "000022": _card(
        "Multiples of three!",
        "assertion",
        "x ≡ 0 (mod 3)",
        "Assertion",
        2,
        1,
        text="When placed: rearrange up to three operator cards on the field among their slots.",
    ),
    "000023": _card(
        "Mathematical induction",
        "legend",
        "∞",
        "Legend",
        text="Once per turn, when you set a Natural value card of value n: "
        "search your deck for a card of value n + 1.",
    ),
    # -- additions (project design) ------------------------------------------------------------
    "100001": _card(
        "Doubling",
        "function",
        "y = 2x",
        "Function",
        pvp=2,
        colour="blue/yellow",
        text="Temporary calculation (2 PVP) or operator-value.",
        addition=True,
    ),
    "100002": _card(
        "Successor",
        "function",
        "y = x + 1",
        "Function",
        pvp=1,
        colour="green",
        text="Temporary calculation (1 PVP). Effect: draw 1 card.",
        addition=True,
    ),
    "100003": _card(
        "Square",
        "function",
        "y = x²",
        "Function",
        pvp=3,
        colour="blue/green/yellow",
        text="Temporary calculation (3 PVP), operator-value, or effect: search your "
        "deck for a card that can be a value.",
        addition=True,
    ),
    "100004": _card(
        "Halving",
        "function",
        "y = x / 2",
        "Function",
        pvp=1,
        colour="blue/yellow",
        text="Temporary calculation (1 PVP) or operator-value.",
        addition=True,
    ),
    "100101": _card(
        "Euler's Identity",
        "legend",
        "e^iπ + 1 = 0",
        "Legend",
        colour="rainbow",
        text="Turn start phase: you gain 1 PVP. Uses no legend slot.",
        addition=True,
    ),
}

#: Operators whose operands the scorer may exchange (``?`` in the formula) and that differ when
#: exchanged. ``? + ?`` and ``? × ?`` are symmetric anyway, so orienting them changes nothing.
ORIENTABLE = frozenset({"000016", "000017"})


def card(card_id: str) -> Card:
    return CARDS[card_id]


def can_be_value(card_id: str) -> bool:
    return CARDS[card_id]["kind"] in ("value", "value_assertion")


def can_be_assertion(card_id: str) -> bool:
    return CARDS[card_id]["kind"] in ("assertion", "value_assertion")


def is_operator(card_id: str) -> bool:
    return CARDS[card_id]["kind"] == "operator"


def is_function(card_id: str) -> bool:
    return CARDS[card_id]["kind"] == "function"


def is_legend(card_id: str) -> bool:
    return CARDS[card_id]["kind"] == "legend"


def is_rainbow(card_id: str) -> bool:
    return CARDS[card_id]["colour"] == "rainbow"


def has_category(card_id: str, category: str) -> bool:
    return category in CARDS[card_id]["categories"]


def function_uses(card_id: str) -> set[str]:
    """Which of the three function uses a function card allows, from its colour (ruling 10)."""
    colour = CARDS[card_id]["colour"]
    uses = {"calc"}
    if "blue" in colour and "yellow" in colour:
        uses.add("operator_value")
    if "green" in colour:
        uses.add("effect")
    return uses


def deck_vp(card_id: str) -> int:
    """VP that counts towards the deck check: printed VP of cards that can be assertions (the
    puzzle's printed VP is none, so 0 — a project decision)."""
    return CARDS[card_id]["vp"] if can_be_assertion(card_id) else 0


def pool_view() -> dict[str, Any]:
    """The pool as clients see it (plain data)."""
    return {
        cid: {k: (list(v) if isinstance(v, list) else v) for k, v in row.items()}
        for cid, row in CARDS.items()
    }
