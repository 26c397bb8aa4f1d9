"""Mandragora Mania property tests: random legal games never crash, conserve the 24 pieces,
keep every score equal to the value of the pieces in that seat's base, show every viewer the
same (fully public) board, always end, and replay byte for byte."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from playhall.games.contract import Move, State
from playhall.games.mandragora import GAME
from playhall.games.mandragora.board import PATTERNS
from playhall.games.mandragora.pieces import value
from playhall.games.rng import Rng
from tests.games.conformance import encode, play_random_game, replay

seeds = st.integers(min_value=0, max_value=2**64 - 1)
options = st.fixed_dictionaries({
    "pattern": st.sampled_from(["random", "A", "B", "C", "D", "E"]),
    "first": st.sampled_from(["random", "0", "1", 0, 1]),
})


def invariants() -> Callable[[State], None]:
    """A checker that also remembers the previous state, to see that bases only ever grow."""
    previous: dict[str, Any] = {}

    def check(state: State) -> None:
        areas = state["areas"]
        pieces = Counter("".join(areas))
        assert pieces == Counter("".join(PATTERNS[state["pattern"]].values()))
        assert sum(pieces.values()) == 24
        for seat, base in ((0, 0), (1, 9)):
            moved_first = seat == state["first"]
            assert state["scores"][seat] == sum(value(p, moved_first) for p in areas[base])
            if previous:
                assert areas[base].startswith(previous["areas"][base])
        if state["turn"] is None:
            assert GAME.outcome(state) is not None
        else:
            assert GAME.outcome(state) is None and GAME.legal_moves(state, state["turn"])
        views = [GAME.view(state, viewer) for viewer in (0, 1, None)]
        # Perfect information: the seats' views differ from the spectator's only in "you".
        assert views[0] == {**views[2], "you": 0} and views[1] == {**views[2], "you": 1}
        assert ["".join(stack) for stack in views[2]["areas"]] == areas
        previous.update(state)

    return check


@given(seed=seeds, opts=options)
def test_random_games_conserve_pieces_score_by_base_and_end(seed: int,
                                                           opts: dict[str, Any]) -> None:
    state, outcome, steps = play_random_game(GAME, 2, opts, seed, max_steps=5_000,
                                             check=invariants())
    assert steps > 0 and outcome.reason == "no_moves"
    assert outcome.scores == state["scores"]
    stuck = state["stuck"]
    assert not [a for a in ((1, 2, 3, 4, 5), (2, 4, 6, 7, 8))[stuck] if state["areas"][a]]
    high = max(outcome.scores)
    assert outcome.winners == ([] if outcome.scores[0] == outcome.scores[1]
                               else [outcome.scores.index(high)])


@given(seed=seeds, opts=options)
def test_replay_is_byte_identical_and_turns_follow_the_last_landing(
        seed: int, opts: dict[str, Any]) -> None:
    state = GAME.setup(2, GAME.normalize_options(opts), seed)
    rng = Rng(seed ^ 0xD1CE)
    log: list[tuple[int | None, Move | str]] = []
    snapshots = []
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        move = rng.choice(GAME.legal_moves(state, seat))
        result = GAME.apply(state, seat, move)
        lands = [e for e in result.events if e["type"] == "land"]
        assert len(lands) == len(state["areas"][move["area"]])
        base = (0, 9)[seat]
        extra = lands[-1]["area"] == base
        if result.state["turn"] is not None:
            assert result.state["turn"] == (seat if extra else 1 - seat)
        log.append((seat, move))
        snapshots.append(encode(result.state))
        state = result.state
    assert encode(replay(GAME, 2, opts, seed, log)) == encode(state)
    assert encode(replay(GAME, 2, opts, seed, log[: len(log) // 2])) == (
        snapshots[len(log) // 2 - 1] if len(log) >= 2 else encode(replay(GAME, 2, opts, seed, [])))
