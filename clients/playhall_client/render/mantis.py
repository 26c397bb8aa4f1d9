"""Terminal rendering of a Mantis view.

Works from the view alone (see docs/games/mantis.md for its fields): a card is the string
``"<face>:<c1>,<c2>,<c3>"``, face colour then the three back colours. Tanks are shown grouped
by face colour, because matching by colour is the whole game, with each card's back as three
letters so a player can tell which cards of the top card's back are already out.
"""

from __future__ import annotations

from typing import Any

_LETTER = {"red": "R", "orange": "O", "yellow": "Y", "green": "G", "blue": "B", "purple": "P",
           "pink": "K"}


def _letter(colour: str) -> str:
    return _LETTER.get(colour, colour[:1].upper())


def _split(code: str) -> tuple[str, list[str]]:
    face, _, back = code.partition(":")
    return face, back.split(",") if back else []


def _tank(cards: list[str]) -> str:
    """``red×2 (ROY RGB)  blue×1 (GBK)`` — grouped by face colour, in order of first seen."""
    if not cards:
        return "(empty)"
    groups: dict[str, list[str]] = {}
    for code in cards:
        face, back = _split(code)
        groups.setdefault(face, []).append("".join(_letter(c) for c in back))
    return "  ".join(f"{face}×{len(backs)} ({' '.join(backs)})" for face, backs in groups.items())


def _seat(n: int, me: int | None) -> str:
    return f"seat {n + 1}" + (" (you)" if n == me else "")  # people count seats from 1


def _last(last: dict[str, Any]) -> str:
    who = f"seat {last['seat'] + 1}"
    flipped = f"{last['colour']} [{''.join(_letter(c) for c in _split(last['card'])[1])}]"
    if last["action"] == "steal":
        verb = "stole" if last["result"] == "stolen" else "tried to steal"
        head = f"{who} {verb} from seat {last['target'] + 1}, flipped {flipped}"
    else:
        head = f"{who} scored, flipped {flipped}"
    result = last["result"]
    if result == "scored":
        return f"{head}: {last['count']} cards to the score pile"
    if result == "stolen":
        return f"{head}: took {last['count']} cards"
    return f"{head}: into seat {last['into'] + 1}'s tank"


def _ending(outcome: dict[str, Any], me: int | None) -> str:
    winners = outcome["winners"]
    others = ", ".join(str(w + 1) for w in winners if w != me)
    why = {
        "target_reached": "target reached",
        "deck_exhausted": "deck ran out",
        "resignation": "the others resigned",
        "timeout": "the others ran out of time",
    }.get(
        outcome["reason"], outcome["reason"])
    if me is not None and me in winners:
        who = "You win" if len(winners) == 1 else f"You share the win with seats {others}"
    elif len(winners) == 1:
        who = f"Seat {winners[0] + 1} wins"
    else:
        who = f"Seats {', '.join(str(w + 1) for w in winners)} share the win"
    return f"Game over ({why}). {who}."


def render(view: dict[str, Any], seat: int | None) -> str:
    me = view.get("you", seat)
    lines = [f"Mantis — first to {view['target']} points · {view['cards_left']} cards left"]
    top = view.get("top_back")
    if top:
        lines.append(f"Top card back: {' / '.join(top)}")
    if view.get("last"):
        lines.append(f"Last: {_last(view['last'])}")
    turn = view.get("turn")
    left = view.get("left") or []
    for n, (tank, score) in enumerate(zip(view["tanks"], view["scores"], strict=True)):
        mark = ">" if n == turn else " "
        out = "  (left the game: out of play)" if n in left else ""
        lines.append(f"{mark} {_seat(n, me):<14} score {score:>3}  tank {_tank(tank)}{out}")
    if view.get("outcome"):
        lines.append(_ending(view["outcome"], me))
    elif turn is not None:
        lines.append("Your turn: score, or steal from a player." if turn == me
                     else f"Seat {turn + 1} to play.")
    return "\n".join(lines)


def describe(event: dict[str, Any], view: dict[str, Any]) -> str | None:
    """The game log's line for one of Mantis's events (seats counted from 1); None for others."""
    me = view.get("you")
    kind = event.get("type")
    seat = event.get("seat")
    if not isinstance(seat, int):
        return None
    who = _seat(seat, me)
    if kind == "flip":
        target = event.get("target")
        action = f"tries to steal from {_seat(target, me)}" if isinstance(target, int) else "scores"
        return f"{who} {action}: flips {event.get('colour')}"
    if kind == "scored":
        return (f"{who} puts {event.get('count')} {event.get('colour')} on the score pile "
                f"(now {event.get('pile')})")
    if kind == "stolen":
        victim = event.get("from")
        source = _seat(victim, me) if isinstance(victim, int) else "?"
        return f"{who} steals {event.get('count')} {event.get('colour')} from {source}"
    if kind == "to_tank":
        return f"no match: the card goes into {who}'s tank"
    if kind == "extra_turn":
        return f"{who} plays again"
    return None


def move_label(move: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    if move.get("type") == "score":
        return "Score: flip the top card for your own tank"
    if move.get("type") == "steal":
        target = move.get("target")
        return f"Steal from seat {target + 1 if isinstance(target, int) else target}"
    return " ".join(f"{k}={v}" for k, v in move.items())
