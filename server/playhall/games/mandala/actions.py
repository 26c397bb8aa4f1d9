"""The three actions of a turn (ruling 5) and what follows them: completion or the next turn."""

from __future__ import annotations

from playhall.games.contract import Event, Move, State

from .board import add_to_mountain, is_complete
from .cards import draw_one, total
from .moves import DRAW_AFTER_MOUNTAIN, HAND_LIMIT
from .resolution import start_resolution
from .turns import advance


def draw_into_hand(state: State, player: int, count: int, events: list[Event]) -> bool:
    """Draw ``count`` cards one by one. The count is public, the colours only for the owner.
    Returns False if the game ended for want of cards."""
    hand = state["players"][player]["hand"]
    drawn: list[str] = []
    ok = True
    for _ in range(count):
        card = draw_one(state, events)
        if card is None:
            ok = False
            break
        hand[card] += 1
        drawn.append(card)
    if drawn:
        events.append({"type": "draw", "player": player, "count": len(drawn)})
        events.append({"type": "drawn", "player": player, "cards": drawn, "visible_to": [player]})
    return ok


def play_action(state: State, player: int, move: Move, events: list[Event]) -> None:
    """Apply an already-checked action. Completion is checked after the action and its draw
    (ruling 6): when that draw empties the deck and reshuffles, the mandala is completed after
    the reshuffle, so it is the last one (ruling 8b)."""
    kind, colour = move["type"], move["colour"]
    hand = state["players"][player]["hand"]
    count = move.get("count", 1)
    hand[colour] -= count
    event: Event = {"type": kind, "player": player, "colour": colour, "count": count}
    completed = False
    if kind == "discard":
        state["discard"].extend([colour] * count)
        events.append(event)
        if not draw_into_hand(state, player, count, events):
            return
    else:
        index = move["mandala"]
        event["mandala"] = index
        mandala = state["mandalas"][index]
        if kind == "mountain":
            add_to_mountain(mandala, colour)
        else:
            mandala["fields"][player][colour] += count
        events.append(event)
        completed = is_complete(mandala)
        if kind == "mountain":
            room = max(0, HAND_LIMIT - total(hand))
            if not draw_into_hand(state, player, min(DRAW_AFTER_MOUNTAIN, room), events):
                return
        if completed:
            start_resolution(state, index, player, bool(state["reshuffled"]), events)
            return
    advance(state)
