"""Terminal rendering of a Math Magic Card duel view (standard library only, view only).

The view carries the card pool (names, formulas), so nothing here knows the rules: it draws the
five lanes top to bottom as seat 0 sees the table (seat 1's lanes are listed in seat 1's own
left-to-right order, as the view gives them), the assertion areas, legends, players, any open
choice and the last public events.
"""

from __future__ import annotations

from typing import Any

# Lanes keep the rules page's numbers (0-4); seats are numbered from 1 for people.
LANE_NAMES = ["lane 0 (seat 1)", "lane 1 (seat 1)", "lane 2 (public)", "lane 3 (seat 2)",
              "lane 4 (seat 2)"]


def _frac(pair: Any) -> str:
    if not pair:
        return "—"
    num, den = pair
    return str(num) if den == 1 else f"{num}/{den}"


def _name(view: dict[str, Any], card_id: str) -> str:
    row = view.get("pool", {}).get(card_id)
    return row["name"] if row else card_id


def _formula(view: dict[str, Any], card_id: str) -> str:
    row = view.get("pool", {}).get(card_id)
    return row["formula"] if row else card_id


def _slot(view: dict[str, Any], entry: Any) -> str:
    if entry is None:
        return "[     ]"
    text = "f(·)" if entry.get("part") == "value" else _formula(view, entry["card"])
    return f"[{text:^5}]" if len(text) <= 5 else f"[{text}]"


def _assertion(view: dict[str, Any], entry: dict[str, Any]) -> str:
    text = f"{_name(view, entry['card'])} ({_formula(view, entry['card'])})"
    if "under" in entry:
        text += " over ?" if entry.get("hidden") else f" over {_formula(view, entry['under'])}"
    return f"{text} s{entry['owner']}"


def _area(view: dict[str, Any], name: str) -> str:
    entries = view["areas"].get(name, [])
    shown = "; ".join(_assertion(view, e) for e in entries) or "empty"
    return f"  {name}: {shown}"


def _player(view: dict[str, Any], seat: int, me: int | None) -> str:
    p = view["players"][seat]
    you = " (you)" if seat == me else ""
    legends = ", ".join(_name(view, c) for c in view["legends"][seat] + view["rainbow"][seat])
    top = _name(view, p["discard"][-1]) if p["discard"] else "—"
    return (f"Seat {seat + 1}{you}: PVP {p['pvp']} | hand {p['hand_size']} | deck {p['deck_size']}"
            f" | discard {len(p['discard'])} (top: {top}) | legends: {legends or '—'}")


def render(view: dict[str, Any], seat: int | None) -> str:
    lines = [f"Math Magic Card duel — phase {view['phase']}"]
    turn = view.get("turn")
    if turn:
        lines[0] += f", turn {turn['number']} (seat {turn['seat'] + 1})"
    if view.get("to_act"):
        lines[0] += f"; to act: {', '.join(f'seat {s + 1}' for s in view['to_act'])}"
    if view["phase"] == "deckbuild":
        for s, p in enumerate(view["players"]):
            lines.append(f"Seat {s + 1}: deck {'in' if p['deck_in'] else 'not in yet'}")
        decks = view.get("ready_decks", {})
        rules = view.get("deck_rules", {})
        lines.append(f"Ready-made decks: {', '.join(decks)} "
                     f"(or submit {rules.get('min')}-{rules.get('max')} card ids)")
        return "\n".join(lines)
    lines.append(_player(view, 1, seat))
    lines.append(_area(view, "private1"))
    for lane in (4, 3, 2, 1, 0):
        row = " ".join(_slot(view, e) for e in view["lanes"][lane])
        lines.append(f"  {LANE_NAMES[lane]:<16} {row}  = {_frac(view['lane_values'][lane])}")
        if lane == 2:
            lines.append(_area(view, "left"))
            lines.append(_area(view, "right"))
    lines.append(_area(view, "private0"))
    lines.append(_player(view, 0, seat))
    if seat is not None and view["players"][seat]["hand"] is not None:
        hand = ", ".join(f"{_name(view, c)} [{_formula(view, c)}]"
                         for c in view["players"][seat]["hand"])
        lines.append(f"Your hand: {hand or 'empty'}")
    estimate = view.get("estimate")
    if estimate:
        lines.append(f"Score if the game ended now (as far as you can see): VP "
                     f"{estimate['vp'][0]} to {estimate['vp'][1]}")
    pending = view.get("pending")
    if pending:
        source = _name(view, pending["source"]) if pending["source"] else "hand limit"
        lines.append(f"Waiting for seat {pending['seat'] + 1}: {pending['kind']} ({source})")
    if view.get("last"):
        lines.append("Last: " + "; ".join(_event(view, e) for e in view["last"][-6:]))
    result = view.get("result")
    if result:
        who = ", ".join(f"seat {s + 1}" for s in result["winners"]) or "nobody (draw)"
        lines.append(f"Game over ({result['reason']}): VP {result['vp'][0]} to {result['vp'][1]}, "
                     f"PVP {result['pvp'][0]} to {result['pvp'][1]}; winner: {who}; public lane "
                     f"read from the {result['public_direction']}")
    return "\n".join(lines)


