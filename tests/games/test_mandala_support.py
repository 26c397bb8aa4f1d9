"""Helpers for the Mandala tests (no tests here): hand-built positions and invariant checks.

Positions are built from a real setup with the parts a test cares about overwritten, so every
other field keeps the engine's own shape. Card conservation is not kept by hand-built positions;
the property tests check it on real games.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from playhall.games.contract import State
from playhall.games.mandala import GAME
from playhall.games.mandala.cards import COLOURS

Stacks = list[tuple[str, int]]


def counts(**given: int) -> dict[str, int]:
    """A full six-colour count pile, e.g. ``counts(red=2)``."""
    out = {c: 0 for c in COLOURS}
    for colour, n in given.items():
        assert colour in out, colour
        out[colour] = n
    return out


def position(
    mode: str = "standard",
    *,
    yoga: str = "full",
    deck: list[str] | None = None,
    discard: list[str] | None = None,
    mountains: tuple[Stacks, Stacks] = ([("red", 1)], [("blue", 1)]),
    fields: tuple[tuple[dict[str, int], dict[str, int]], ...] | None = None,
    hands: tuple[dict[str, int], dict[str, int]] | None = None,
    cups: tuple[dict[str, int], dict[str, int]] | None = None,
    rivers: tuple[list[str], list[str]] = ([], []),
    slot: int = 0,
    reshuffled: bool = False,
) -> State:
    """A state in ``mode`` with the given parts; the acting slot's phase is set consistently."""
    seats = 1 if mode == "solo" else 2
    state = GAME.setup(seats, GAME.normalize_options({"mode": mode, "yoga": yoga}), 1)
    state["deck"] = list(deck if deck is not None else ["green"] * 20)
    state["discard"] = list(discard or [])
    for mandala, stacks in zip(state["mandalas"], mountains, strict=True):
        mandala["mountain"] = [{"colour": c, "count": n} for c, n in stacks]
        mandala["fields"] = [counts(), counts()]
    for index, pair in enumerate(fields or ()):
        state["mandalas"][index]["fields"] = [dict(pair[0]), dict(pair[1])]
    default_hand = counts(red=2, orange=2, yellow=2)
    for p, player in enumerate(state["players"]):
        player["hand"] = dict(hands[p]) if hands else (
            default_hand if p == 0 or mode == "standard" else counts())
        player["cup"] = dict(cups[p]) if cups else counts()
        player["river"] = list(rivers[p])
    state["reshuffled"] = reshuffled
    state["slot"] = slot
    state["phase"] = "yoga" if mode == "solo" and slot > 0 else "action"
    return state


def all_cards(state: State) -> Counter[str]:
    """Every card wherever it is, by colour."""
    total: Counter[str] = Counter(state["deck"]) + Counter(state["discard"])
    for player in state["players"]:
        total.update(player["hand"])
        total.update(player["cup"])
        total.update(player["river"])
    for mandala in state["mandalas"]:
        for stack in mandala["mountain"]:
            total[stack["colour"]] += stack["count"]
        for field in mandala["fields"]:
            total.update(field)
    return total


def colour_areas(mandala: dict[str, Any]) -> list[list[str]]:
    """The colours in each of a mandala's three areas: mountain, field 0, field 1."""
    mountain = [s["colour"] for s in mandala["mountain"]]
    return [mountain] + [[c for c, n in f.items() if n > 0] for f in mandala["fields"]]


def check_invariants(state: State) -> None:
    """108 cards, 18 a colour; rule of colour in both mandalas; rivers hold distinct colours."""
    cards = all_cards(state)
    assert sum(cards.values()) == 108, cards
    assert all(cards[c] == 18 for c in COLOURS), cards
    for mandala in state["mandalas"]:
        areas = colour_areas(mandala)
        seen = [c for area in areas for c in area]
        assert len(seen) == len(set(seen)), f"rule of colour broken: {areas}"
        assert all(s["count"] > 0 for s in mandala["mountain"])
        if state["phase"] != "over" and state["resolution"] is None:
            assert len(set(seen)) < 6, "a complete mandala was left unresolved"
    for player in state["players"]:
        assert len(player["river"]) == len(set(player["river"])) <= 6
        assert sum(player["hand"].values()) <= 8
    if state["mode"] == "solo":
        assert sum(state["players"][1]["hand"].values()) == 0, "Master Yoga has no hand"
