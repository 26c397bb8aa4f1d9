"""Property tests: random legal games with the ready-made (and random legal) decks never crash,
conserve every card, hide what must stay hidden, always end, and replay byte for byte."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from playhall.games.contract import Move, State, clone
from playhall.games.math_card import GAME, MathCardGame
from playhall.games.math_card.board import is_value_slot
from playhall.games.math_card.cards import CARDS, can_be_value, is_function, is_operator
from playhall.games.math_card.decks import READY_DECKS, validate_deck
from playhall.games.rng import Rng, seed_state
from tests.games.conformance import encode, play_random_game, replay
from tests.games.test_math_card_support import count_cards

seeds = st.integers(min_value=0, max_value=2**63 - 1)


class NoResign(MathCardGame):
    """The real engine, minus resignation in the random walk (it would end most games at
    once and hide the rest of the rules from the property tests)."""

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        moves = super().legal_moves(state, seat)
        return [m for m in moves if m["type"] != "resign"] or moves


PLAYER = NoResign()


def fill(state: State, seat: int, move: Move, rng: Rng) -> Move:
    """Fill the submit_deck template: a random legal deck, or a ready-made one."""
    if rng.below(2):
        return {"type": "submit_deck", "cards": list(rng.choice(list(READY_DECKS.values())))}
    ids = sorted(CARDS)
    size = rng.between(40, 60)
    cards = [rng.choice(ids) for _ in range(size)]
    return {"type": "submit_deck", "cards": validate_deck(cards)}


def invariants(state: State) -> None:
    """Conservation, bounds, and slot kinds."""
    for seat in (0, 1):
        p = state["players"][seat]
        if state["first"] is not None:
            assert count_cards(state, seat) == len(p["decklist"])
        assert p["pvp"] >= 0
    for row in state["lanes"]:
        for slot, entry in enumerate(row):
            if entry is None:
                continue
            if "part" in entry:
                assert is_value_slot(slot) and is_function(row[slot - 1]["card"])
            elif is_value_slot(slot):
                assert can_be_value(entry["card"])
            else:
                assert is_operator(entry["card"]) or is_function(entry["card"])
    if state["phase"] == "action" and not state["pending"]:
        turn = state["turn"]
        assert turn["value_actions"] <= turn["value_limit"]
        assert not (turn["public_value"] and turn["public_operator"])


def perturb(state: State, viewer: int | None) -> State:
    """Change everything ``viewer`` may not know: others' hands and deck order and content,
    others' hidden puzzle cards, the RNG."""
    out: State = clone(state)
    out["rng"] = seed_state(0xABCDEF)
    for seat in (0, 1):
        if seat == viewer:
            continue
        p = out["players"][seat]
        p["hand"] = ["000013"] * len(p["hand"])
        p["deck"] = ["000014"] * len(p["deck"])
        if state["first"] is None and p["decklist"] is not None:
            p["decklist"] = ["000013"] * 40  # not public until both decks are in
        if state["phase"] != "over":
            for entries in out["areas"].values():
                for e in entries:
                    if "under" in e and e["owner"] == seat:
                        e["under"] = "000012" if e["under"] != "000012" else "000004"
    return out


def hidden_check(state: State) -> None:
    invariants(state)
    for viewer in (0, 1, None):
        assert GAME.view(state, viewer) == GAME.view(perturb(state, viewer), viewer)


@given(seeds)
def test_random_games_end_conserve_cards_and_hide_secrets(seed: int) -> None:
    _, outcome, steps = play_random_game(PLAYER, 2, {}, seed, fill=fill, check=hidden_check)
    assert outcome.reason in ("pvp_target", "public_lane_full", "deck_empty")
    assert steps > 2


@given(seeds)
def test_random_games_with_resignation_allowed(seed: int) -> None:
    _, outcome, _ = play_random_game(GAME, 2, {}, seed, fill=fill, check=invariants)
    assert outcome.reason in ("pvp_target", "public_lane_full", "deck_empty", "resigned")
    if outcome.reason == "resigned":
        assert len(outcome.winners) == 1


def _record(seed: int) -> tuple[list[tuple[int | None, Move | str]], State, list[dict[str, Any]]]:
    state = PLAYER.setup(2, {}, seed)
    rng = Rng(seed)
    log: list[tuple[int | None, Move | str]] = []
    events: list[dict[str, Any]] = []
    while PLAYER.outcome(state) is None:
        seat = rng.choice(PLAYER.to_act(state))
        move = rng.choice(PLAYER.legal_moves(state, seat))
        if move.get("template"):
            move = fill(state, seat, move, rng)
        result = PLAYER.apply(state, seat, move)
        events += result.events
        log.append((seat, move))
        state = result.state
    return log, state, events


@given(seeds)
def test_replay_is_byte_identical_and_private_events_are_marked(seed: int) -> None:
    log, final, events = _record(seed)
    assert encode(replay(GAME, 2, {}, seed, log)) == encode(final)
    for e in events:
        if e["type"] in ("draw", "search", "puzzle_card"):
            assert len(e["visible_to"]) == 1
        else:
            assert "visible_to" not in e
    public = [e for e in events if "visible_to" not in e]
    assert all("cards" not in e for e in public if e["type"] == "draw_count")


def test_same_seed_same_game_different_seed_different_game() -> None:
    a = _record(11)
    b = _record(11)
    c = _record(12)
    assert encode(a[1]) == encode(b[1]) and a[0] == b[0]
    assert encode(a[1]) != encode(c[1])
