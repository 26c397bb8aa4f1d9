"""Mantis property tests: random legal games for 2..6 players.

At every step: all 105 cards are somewhere (draw pile + tanks + score piles), no viewer's
encoded view holds the code of any undrawn card or of any score-pile card (the one card just
flipped is public by Ruling 5's flip, so it may show in ``last`` even if it was scored), views
are the same for every viewer, and each move draws exactly one card, so a game lasts at most
``105 - 4 * seats`` moves. Games always end, and replaying the same moves from the same seed
gives the same bytes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from playhall.games.contract import Move, State
from playhall.games.mantis import GAME
from playhall.games.mantis.cards import CODE, DECK_SIZE
from playhall.games.rng import Rng
from tests.games.conformance import encode, play_random_game, replay

SEATS = st.integers(min_value=2, max_value=6)
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
TARGETS = st.integers(min_value=0, max_value=105)


def check_state(state: State) -> None:
    """The invariants of one position, for every viewer."""
    seats = state["seats"]
    undrawn = state["deck"][state["next"]:]
    tank_cards = [c for t in state["tanks"] for c in t]
    pile_cards = [c for p in state["piles"] for c in p]
    assert sorted(undrawn + tank_cards + pile_cards) == list(range(DECK_SIZE))
    assert len(state["deck"]) == DECK_SIZE

    last = state["last"]
    public_flip = None if last is None else last["card"]
    secret = [encode(CODE[c]) for c in undrawn + pile_cards if CODE[c] != public_flip]
    views = [GAME.view(state, v) for v in [*range(seats), None]]
    for view in views:
        blob = encode(view)
        assert not [s for s in secret if s in blob], "a hidden card shows in a view"
        assert view["scores"] == [len(p) for p in state["piles"]]
        assert view["cards_left"] == len(undrawn)
        assert sum(len(t) for t in view["tanks"]) == len(tank_cards)
    assert all(view == views[0] for view in views)

    if state["result"] is None:
        assert max(len(p) for p in state["piles"]) < state["target"]
        assert undrawn, "a game with an empty draw pile must be over"


@given(seats=SEATS, seed=SEEDS, target=TARGETS)
def test_random_games_conserve_cards_hide_secrets_and_end(seats: int, seed: int,
                                                          target: int) -> None:
    final, outcome, steps = play_random_game(
        GAME, seats, {"target": target}, seed, max_steps=DECK_SIZE, check=check_state
    )
    assert steps <= DECK_SIZE - 4 * seats
    assert final["next"] == 4 * seats + steps  # one card per move
    points = [len(p) for p in final["piles"]]
    assert outcome.scores == points
    assert outcome.winners
    if outcome.reason == "target_reached":
        (winner,) = outcome.winners
        assert points[winner] >= final["target"]
        # The game stopped at once: nobody else got there.
        assert all(p < final["target"] for s, p in enumerate(points) if s != winner)
    else:
        assert outcome.reason == "deck_exhausted"
        assert final["next"] == DECK_SIZE
        assert all(points[w] == max(points) for w in outcome.winners)


@given(seats=SEATS, seed=SEEDS)
def test_replay_is_byte_identical(seats: int, seed: int) -> None:
    options: dict[str, Any] = {}
    state = GAME.setup(seats, GAME.normalize_options(options), seed)
    rng = Rng(seed ^ 0xD17E)
    log: list[tuple[int | None, Move | str]] = []
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        move = rng.choice(GAME.legal_moves(state, seat))
        log.append((seat, move))
        state = GAME.apply(state, seat, move).state
    again = replay(GAME, seats, options, seed, log)
    assert encode(again) == encode(state)
    assert encode(GAME.setup(seats, GAME.normalize_options(options), seed)) == encode(
        GAME.setup(seats, GAME.normalize_options(options), seed)
    )
