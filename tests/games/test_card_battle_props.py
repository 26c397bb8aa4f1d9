"""Property tests: random legal decks and random games always end, keep the invariants, never
raise player HP, never let a dead card attack, never leak a hidden deck, and replay exactly."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given
from hypothesis import strategies as st

from playhall.games.card_battle import GAME
from playhall.games.card_battle.cards import CARD_TYPES, DECK_TYPES, STRATEGIES
from playhall.games.contract import Move, State
from playhall.games.rng import Rng
from tests.games.conformance import encode, play_random_game, replay, step
from tests.games.test_card_battle_support import deck_move, start_battle

NAMES = sorted(CARD_TYPES)

decks = st.builds(
    deck_move,
    st.lists(st.sampled_from(NAMES), min_size=20, max_size=20),
    st.sampled_from(sorted(DECK_TYPES)),
    st.sampled_from(STRATEGIES),
)


def random_deck(rng: Rng) -> Move:
    return deck_move([rng.choice(NAMES) for _ in range(20)], rng.choice(sorted(DECK_TYPES)),
                     rng.choice(STRATEGIES))


def fill(state: State, seat: int, template: Move, rng: Rng) -> Move:
    return random_deck(rng)


def check_invariants(state: State) -> None:
    for player in state["players"]:
        field = player["field"]
        assert len(field) <= 5
        assert all(c["hp"] > 0 for c in field), "a dead card stayed on the field"
        assert len({c["id"] for c in field}) == len(field)
        assert all(c["id"] < player["next"] <= 20 for c in field)
        assert all(0 <= c["hp"] <= c["max_hp"] for c in field)
        if state["phase"] == "battle" and state["turn"] > 0:
            assert all(c["active"] and not c["attacked"] for c in field)
    if state["phase"] == "deck":
        assert state["turn"] == 0


def check_hidden(state: State) -> None:
    """While exactly one deck is in, swapping it for another changes nothing the other seat
    or a spectator is shown."""
    if state["phase"] != "deck":
        return
    for seat in (0, 1):
        if state["players"][seat]["deck"] is None:
            continue
        other = dict(state, players=list(state["players"]))
        other["players"][seat] = dict(other["players"][seat],
                                      deck={"cards": ["knight"] * 20, "deck_type": "angry",
                                            "strategy": "target-mana", "ready": None})
        for viewer in (1 - seat, None):
            assert encode(GAME.view(state, viewer)) == encode(GAME.view(other, viewer))


@given(decks, decks, st.integers(0, 2**64 - 1))
def test_random_legal_decks_always_end_hp_never_rises_dead_never_attack(
        d0: Move, d1: Move, seed: int) -> None:
    state = start_battle(d0, d1, seed=seed)
    dead: set[tuple[int, int]] = set()
    hp = [200, 200]
    for _ in range(200):
        if GAME.outcome(state) is not None:
            break
        result = GAME.apply_auto(state)
        for event in result.events:
            if event["type"] in ("attack", "direct_hit"):
                assert (event["seat"], event["card"]) not in dead, "a dead card attacked"
            if event["type"] == "death":
                dead.add((event["seat"], event["card"]))
        state = result.state
        check_invariants(state)
        now = [p["hp"] for p in state["players"]]
        assert all(n <= h for n, h in zip(now, hp, strict=True)), "player HP went up"
        hp = now
        on_field = {(s, c["id"]) for s, p in enumerate(state["players"]) for c in p["field"]}
        assert not on_field & dead
    outcome = GAME.outcome(state)
    assert outcome is not None, "battle did not end in 200 turns"
    assert outcome.scores == hp
    if outcome.reason == "knockout":
        assert len(outcome.winners) == 1 and hp[1 - outcome.winners[0]] <= 0
        assert hp[outcome.winners[0]] > 0
    else:
        assert outcome.reason == "deck_exhausted"


@given(st.integers(0, 2**64 - 1))
def test_random_games_keep_the_contract_and_hide_the_decks(seed: int) -> None:
    def check(state: State) -> None:
        check_invariants(state)
        check_hidden(state)

    state, outcome, steps = play_random_game(GAME, 2, {"turn_delay_ms": 0}, seed, fill=fill,
                                             check=check)
    assert outcome.reason in ("knockout", "deck_exhausted")
    assert GAME.to_act(state) == [] and GAME.auto_delay(state) is None
    assert steps >= 3  # two deck moves and at least one battle turn


def _record(seed: int) -> tuple[list[tuple[int | None, Move | str]], State]:
    state = GAME.setup(2, GAME.normalize_options({}), seed)
    rng = Rng(seed)
    moves: list[tuple[int | None, Move | str]] = []
    while GAME.outcome(state) is None:
        if GAME.auto_delay(state) is not None:
            result, seat = step(GAME, state, rng, fill)
            moves.append((None, {}))
        else:
            seat = GAME.to_act(state)[0]
            move = random_deck(rng)
            result = GAME.apply(state, seat, move)
            moves.append((seat, move))
        state = result.state
    return moves, state


@given(st.integers(0, 2**64 - 1))
def test_replay_is_byte_identical(seed: int) -> None:
    moves, final = _record(seed)
    again = replay(GAME, 2, {}, seed, moves)
    assert encode(again) == encode(final)


def test_a_state_restored_mid_battle_resumes_with_the_same_dice() -> None:
    state = start_battle({"type": "pick_deck", "deck": "rush"},
                         {"type": "pick_deck", "deck": "rush"}, seed=99)
    for _ in range(3):
        state = GAME.apply_auto(state).state
    restored: dict[str, Any] = msgpack.unpackb(encode(state), raw=False)
    a, b = state, restored
    while GAME.outcome(a) is None:
        ra, rb = GAME.apply_auto(a), GAME.apply_auto(b)
        assert ra.events == rb.events
        a, b = ra.state, rb.state
    assert encode(a) == encode(b)
    # Mirror decks: the dice alone decide ties, and they did roll.
    assert GAME.outcome(b) is not None
