"""Scores and the result (ruling 9 for the standard game, ruling 14 for solo)."""

from __future__ import annotations

from typing import Any

from playhall.games.contract import Outcome, State

from .cards import total


def score(player: dict[str, Any]) -> int:
    """Each cup card scores the number (1-6) of the river space holding its colour; cup cards of
    a colour not in the river score nothing; river cards themselves score nothing."""
    river = player["river"]
    return sum(player["cup"][colour] * (space + 1) for space, colour in enumerate(river))


def outcome(state: State) -> Outcome | None:
    """Scores are ``[player 0, player 1]``; in solo that is ``[human, Master Yoga]``."""
    if state["phase"] != "over":
        return None
    players = state["players"]
    scores: list[int | float | str] = [score(p) for p in players]
    left = state.get("left")
    if left is not None:
        # A player left (resigned, or forfeited on time): the other player wins; in solo that
        # is Master Yoga, who has no seat, so nobody is listed.
        winners = [] if state["mode"] == "solo" else [1 - left]
        return Outcome(winners=winners, scores=scores, reason=state["end"], left=(left,))
    a, b = score(players[0]), score(players[1])
    if state["mode"] == "solo":
        # Ruling 14: only a strictly higher score wins; Yoga has no seat, so his win is no winner.
        return Outcome(winners=[0] if a > b else [], scores=scores, reason=state["end"])
    if a != b:
        return Outcome(winners=[0 if a > b else 1], scores=scores, reason=state["end"])
    cups = total(players[0]["cup"]), total(players[1]["cup"])
    if cups[0] != cups[1]:
        return Outcome(winners=[0 if cups[0] < cups[1] else 1], scores=scores, reason=state["end"])
    return Outcome(winners=[], scores=scores, reason=state["end"])
