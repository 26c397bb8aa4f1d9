"""One battle turn, exactly as the rulings put it: mana, draws, equalization, the speed queue
with seeded dice, the attacks, end of turn, and the end conditions.

:func:`play_turn` works on a state the caller already copied (the engine clones before calling)
and returns the events, all public: by the time the battle runs both decks are public.
"""

from __future__ import annotations

from typing import Any

from playhall.games.rng import Rng

from .cards import CARD_TYPES, DECK_SIZE, FIELD_SLOTS, make_card, mana_for_turn
from .targeting import choose_target

State = dict[str, Any]
Event = dict[str, Any]
Card = dict[str, Any]


def _draw_one(player: dict[str, Any], seat: int, free: bool, events: list[Event]) -> None:
    """Move the top card of the deck to the leftmost empty slot. Ruling 7: it is active at once
    only if its owner's field was empty at that moment."""
    deck = player["deck"]
    index = player["next"]
    card = make_card(deck["cards"][index], index, deck["deck_type"])
    card["active"] = not player["field"]
    player["field"].append(card)
    player["next"] = index + 1
    if not free:
        player["mana"] -= card["cost"]
    events.append(
        {
            "type": "draw",
            "seat": seat,
            "card": index,
            "name": card["name"],
            "slot": len(player["field"]) - 1,
            "cost": 0 if free else card["cost"],
            "free": free,
            "active": card["active"],
            "mana_left": player["mana"],
        }
    )


def _why_draw_stops(player: dict[str, Any]) -> str | None:
    """Ruling 5's three stops, or ``None`` when the next card may be drawn."""
    if len(player["field"]) >= FIELD_SLOTS:
        return "field_full"
    if player["next"] >= DECK_SIZE:
        return "deck_empty"
    if CARD_TYPES[player["deck"]["cards"][player["next"]]]["cost"] > player["mana"]:
        return "unaffordable"
    return None


def _draw_phase(players: list[dict[str, Any]], turn: int, events: list[Event]) -> None:
    """Ruling 2 and 5: refill mana to this turn's amount (unused mana is lost), then draw in
    deck order until the field is full, the deck is empty or the next card is too dear."""
    mana = mana_for_turn(turn)
    for seat, player in enumerate(players):
        player["max_mana"] = mana
        player["mana"] = mana
        while (stop := _why_draw_stops(player)) is None:
            _draw_one(player, seat, False, events)
        events.append(
            {"type": "draw_stop", "seat": seat, "reason": stop, "mana_left": player["mana"]}
        )


def _equalize(players: list[dict[str, Any]], events: list[Event]) -> None:
    """Ruling 6: the player with fewer field cards draws free cards until the counts are equal,
    the field is full or the deck is empty."""
    counts = [len(p["field"]) for p in players]
    if counts[0] == counts[1]:
        return
    behind = 0 if counts[0] < counts[1] else 1
    player, target = players[behind], counts[1 - behind]
    while len(player["field"]) < target and player["next"] < DECK_SIZE:
        _draw_one(player, behind, True, events)


def _order_ties(group: list[Card], rng: Rng, events: list[Event], round_no: int) -> list[Card]:
    """Ruling 8: each tied card rolls a die; higher rolls go first; cards with equal rolls
    roll again among themselves (recursively) until all are ordered. Cards roll in the order
    they are listed (seat 0 before seat 1, left to right), so the dice are reproducible."""
    if len(group) == 1:
        return group
    rolls = []
    for card in group:
        value = rng.between(1, 6)
        rolls.append(value)
        events.append(
            {
                "type": "roll",
                "seat": card["seat"],
                "card": card["id"],
                "speed": card["speed"],
                "value": value,
                "round": round_no,
            }
        )
    ordered: list[Card] = []
    for value in sorted(set(rolls), reverse=True):
        same = [card for card, roll in zip(group, rolls, strict=True) if roll == value]
        ordered.extend(_order_ties(same, rng, events, round_no + 1))
    return ordered


