"""Terminal rendering of a Mandala view (standard or solo), from the view alone.

The client knows no rules: everything drawn here comes from the view the server sent (see
docs/games/mandala.md for its fields). The viewer's own side is drawn at the bottom, the
opponent (or Master Yoga) at the top, as across a table.
"""

from __future__ import annotations

from typing import Any

SIDES = ("left", "right")


def _pile(counts: dict[str, int], order: list[str]) -> str:
    parts = [f"{c}x{counts[c]}" for c in order if counts.get(c, 0) > 0]
    return " ".join(parts) if parts else "-"


def _river(river: list[str]) -> str:
    spaces = [f"{i + 1}:{river[i] if i < len(river) else '.'}" for i in range(6)]
    return " ".join(spaces)


def _name(view: dict[str, Any], player: int) -> str:
    name = str(view["players"][player]["name"])
    return f"{name} (you)" if player == view.get("you") else name


def _player_lines(view: dict[str, Any], player: int) -> list[str]:
    p = view["players"][player]
    order = view["colours"]
    hand = f"   hand {p['hand_count']}" if p.get("seat") is not None else ""
    lines = [f"{_name(view, player)}{hand}   cup {p['cup_count']}",
             f"  river  {_river(p['river'])}"]
    if "cup" in p:
        lines.append(f"  cup    {_pile(p['cup'], order)}   score {p.get('score', '?')}")
    if "hand" in p:
        lines.append(f"  hand   {_pile(p['hand'], order)}")
    return lines


def _mandala_lines(view: dict[str, Any], index: int, top: int, bottom: int) -> list[str]:
    m = view["mandalas"][index]
    order = view["colours"]
    mountain = " ".join(f"{s['colour']}x{s['count']}" for s in m["mountain"]) or "-"
    res = view.get("resolution")
    mark = "  << resolving" if res and res["mandala"] == index else ""
    return [
        f"{SIDES[index].upper()} MANDALA{mark}",
        f"  field {_name(view, top):<22} {_pile(m['fields'][top], order)}",
        f"  mountain {'':<20} {mountain}",
        f"  field {_name(view, bottom):<22} {_pile(m['fields'][bottom], order)}",
    ]


def outcome_text(view: dict[str, Any]) -> str:
    """Who won and the scores by player: in solo the scores are [you, Master Yoga], and an empty
    ``winners`` means Master Yoga (who has no seat) won. Empty before the end."""
    outcome = view.get("outcome")
    if not outcome:
        return ""
    if outcome["winners"]:
        who = " and ".join(_name(view, w) for w in outcome["winners"]) + " won"
    elif view["mode"] == "solo":
        who = "Master Yoga won"
    else:
        who = "a draw"
    scores = ", ".join(f"{_name(view, p)} {s}" for p, s in enumerate(outcome["scores"]))
    return f"{who} ({outcome['reason']}); scores: {scores}"


def _status(view: dict[str, Any]) -> str:
    if view.get("outcome"):
        return f"Game over: {outcome_text(view)}"
    turn = view.get("turn")
    who = _name(view, turn) if turn is not None else "?"
    res = view.get("resolution")
    if res:
        return f"Resolving the {SIDES[res['mandala']]} mandala: {who} chooses a colour"
    if view.get("yoga_next"):
        return f"Master Yoga plays his {view['yoga_next']} move..."
    return f"{who} to play"


def describe_event(event: dict[str, Any], names: list[str]) -> str:
    """One line for a public event (unknown types fall back to their fields)."""
    kind = event.get("type")
    who = names[event["player"]] if isinstance(event.get("player"), int) else ""
    side = SIDES[event["mandala"]] if isinstance(event.get("mandala"), int) else ""
    texts = {
        "mountain": lambda: f"{who} played {event.get('colour')} to the {side} mountain",
        "field": lambda: f"{who} played {event.get('count')} {event.get('colour')} to the "
        f"{side} field",
        "discard": lambda: f"{who} discarded {event.get('count')} {event.get('colour')}",
        "draw": lambda: f"{who} drew {event.get('count')}",
        "yoga_draw": lambda: f"Master Yoga drew {event.get('colour')} -> {event.get('to')} "
        f"({side})",
        "reshuffle": lambda: "the discard pile was shuffled into a new deck: "
        "the next mandala completed is the last",
        "complete": lambda: f"the {side} mandala is complete; {names[event['first_chooser']]} "
        "chooses first",
        "take": lambda: f"{who} took {event.get('count')} {event.get('colour')}"
        + (" (discarded)" if event.get("discarded") else ""),
        "mountain_discarded": lambda: f"nobody had field cards: the {side} mountain is discarded",
        "resolved": lambda: f"the {side} mandala is resolved",
        "refill": lambda: f"new {side} mountain: {', '.join(event.get('cards', []))}",
        "cards_exhausted": lambda: "no cards left to draw",
        "game_over": lambda: "game over",
    }
    text = texts.get(str(kind))
    if text is None:
        return " ".join(f"{k}={v}" for k, v in event.items())
    return text()


def describe(event: dict[str, Any], view: dict[str, Any]) -> str | None:
    """The game log's line for one of Mandala's events (the client's ``describe`` hook); the
    private ``drawn`` names the viewer's own cards."""
    if event.get("type") == "drawn":
        return f"you drew {', '.join(str(c) for c in event.get('cards', []))}"
    names = [_name(view, i) for i in range(len(view["players"]))]
    return describe_event(event, names)


def render(view: dict[str, Any], seat: int | None) -> str:
    bottom = seat if seat in (0, 1) else 0
    top = 1 - bottom
    deck = f"deck {view['deck_count']}   discard {view['discard_count']}"
    if view.get("reshuffled"):
        deck += "   (reshuffled: the next completed mandala ends the game)"
    title = "Mandala" + (f" - solo vs Master Yoga ({view['yoga_rule']})"
                         if view["mode"] == "solo" else "")
    lines = [title, deck, _status(view), ""]
    lines += _player_lines(view, top) + [""]
    for index in range(len(view["mandalas"])):
        lines += _mandala_lines(view, index, top, bottom) + [""]
    lines += _player_lines(view, bottom)
    names = [_name(view, i) for i in range(len(view["players"]))]
    shown = [describe_event(e, names) for e in view.get("last", [])]
    if shown:
        lines += ["", "Last:"] + [f"  {text}" for text in shown]
    return "\n".join(lines)


def move_label(move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    kind = move.get("type")
    side = SIDES[move["mandala"]] if move.get("mandala") in (0, 1) else "?"
    if kind == "mountain":
        return f"{move.get('colour')} to the {side} mountain (then draw)"
    if kind == "field":
        return f"{move.get('count')} {move.get('colour')} to your {side} field"
    if kind == "discard":
        return f"discard {move.get('count')} {move.get('colour')} (then draw as many)"
    if kind == "choose":
        return f"take {move.get('colour')}"
    return " ".join(f"{k}={v}" for k, v in move.items())
