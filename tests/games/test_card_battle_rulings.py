"""One test (or a few) per numbered Card Battle ruling. Expected numbers are worked out by hand
from the card table (hardy +30 HP, speedy +20 speed, angry +20 attack) in the comments."""

from __future__ import annotations

from collections.abc import Callable

import msgpack
import pytest

from playhall.games.card_battle import GAME
from playhall.games.card_battle.cards import READY_DECKS
from playhall.games.contract import Rejected, State
from playhall.games.rng import Rng
from tests.games.conformance import encode
from tests.games.test_card_battle_support import (
    battle_state,
    card,
    deck_move,
    field_ids,
    fill_deck,
    new_game,
    of_type,
    run_battle,
    start_battle,
    turn,
)


def test_ruling_1_costs_are_the_tables() -> None:
    # Turn 1 has 4 mana. Goblin (1) + Skeleton (2) = 3 spent, 1 left; the Archer (4) is then
    # unaffordable. A Knight costs 10: with a Knight on top nothing is drawn before turn 7.
    state = start_battle(deck_move(fill_deck("goblin", "skeleton", "archer")),
                         deck_move(fill_deck("wizard", rest="goblin")))
    events = turn(state).events
    draws = [(e["name"], e["cost"], e["mana_left"]) for e in of_type(events, "draw")
             if e["seat"] == 0]
    assert draws == [("goblin", 1, 3), ("skeleton", 2, 1)]
    # The Wizard (6) does not fit in 4 mana either: seat 1 draws nothing itself.
    assert [e for e in of_type(events, "draw") if e["seat"] == 1 and not e["free"]] == []

    state = start_battle(deck_move(fill_deck()), deck_move(fill_deck()))
    for expected_turn in range(1, 7):
        result = turn(state)
        state = result.state
        assert of_type(result.events, "draw") == [], f"a knight was drawn on turn {expected_turn}"
    result = turn(state)  # turn 7: 10 mana, exactly one Knight (10) each
    assert [(e["seat"], e["cost"], e["mana_left"]) for e in of_type(result.events, "draw")] == [
        (0, 10, 0), (1, 10, 0)]


def test_ruling_2_mana_curve_and_unused_mana_is_lost() -> None:
    # All-knight decks draw nothing for six turns, so any carried-over mana would show.
    state = start_battle(deck_move(fill_deck()), deck_move(fill_deck()))
    for t in range(1, 10):
        result = turn(state)
        state = result.state
        expected = min(10, 3 + t)
        assert result.events[0] == {"type": "turn_start", "turn": t, "mana": expected}
        assert state["players"][0]["max_mana"] == expected
        if t < 7:
            assert state["players"][0]["mana"] == expected  # nothing spent, nothing kept
    assert [min(10, 3 + t) for t in (1, 2, 3, 7, 8)] == [4, 5, 6, 10, 10]


def test_ruling_3_submitted_deck_is_stored_in_order() -> None:
    cards = fill_deck("wizard", "goblin", "archer", rest="skeleton")
    state = GAME.apply(new_game(), 0, deck_move(cards, "angry", "optimize-damage")).state
    assert state["players"][0]["deck"] == {"cards": cards, "deck_type": "angry",
                                           "strategy": "optimize-damage", "ready": None}
    assert GAME.to_act(state) == [1]


def test_ruling_3_ready_made_decks_have_the_ruled_types() -> None:
    assert {name: (d["deck_type"], d["strategy"]) for name, d in READY_DECKS.items()} == {
        "balanced": ("hardy", "kill-shot"),
        "rush": ("speedy", "optimize-damage"),
        "tank": ("hardy", "target-mana"),
        "glass-cannon": ("angry", "kill-shot"),
    }
    assert all(len(d["cards"]) == 20 for d in READY_DECKS.values())
    moves = GAME.legal_moves(new_game(), 0)
    assert {m["deck"] for m in moves if m["type"] == "pick_deck"} == set(READY_DECKS)


