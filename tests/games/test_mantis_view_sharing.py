"""Mantis views share their unchanged parts (between viewers of one state, and between
versions) so the diff skips them by identity. Sharing must never show up in what a viewer
gets: every view is what it would be built alone, stays so after later views are built, and
the diff between consecutive views turns one into the other exactly."""

from __future__ import annotations

import copy
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from playhall.games.mantis import GAME
from playhall.games.mantis.cards import BACK, BACK_NAMES, CODE, DECK_SIZE
from playhall.games.rng import Rng
from playhall_protocol import apply_diff, make_diff


def _alone(state: dict[str, Any]) -> dict[str, Any]:
    """The view built from scratch, sharing nothing."""
    nxt = state["next"]
    result = state["result"]
    last = state["last"]
    return {
        "seats": state["seats"],
        "turn": None if result is not None else state["turn"],
        "first": state["first"],
        "target": state["target"],
        "tanks": [[CODE[c] for c in tank] for tank in state["tanks"]],
        "scores": [len(p) for p in state["piles"]],
        "top_back": list(BACK_NAMES[BACK[state["deck"][nxt]]]) if nxt < DECK_SIZE else None,
        "cards_left": DECK_SIZE - nxt,
        "last": None if last is None else dict(last),
        "left": list(state.get("out", [])),
        "outcome": None
        if result is None
        else {
            "winners": list(result["winners"]),
            "scores": list(result["scores"]),
            "reason": result["reason"],
            **({"left": list(result["left"])} if "left" in result else {}),
        },
    }


def _bytes(value: Any) -> bytes:
    packed: bytes = msgpack.packb(value)
    return packed


@settings(deadline=None, max_examples=30)
@given(st.integers(2, 6), st.integers(0, 2**32), st.sampled_from([0, 5, 105]))
def test_shared_views_are_exact_and_diff_exactly(seats: int, seed: int, target: int) -> None:
    state = GAME.setup(seats, {"target": target}, seed)
    rng = Rng(seed ^ 0x51)
    viewers: list[int | None] = [*range(seats), None]
    previous = [GAME.view(state, v) for v in viewers]
    kept = [(view, _bytes(view)) for view in previous]
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        moves = GAME.legal_moves(state, seat)
        playing = [s for s in range(seats) if s not in state.get("out", ())]
        if rng.below(40) == 0:
            # Now and then a seat leaves (Ruling 10): the views still share nothing visible.
            state = GAME.leave(state, rng.choice(playing), "resignation").state
        else:
            state = GAME.apply(state, seat, moves[rng.below(len(moves))]).state
        current = [GAME.view(state, v) for v in viewers]
        for old, new in zip(previous, current, strict=True):
            assert _bytes(new) == _bytes(_alone(state))
            assert _bytes(apply_diff(copy.deepcopy(old), make_diff(old, new))) == _bytes(new)
        previous = current
        kept.extend((view, _bytes(view)) for view in current)
    # Building later views never changed an earlier one.
    for view, packed in kept:
        assert _bytes(view) == packed