def attack_queue(players: list[dict[str, Any]], rng: Rng, events: list[Event]) -> list[Card]:
    """Ruling 8: all active cards of both players by speed, highest first, ties by dice.
    Returns ``{"seat", "id", "speed"}`` entries, not the cards themselves: a queued card is
    looked up again when its turn comes, so one that died meanwhile is skipped."""
    entries = [
        {"seat": seat, "id": card["id"], "speed": card["speed"]}
        for seat, player in enumerate(players)
        for card in player["field"]
        if card["active"]
    ]
    queue: list[Card] = []
    for speed in sorted({e["speed"] for e in entries}, reverse=True):
        group = [e for e in entries if e["speed"] == speed]
        queue.extend(_order_ties(group, rng, events, 1))
    events.append({"type": "queue", "order": [{"seat": e["seat"], "card": e["id"]} for e in queue]})
    return queue


def _find(field: list[Card], card_id: int) -> Card | None:
    for card in field:
        if card["id"] == card_id:
            return card
    return None


def _attack_phase(state: State, rng: Rng, events: list[Event]) -> int | None:
    """Run the queue. Returns the seat that won by bringing the other to 0 HP (ruling 10: the
    turn stops there), else ``None``."""
    players = state["players"]
    for entry in attack_queue(players, rng, events):
        seat, enemy_seat = entry["seat"], 1 - entry["seat"]
        attacker = _find(players[seat]["field"], entry["id"])
        if attacker is None:
            continue  # died earlier this turn: its attack is skipped
        attacker["attacked"] = True
        enemy = players[enemy_seat]
        slot = choose_target(players[seat]["deck"]["strategy"], attacker["attack"], enemy["field"])
        if slot is None:
            enemy["hp"] -= attacker["attack"]
            events.append(
                {
                    "type": "direct_hit",
                    "seat": seat,
                    "card": attacker["id"],
                    "target_seat": enemy_seat,
                    "damage": attacker["attack"],
                    "hp_after": enemy["hp"],
                }
            )
            if enemy["hp"] <= 0:
                return seat
            continue
        target = enemy["field"][slot]
        target["hp"] -= attacker["attack"]
        events.append(
            {
                "type": "attack",
                "seat": seat,
                "card": attacker["id"],
                "target_seat": enemy_seat,
                "target": target["id"],
                "slot": slot,
                "damage": attacker["attack"],
                "hp_after": target["hp"],
            }
        )
        if target["hp"] <= 0:
            # Ruling 10: the card leaves at once and the rest slide left.
            del enemy["field"][slot]
            events.append(
                {
                    "type": "death",
                    "seat": enemy_seat,
                    "card": target["id"],
                    "name": target["name"],
                    "slot": slot,
                }
            )
    return None


def _end_turn(players: list[dict[str, Any]], events: list[Event]) -> None:
    """Ruling 11: inactive cards become active; everyone's "attacked this turn" mark clears."""
    for seat, player in enumerate(players):
        woken = [card["id"] for card in player["field"] if not card["active"]]
        for card in player["field"]:
            card["active"] = True
            card["attacked"] = False
        if woken:
            events.append({"type": "activate", "seat": seat, "cards": woken})


def exhausted(player: dict[str, Any]) -> bool:
    """Ruling 12: a player has run out when their deck and field are both empty."""
    return player["next"] >= DECK_SIZE and not player["field"]


def _finish(state: State, winners: list[int], reason: str, events: list[Event]) -> None:
    hps = [p["hp"] for p in state["players"]]
    state["phase"] = "over"
    state["result"] = {"winners": winners, "scores": hps, "reason": reason}
    events.append({"type": "game_over", "winners": winners, "reason": reason, "hp": hps})


def play_turn(state: State) -> list[Event]:
    """Play the next battle turn on ``state`` (already a private copy) and return its events."""
    turn = state["turn"] + 1
    state["turn"] = turn
    players = state["players"]
    rng = Rng(state["rng"])
    events: list[Event] = [{"type": "turn_start", "turn": turn, "mana": mana_for_turn(turn)}]
    _draw_phase(players, turn, events)
    _equalize(players, events)
    winner = _attack_phase(state, rng, events)
    state["rng"] = rng.state
    if winner is not None:
        _finish(state, [winner], "knockout", events)
        return events
    _end_turn(players, events)
    if all(exhausted(p) for p in players):
        hp0, hp1 = players[0]["hp"], players[1]["hp"]
        winners = [] if hp0 == hp1 else [0] if hp0 > hp1 else [1]
        _finish(state, winners, "deck_exhausted", events)
    return events