@pytest.mark.parametrize(("move", "expected"), [
    (deck_move(["goblin"] * 19), "the deck has 19 cards; exactly 20 are required"),
    (deck_move(["goblin"] * 21), "the deck has 21 cards; exactly 20 are required"),
    (deck_move(fill_deck("goblin", "dragon", "goblin", "Goblin")),
     "unknown card at position 2 ('dragon'), position 4 ('Goblin')"),
    (deck_move(fill_deck(), deck_type="sneaky"), "unknown deck type 'sneaky'"),
    (deck_move(fill_deck(), strategy="kill-all"), "unknown strategy 'kill-all'"),
    ({"type": "pick_deck", "deck": "dragons"}, "unknown ready-made deck 'dragons'"),
])
def test_ruling_3_bad_deck_names_what_is_wrong(move: dict[str, object], expected: str) -> None:
    state = new_game()
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 0, move)
    assert info.value.code == "bad_deck"
    assert expected in info.value.reason
    assert state["players"][0]["deck"] is None


def test_ruling_3_bad_deck_lists_every_problem_at_once() -> None:
    with pytest.raises(Rejected) as info:
        GAME.apply(new_game(), 0, deck_move(["goblin", "orc"], "slow", "random"))
    reason = info.value.reason
    for part in ("has 2 cards", "position 2 ('orc')", "deck type 'slow'", "strategy 'random'"):
        assert part in reason


def test_ruling_3_other_deck_hidden_until_both_submitted_then_public() -> None:
    # The other seat's and a spectator's encoded views are byte-identical whatever seat 0
    # submitted, so nothing of the deck can leak; the owner does see its own deck.
    secret_a = deck_move(fill_deck("wizard", rest="goblin"), "angry", "target-mana")
    secret_b = deck_move(fill_deck("goblin", rest="knight"), "speedy", "optimize-damage")
    after_a = GAME.apply(new_game(), 0, secret_a).state
    after_b = GAME.apply(new_game(), 0, {"type": "pick_deck", "deck": "rush"}).state
    after_c = GAME.apply(new_game(), 0, secret_b).state
    for viewer in (1, None):
        views = {encode(GAME.view(s, viewer)) for s in (after_a, after_b, after_c)}
        assert len(views) == 1
        view = GAME.view(after_a, viewer)
        assert view["players"][0]["deck"] is None
        assert view["players"][0]["submitted"] is True
    assert GAME.view(after_a, 0)["players"][0]["deck"]["cards"] == secret_a["cards"]
    # Once seat 1 submits, both decks are public, in order, to everybody.
    both = GAME.apply(after_a, 1, secret_b)
    assert both.state["phase"] == "battle"
    for viewer in (0, 1, None):
        players = GAME.view(both.state, viewer)["players"]
        assert players[0]["deck"]["cards"] == secret_a["cards"]
        assert players[1]["deck"]["cards"] == secret_b["cards"]
    revealed = of_type(both.events, "decks_revealed")
    assert len(revealed) == 1 and "visible_to" not in revealed[0]


def test_ruling_4_bonuses_apply_to_every_card_and_hardy_raises_max_and_current_hp() -> None:
    # One active card per deck type on turn 1 (first draw onto an empty field).
    cases = {"hardy": ("archer", 45 + 30, 35, 25), "speedy": ("archer", 45, 35, 25 + 20),
             "angry": ("archer", 45, 35 + 20, 25)}
    for deck_type, (name, hp, attack, speed) in cases.items():
        # Seat 1's speedy goblins (attack 10) cannot kill the archer on turn 1.
        state = start_battle(deck_move(fill_deck(name), deck_type),
                             deck_move(["goblin"] * 20, "speedy"))
        drawn = turn(state).state["players"][0]["field"][0]
        assert (drawn["max_hp"], drawn["attack"], drawn["speed"]) == (hp, attack, speed)
    # Hardy raises current HP too: a hardy knight (120 + 30 = 150) hit once by an angry
    # skeleton (25 + 20 = 45) keeps 105 of 150.
    state = battle_state([[card("skeleton", "angry")], [card("knight", "hardy")]],
                         deck_types=("angry", "hardy"))
    assert state["players"][1]["field"][0]["hp"] == 150
    after = turn(state).state["players"][1]["field"][0]
    assert (after["hp"], after["max_hp"]) == (150 - 45, 150)  # angry skeleton hits for 45