def _event(view: dict[str, Any], event: dict[str, Any]) -> str:
    text = event["type"].replace("_", " ")
    if "seat" in event:
        text = f"seat {event['seat'] + 1} {text}"
    if "card" in event and event["card"]:
        text += f" {_name(view, event['card'])}"
    return text


def _where(pos: Any) -> str:
    if isinstance(pos[0], str):
        area = pos[0]
        if area.startswith("private") and area[len("private"):].isdigit():
            area = f"seat {int(area[len('private'):]) + 1}'s private"  # private0: seat 1's
        return f"{area} area #{pos[1] + 1}"
    return f"lane {pos[0]} slot {pos[1]}"


def _pos(view: dict[str, Any] | None, pos: Any) -> str:
    """A field position, with the name of the card there when the view shows one."""
    entry = None
    if view is not None:
        if isinstance(pos[0], str):
            cards = view.get("areas", {}).get(pos[0], [])
            entry = cards[pos[1]] if 0 <= pos[1] < len(cards) else None
        else:
            entry = view.get("lanes", [[]] * 5)[pos[0]][pos[1]]
    if entry is None:
        return _where(pos)
    return f"{_name(view or {}, entry['card'])} ({_where(pos)})"


def move_label(move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    """A legal move in words. Cards are named from the view's pool (their ids only without a
    view); cards on the field are named with their position, which tells copies apart."""
    kind = move.get("type", "?")
    card = _name(view or {}, move["card"]) if "card" in move else ""
    if kind == "pick_deck":
        return f"pick the ready-made deck '{move['deck']}' (type 'decks' to see its cards)"
    if kind == "submit_deck":
        return "submit a deck (list of card ids)"
    if kind in ("set_value", "set_operator", "set_function"):
        what = {"set_value": "value", "set_operator": "operator",
                "set_function": "function as operator-value"}[kind]
        return f"set {what} {card} in lane {move['lane']}"
    if kind == "move_value":
        return f"move {_pos(view, move['from'])} to lane {move['lane']}"
    if kind == "assert":
        under = ""
        if "under" in move:
            under = f" over {_name(view or {}, move['under'])} (face down)"
        return f"assert {card} in the {move['area']} area{under}"
    if kind == "function_calc":
        return (f"calculate with {card}: {_pos(view, move['input'])} -> "
                f"{_pos(view, move['output'])}")
    if kind == "function_effect":
        return f"use the effect of {card}"
    if kind == "legend":
        extra = f", discarding your legend #{move['replace'] + 1}" if "replace" in move else ""
        return f"place legend {card}{extra}"
    if kind == "use":
        return f"use {card} from hand"
    if kind == "choose":
        return f"choose {card}"
    if kind == "swap":
        return f"swap {_pos(view, move['a'])} with {_pos(view, move['b'])}"
    if kind == "move_assertion":
        return (f"move {_pos(view, [move['area'], move['index']])} to "
                f"seat {move['to'] + 1}'s private area")
    if kind == "rearrange":
        cycle = move.get("cycle", [])
        return "keep the operators" if not cycle else \
            "rearrange operators " + " -> ".join(_pos(view, p) for p in cycle)
    return {"end_turn": "end the turn", "decline": "decline", "resign": "resign"}.get(
        kind, " ".join(f"{k}={v}" for k, v in move.items()))


def decks_text(view: dict[str, Any]) -> str | None:
    """The ready-made decks, each card named with its count."""
    decks = view.get("ready_decks") or {}
    if not decks:
        return None
    lines = ["Ready-made decks:"]
    for name, cards in decks.items():
        counts: dict[str, int] = {}
        for cid in cards:
            counts[cid] = counts.get(cid, 0) + 1
        listing = ", ".join(f"{n}× {_name(view, cid)}" for cid, n in counts.items())
        lines.append(f"  {name} ({len(cards)} cards): {listing}")
    return "\n".join(lines)
