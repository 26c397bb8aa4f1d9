"""What each viewer of a room sees: the room view (room facts + the engine's view for that
seat + that seat's legal moves), the events it may see, and the lobby's summary of a room.

Pure functions of a record; the actor decides when to compute them and for whom.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from playhall.games.contract import Event, Game
from playhall.rooms.record import PLAYING, RoomRecord, Seat


def room_view(record: RoomRecord, game: Game, seat: int | None) -> dict[str, Any]:
    """The whole view one viewer has of a room. Diffs are computed between two of these."""
    state = record.state
    playing = record.status == PLAYING and state is not None
    to_act = game.to_act(state) if playing and state is not None else []
    # Asked of every seated viewer, not only those in to_act: some moves are open to a seat that
    # is not being waited on (resigning in the Math Magic Card duel).
    moves = (
        game.legal_moves(state, seat)
        if playing and state is not None and seat is not None and not record.seats[seat].bot
        else []
    )
    return {
        "room": record.id,
        "game": record.game,
        "status": record.status,
        "options": record.options,
        "private": record.private,
        # The join code lets the holder bring friends: seated players may see it.
        "code": record.code if seat is not None else None,
        "creator": record.creator,
        "seats": _seats(record.seats),
        "you": seat,
        "to_act": to_act,
        "moves": moves,
        "state": game.view(state, seat) if state is not None else None,
        "outcome": record.outcome,
        "deadline": record.deadline,
        "rematch": record.rematch,
        "rematch_of": record.rematch_of,
    }


@lru_cache(maxsize=4096)
def _seats(seats: tuple[Seat, ...]) -> list[dict[str, Any]]:
    """The seats as the view shows them. Cached by value, so consecutive views share the very
    same list while the seats do not change, and the diff skips it by identity. (Views are
    never mutated once built.)"""
    return [{"player": s.player, "name": s.name, "bot": s.bot, "ready": s.ready} for s in seats]


def visible_events(events: list[Event], seat: int | None) -> list[Event]:
    """The events ``seat`` may see, without their ``visible_to`` marks."""
    out = []
    for event in events:
        allowed = event.get("visible_to")
        if allowed is None:
            out.append(event)
        elif seat is not None and seat in allowed:
            out.append({k: v for k, v in event.items() if k != "visible_to"})
    return out


def lobby_summary(record: RoomRecord, title: str) -> dict[str, Any]:
    return {
        "room": record.id,
        "game": record.game,
        "title": title,
        "status": record.status,
        "seats": len(record.seats),
        "taken": sum(1 for s in record.seats if s.taken),
        "players": [s.name for s in record.seats],
        "options": record.options,
        "created": record.created,
    }