def test_ruling_5_unaffordable_card_stops_drawing_nothing_skipped() -> None:
    # 4 mana: goblin, goblin (2 spent), then a wizard (6) does not fit: drawing stops although
    # the goblin after it would fit.
    state = start_battle(deck_move(fill_deck("goblin", "goblin", "wizard", rest="goblin")),
                         deck_move(fill_deck("goblin", "goblin", "wizard", rest="goblin")))
    result = turn(state)
    assert field_ids(result.state, 0) == [0, 1]
    assert result.state["players"][0]["next"] == 2
    assert {"type": "draw_stop", "seat": 0, "reason": "unaffordable", "mana_left": 2} in \
        result.events


def test_ruling_5_full_field_stops_drawing() -> None:
    # Hardy goblins (45 HP) trading 10 damage a turn: nobody dies in two turns. Turn 1 draws
    # four (4 mana); turn 2 draws one more and stops at five cards with 4 of 5 mana left.
    goblins = deck_move(["goblin"] * 20)
    state = turn(start_battle(goblins, goblins)).state
    assert len(state["players"][0]["field"]) == 4
    result = turn(state)
    assert len(result.state["players"][0]["field"]) == 5
    assert {"type": "draw_stop", "seat": 0, "reason": "field_full", "mana_left": 4} in \
        result.events


def test_ruling_5_empty_deck_stops_drawing() -> None:
    state = battle_state([[card("knight")], [card("knight")]], drawn=(18, 20),
                         decks=(["goblin"] * 20, ["goblin"] * 20))
    result = turn(state)
    assert [e["card"] for e in of_type(result.events, "draw")] == [18, 19]
    assert {"type": "draw_stop", "seat": 0, "reason": "deck_empty", "mana_left": 2} in \
        result.events


def test_ruling_6_equalization_draws_free_cards_for_the_player_behind() -> None:
    # Seat 0 draws four goblins with its 4 mana; seat 1's first card is a knight (10): it draws
    # none itself, then four knights free, keeping its 4 mana.
    state = start_battle(deck_move(["goblin"] * 20), deck_move(fill_deck()))
    result = turn(state)
    free = [e for e in of_type(result.events, "draw") if e["free"]]
    assert [(e["seat"], e["card"], e["cost"]) for e in free] == [(1, i, 0) for i in range(4)]
    assert len(result.state["players"][1]["field"]) == 4
    assert result.state["players"][1]["mana"] == 4


def test_ruling_6_equalization_stops_when_the_deck_is_empty() -> None:
    # Seat 1 is behind by three but has only one card left.
    state = battle_state([[card("knight", card_id=i) for i in range(3)], []],
                         drawn=(20, 19), decks=(fill_deck(), fill_deck()))
    result = turn(state)
    assert [(e["seat"], e["card"], e["free"]) for e in of_type(result.events, "draw")] == [
        (1, 19, True)]


def test_ruling_7_activation_only_onto_an_empty_field_also_for_free_draws() -> None:
    state = start_battle(deck_move(["goblin"] * 20), deck_move(fill_deck()))
    events = turn(state).events
    draws = of_type(events, "draw")
    # Seat 0: first goblin active, three inactive; seat 1's free knights the same way.
    assert [(e["seat"], e["active"]) for e in draws] == [
        (0, True), (0, False), (0, False), (0, False),
        (1, True), (1, False), (1, False), (1, False)]
    # Only the two active cards queue; inactive cards are never targets.
    assert of_type(events, "queue")[0]["order"] == [{"seat": 0, "card": 0},
                                                    {"seat": 1, "card": 0}]
    assert {(e["target_seat"], e["target"]) for e in of_type(events, "attack")} == {
        (1, 0), (0, 0)}


