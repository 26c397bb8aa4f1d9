"""Terminal rendering of a Card Battle view.

Works from the view alone (clients know no rules): both players' HP, mana, deck type and
strategy, the deck order with the next card marked, the field with each card's stats (a ``*``
marks the stat the deck type raised) and whether it is active, and the last turn's events as a
readable log.
"""

from __future__ import annotations

from typing import Any

_STATUS = {"deck": "choosing decks", "battle": "battle", "over": "game over"}


def _title(word: str) -> str:
    return word.replace("-", " ").title()


def _card_name(view: dict[str, Any], seat: int, card_id: int) -> str:
    """``s1 Wizard#3`` (seat 1 as people count: the wire's seat 0) from the (public) deck order;
    the id is the card's deck position, so both seats can have a ``Wizard#3`` and the seat
    prefix tells them apart."""
    deck = view["players"][seat].get("deck")
    if deck and 0 <= card_id < len(deck["cards"]):
        return f"s{seat + 1} {_title(deck['cards'][card_id])}#{card_id}"
    return f"s{seat + 1} card#{card_id}"


def _card(card: dict[str, Any], boosted: set[str]) -> str:
    def stat(label: str, key: str) -> str:
        return f"{label}{card[key]}{'*' if key in boosted else ''}"

    hp = f"{card['hp']}/{card['max_hp']}{'*' if 'hp' in boosted else ''}"
    state = "active" if card["active"] else "waiting"
    return (f"[{_title(card['name'])}#{card['id']} hp {hp} {stat('atk ', 'attack')} "
            f"{stat('spd ', 'speed')} {state}]")


def _deck_line(deck: dict[str, Any], drawn: int) -> str:
    """The deck in order: drawn cards in parentheses, the next one between > <."""
    parts = []
    for i, name in enumerate(deck["cards"]):
        if i < drawn:
            parts.append(f"({name})")
        elif i == drawn:
            parts.append(f">{name}<")
        else:
            parts.append(name)
    return " ".join(parts)


def _player(view: dict[str, Any], player: dict[str, Any], seat: int | None) -> list[str]:
    who = f"Seat {player['seat'] + 1}" + (" (you)" if player["seat"] == seat else "")
    deck = player.get("deck")
    lines: list[str] = []
    if deck is None:
        status = "deck submitted (hidden)" if player["submitted"] else "choosing a deck"
        lines.append(f"{who}  HP {player['hp']}  {status}")
        return lines
    rules = view.get("rules", {})
    boosted = set(rules.get("deck_types", {}).get(deck["deck_type"], {}))
    ready = f" ({_title(deck['ready'])})" if deck.get("ready") else ""
    lines.append(f"{who}  HP {player['hp']}  mana {player['mana']}/{player['max_mana']}  "
                 f"{_title(deck['deck_type'])} + {_title(deck['strategy'])}{ready}  "
                 f"deck {player['deck_left']} left")
    field = " ".join(_card(c, boosted) for c in player["field"]) or "(empty)"
    lines.append(f"  field: {field}")
    lines.append(f"  deck:  {_deck_line(deck, player['drawn'])}")
    return lines


def _event(view: dict[str, Any], e: dict[str, Any]) -> str | None:
    kind = e.get("type")
    if kind == "turn_start":
        return f"Turn {e['turn']}: {e['mana']} mana"
    if kind == "draw":
        how = "free" if e["free"] else f"for {e['cost']} mana"
        wake = "active" if e["active"] else "waiting"
        return f"  {_card_name(view, e['seat'], e['card'])} drawn {how} ({wake})"
    if kind == "draw_stop":
        return f"  seat {e['seat'] + 1} stops drawing: {e['reason'].replace('_', ' ')}"
    if kind == "roll":
        return (f"  {_card_name(view, e['seat'], e['card'])} (speed {e['speed']}) rolls "
                f"{e['value']}" + (f" (re-roll {e['round']})"
                                                        if e["round"] > 1 else ""))
    if kind == "queue":
        order = ", ".join(_card_name(view, q["seat"], q["card"]) for q in e["order"])
        return f"  attack order: {order or 'nobody'}"
    if kind == "attack":
        return (f"  {_card_name(view, e['seat'], e['card'])} hits "
                f"{_card_name(view, e['target_seat'], e['target'])} for {e['damage']} "
                f"-> {e['hp_after']} HP")
    if kind == "death":
        return f"  {_card_name(view, e['seat'], e['card'])} is destroyed"
    if kind == "direct_hit":
        return (f"  {_card_name(view, e['seat'], e['card'])} hits seat {e['target_seat'] + 1} "
                f"directly for {e['damage']} -> {e['hp_after']} HP")
    if kind == "activate":
        names = ", ".join(_card_name(view, e["seat"], c) for c in e["cards"])
        return f"  now active: {names}"
    if kind == "deck_submitted":
        return f"  seat {e['seat'] + 1} submitted a deck"
    if kind == "decks_revealed":
        return "  both decks are in and revealed: the battle begins"
    if kind == "game_over":
        return None  # the result line says it
    return None


def _result(view: dict[str, Any]) -> str | None:
    result = view.get("result")
    if not result:
        return None
    why = {"knockout": "knockout", "deck_exhausted": "both ran out of cards"}.get(
        result["reason"], result["reason"])
    if not result["winners"]:
        return f"Draw ({why}); HP {result['scores']}"
    return f"Seat {result['winners'][0] + 1} wins ({why}); HP {result['scores']}"


def render(view: dict[str, Any], seat: int | None) -> str:
    status = _STATUS.get(view.get("phase", ""), view.get("phase", ""))
    who = "spectator" if seat is None else f"seat {seat + 1}"
    lines = [f"Card Battle - turn {view['turn']} - {status} - you are {who}"]
    if view.get("phase") == "battle":
        delay = view.get("turn_delay_ms", 0)
        lines.append(f"Next turn: {view['next_turn_mana']} mana, in {delay / 1000:g} s")
    for player in view["players"]:
        lines.extend(_player(view, player, seat))
    if view.get("phase") == "deck" and seat in view.get("to_act", []):
        rules = view.get("rules", {})
        decks = ", ".join(f"{_title(n)} ({d['deck_type']} + {d['strategy']})"
                          for n, d in rules.get("ready_decks", {}).items())
        lines.append(f"Ready-made decks: {decks}")
        cards = ", ".join(f"{n} (cost {s['cost']}, hp {s['hp']}, atk {s['attack']}, "
                          f"spd {s['speed']})" for n, s in rules.get("card_types", {}).items())
        lines.append(f"Cards: {cards}")
    log = [line for e in view.get("last_events", []) if (line := _event(view, e)) is not None]
    if log:
        lines.append("Last:")
        lines.extend(log)
    result = _result(view)
    if result:
        lines.append(result)
    return "\n".join(lines)


def move_label(move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    kind = move.get("type")
    if kind == "pick_deck":
        return f"Play the ready-made deck {_title(str(move.get('deck', '?')))}"
    if kind == "submit_deck":
        if move.get("template"):
            return "Build your own deck (20 cards in order, a deck type and a strategy)"
        cards = move.get("cards") or []
        return (f"Submit a {len(cards)}-card {move.get('deck_type', '?')} deck "
                f"({move.get('strategy', '?')})")
    return " ".join(f"{k}={v}" for k, v in move.items())