def test_ruling_7_inactive_cards_neither_attack_nor_are_targeted() -> None:
    # Seat 1 has only an inactive wizard: seat 0's archer hits the player, the wizard stays.
    state = battle_state([[card("archer")], [card("wizard", active=False)]])
    events = turn(state).events
    assert of_type(events, "queue")[0]["order"] == [{"seat": 0, "card": 0}]
    assert of_type(events, "direct_hit") == [{"type": "direct_hit", "seat": 0, "card": 0,
                                              "target_seat": 1, "damage": 35, "hp_after": 165}]
    assert of_type(events, "attack") == []


def _first_seed(predicate: Callable[[list[int]], bool], rolls: int) -> int:
    """The smallest RNG state whose first ``rolls`` dice satisfy ``predicate``."""
    for seed in range(10_000):
        rng = Rng(seed)
        values = [rng.between(1, 6) for _ in range(rolls)]
        if predicate(values):
            return seed
    raise AssertionError("no seed found")


def test_ruling_8_queue_by_speed_and_dice_for_ties_across_players() -> None:
    # Hardy speeds: archer 25, goblin 20, goblin 20, skeleton 10. The goblins (one per seat)
    # tie at 20 and roll, seat 0's first; distinct rolls order them.
    fields = [[card("goblin", card_id=0, hp=200), card("skeleton", card_id=1, hp=200)],
              [card("archer", card_id=0, hp=200), card("goblin", card_id=1, hp=200)]]
    seed = _first_seed(lambda v: v[0] != v[1], 2)
    rng = Rng(seed)
    first, second = rng.between(1, 6), rng.between(1, 6)
    events = turn(battle_state(fields, rng=seed)).events
    rolls = of_type(events, "roll")
    assert [(e["seat"], e["card"], e["value"], e["round"]) for e in rolls] == [
        (0, 0, first, 1), (1, 1, second, 1)]
    goblins = [{"seat": 0, "card": 0}, {"seat": 1, "card": 1}]
    if second > first:
        goblins.reverse()
    assert of_type(events, "queue")[0]["order"] == [
        {"seat": 1, "card": 0}, *goblins, {"seat": 0, "card": 1}]


def test_ruling_8_equal_rolls_roll_again_until_ordered() -> None:
    # Three tied goblins; the first round gives the first two the same value and the third a
    # different one; only the two equal ones roll again, and round 2 is decisive.
    def pattern(v: list[int]) -> bool:
        return v[0] == v[1] != v[2] and v[3] != v[4]

    seed = _first_seed(pattern, 5)
    rng = Rng(seed)
    a1, b1, c1 = (rng.between(1, 6) for _ in range(3))
    fields = [[card("goblin", card_id=0, hp=200), card("goblin", card_id=1, hp=200)],
              [card("goblin", card_id=0, hp=200)]]
    # If the lone third card rolled higher it is settled first; the re-roll follows either way
    # (groups are settled from the highest roll down, and no group of one rolls).
    a2, b2 = rng.between(1, 6), rng.between(1, 6)
    events = turn(battle_state(fields, rng=seed)).events
    rolls = [(e["seat"], e["card"], e["value"], e["round"]) for e in of_type(events, "roll")]
    assert rolls == [(0, 0, a1, 1), (0, 1, b1, 1), (1, 0, c1, 1), (0, 0, a2, 2), (0, 1, b2, 2)]
    pair = [{"seat": 0, "card": 0}, {"seat": 0, "card": 1}]
    if b2 > a2:
        pair.reverse()
    third = [{"seat": 1, "card": 0}]
    expected = third + pair if c1 > a1 else pair + third
    assert of_type(events, "queue")[0]["order"] == expected


def test_ruling_8_rolls_come_from_the_state_rng_so_a_restored_state_rolls_the_same() -> None:
    fields = [[card("goblin", card_id=0, hp=200)], [card("goblin", card_id=0, hp=200)]]
    state = battle_state(fields, rng=12345)
    restored = msgpack.unpackb(encode(state), raw=False)
    assert turn(state).events == turn(restored).events
    assert turn(state).state["rng"] != state["rng"]


def test_ruling_9_no_active_enemy_means_a_direct_hit() -> None:
    state = battle_state([[card("wizard", "angry")], []], deck_types=("angry", "hardy"))
    events = turn(state).events
    assert of_type(events, "direct_hit")[0]["damage"] == 70  # wizard 50 + angry 20
    assert turn(state).state["players"][1]["hp"] == 130


def test_ruling_9_each_strategy_is_used_by_its_deck() -> None:
    # One plain (angry) skeleton attacking with 45 against: archer hp 75 (cost 4) and goblin
    # hp 45 (cost 1). target-mana: archer; kill-shot: goblin (45 <= 45 killable);
    # optimize-damage: goblin (waste 0, distance 0).
    expected = {"target-mana": 0, "kill-shot": 1, "optimize-damage": 1}
    for strategy, target in expected.items():
        fields = [[card("skeleton", "angry", hp=300)],
                  [card("archer", card_id=0), card("goblin", card_id=1)]]
        state = battle_state(fields, strategies=(strategy, "kill-shot"),
                             deck_types=("angry", "hardy"))
        attacks = [e for e in of_type(turn(state).events, "attack") if e["seat"] == 0]
        assert attacks[0]["target"] == target, strategy


def test_ruling_10_deaths_are_immediate_and_the_rest_slide_left() -> None:
    # Seat 0 (kill-shot): archer (speed 25, attack 35), skeleton (speed 10, attack 25).
    # Seat 1: goblin hp 30, goblin hp 45, skeleton hp 20, all slowed to speed 1.
    # Archer: killable (HP <= 35) are goblin 30 and skeleton 20 -> the higher, goblin #0, dies
    # and the rest slide left: [goblin #1, skeleton #2]. Skeleton (25): killable is only
    # skeleton #2 (20), now at slot 1 -> dies. Left: [goblin #1].
    fields = [[card("archer", card_id=0), card("skeleton", card_id=1)],
              [card("goblin", card_id=0, hp=30), card("goblin", card_id=1, hp=45),
               card("skeleton", card_id=2, hp=20)]]
    for c in fields[1]:
        c["speed"] = 1
    result = turn(battle_state(fields))
    deaths = of_type(result.events, "death")
    assert [(d["card"], d["slot"]) for d in deaths] == [(0, 0), (2, 1)]
    second = of_type(result.events, "attack")[1]
    assert (second["target"], second["slot"]) == (2, 1)  # already slid left when targeted
    assert field_ids(result.state, 1) == [1]


def test_ruling_10_dead_cards_do_not_attack() -> None:
    # The archer (speed 25, attack 35) kills the goblin (speed 20, set to 30 HP) before the
    # goblin's turn comes: the goblin is queued but its attack is skipped.
    fields = [[card("archer", card_id=0)], [card("goblin", card_id=0, hp=30)]]
    events = turn(battle_state(fields)).events
    assert len(of_type(events, "queue")[0]["order"]) == 2
    assert [(e["seat"], e["card"]) for e in of_type(events, "attack")] == [(0, 0)]
    assert of_type(events, "direct_hit") == []


def test_ruling_10_player_at_zero_loses_at_once_and_the_turn_stops() -> None:
    # Seat 1 (30 HP) has only an inactive goblin. Seat 0's archer (speed 25) hits it directly
    # for 35: 30 - 35 = -5, game over. Seat 0's skeleton (speed 10) never attacks and the
    # end-of-turn activation does not happen.
    fields = [[card("archer", card_id=0), card("skeleton", card_id=1)],
              [card("goblin", card_id=0, active=False)]]
    result = turn(battle_state(fields, hp=(200, 30)))
    assert of_type(result.events, "direct_hit") == [
        {"type": "direct_hit", "seat": 0, "card": 0, "target_seat": 1, "damage": 35,
         "hp_after": -5}]
    assert result.events[-1] == {"type": "game_over", "winners": [0], "reason": "knockout",
                                 "hp": [200, -5]}
    assert of_type(result.events, "activate") == []
    assert GAME.outcome(result.state) is not None
    assert GAME.outcome(result.state).winners == [0]  # type: ignore[union-attr]
    assert GAME.auto_delay(result.state) is None and GAME.to_act(result.state) == []


def test_ruling_11_end_turn_activates_and_clears_attacked_marks() -> None:
    fields = [[card("archer", card_id=0, hp=500), card("knight", card_id=1, active=False)],
              [card("archer", card_id=0, hp=500), card("goblin", card_id=1, active=False)]]
    result = turn(battle_state(fields))
    assert {"type": "activate", "seat": 0, "cards": [1]} in result.events
    assert {"type": "activate", "seat": 1, "cards": [1]} in result.events
    for player in result.state["players"]:
        assert all(c["active"] and not c["attacked"] for c in player["field"])


def test_ruling_12_both_run_out_higher_hp_wins() -> None:
    # Both decks and fields empty: the end-of-turn check ends the game on HP. (From a real
    # start this cannot arise: the last attacker of a turn always survives, and a player with
    # cards left hits an empty field directly until a knockout. So the state is hand-built.)
    state = battle_state([[], []], hp=(150, 120))
    result = turn(state)
    assert GAME.outcome(result.state).as_dict() == {  # type: ignore[union-attr]
        "winners": [0], "scores": [150, 120], "reason": "deck_exhausted"}


def test_ruling_12_equal_hp_is_a_draw() -> None:
    result = turn(battle_state([[], []], hp=(90, 90)))
    assert GAME.outcome(result.state).as_dict() == {  # type: ignore[union-attr]
        "winners": [], "scores": [90, 90], "reason": "deck_exhausted"}


def test_ruling_12_one_sided_exhaustion_goes_on_with_direct_hits() -> None:
    # Seat 1 has run out (no deck, no field); seat 0 still has a card: the game goes on and the
    # archer hits seat 1 directly every turn (35 a turn: 200 -> 165 -> 130 ...).
    state = battle_state([[card("archer")], []])
    hps = []
    for _ in range(3):
        result = turn(state)
        state = result.state
        assert GAME.outcome(state) is None
        hps.append(state["players"][1]["hp"])
    assert hps == [165, 130, 95]
    steps = run_battle(state)
    assert steps[-1].state["result"]["reason"] == "knockout"
    assert steps[-1].state["result"]["winners"] == [0]


def test_ruling_13_pacing_option_and_automatic_turns() -> None:
    assert GAME.normalize_options({}) == {"turn_delay_ms": 1500}
    for bad in (-1, 60001, "fast", True):
        with pytest.raises(Rejected) as info:
            GAME.normalize_options({"turn_delay_ms": bad})
        assert info.value.code == "bad_option"
    state = new_game(delay=2500)
    assert GAME.auto_delay(state) is None  # nothing runs before both decks are in
    assert GAME.to_act(state) == [0, 1]
    state = GAME.apply(state, 0, {"type": "pick_deck", "deck": "tank"}).state
    assert GAME.to_act(state) == [1]
    state = GAME.apply(state, 1, {"type": "pick_deck", "deck": "rush"}).state
    assert GAME.to_act(state) == [] and GAME.legal_moves(state, 0) == []
    assert GAME.auto_delay(state) == 2.5
    assert GAME.auto_delay(new_battle_with_delay(0)) == 0.0
    with pytest.raises(Rejected) as info:
        GAME.apply(state, 0, {"type": "pick_deck", "deck": "rush"})
    assert info.value.code == "not_your_turn"
    # Each automatic step is exactly one turn.
    for t in range(1, 4):
        result = GAME.apply_auto(state)
        state = result.state
        assert state["turn"] == t
        assert len(of_type(result.events, "turn_start")) == 1


def new_battle_with_delay(delay: int) -> State:
    return start_battle({"type": "pick_deck", "deck": "rush"},
                        {"type": "pick_deck", "deck": "tank"}, delay=delay)


def test_ruling_13_every_draw_roll_attack_death_and_hit_is_a_public_event() -> None:
    state = new_battle_with_delay(0)
    seen: set[str] = set()
    for step in run_battle(state):
        for event in step.events:
            assert "visible_to" not in event
            seen.add(event["type"])
        # The view carries the last turn's events for everybody, spectators included.
        assert GAME.view(step.state, None)["last_events"] == step.events
    assert {"draw", "roll", "attack", "death", "direct_hit", "queue", "turn_start",
            "game_over"} <= seen
