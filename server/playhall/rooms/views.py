"""What each viewer of a room sees: the room view (room facts + the engine's view for that
seat + that seat's legal moves), the events it may see, and the lobby's summary of a room.

Pure functions of a record; the actor decides when to compute them and for whom.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from playhall.games.contract import Event, Game
from playhall.rooms.record import PLAYING, RoomRecord, Seat


def room_view(record: RoomRecord, game: Game, seat: int | None) -> dict[str, Any]:
    """The whole view one viewer has of a room. Diffs are computed between two of these.

    Views are never changed once built, so their parts are shared wherever they are equal: the
    viewers of one record share what does not depend on the seat (:func:`_common`), and
    consecutive versions share the parts that did not change, which the diff then skips by
    identity."""
    state = record.state
    common = _last_common[1] if _last_common[0] is record else _common(record, game)
    playing = common[0]
    # Asked of every seated viewer, not only those in to_act: some moves are open to a seat that
    # is not being waited on (resigning in the Math Magic Card duel).
    moves = (
        game.legal_moves(state, seat)
        if playing and state is not None and seat is not None and not record.seats[seat].bot
        else _NO_MOVES
    )
    # A copy of the record's template (what every viewer's view shares) with the viewer's own
    # parts set: copying a map is one memcpy where building it inserts key by key.
    view: dict[str, Any] = common[1].copy()
    # The join code lets the holder bring friends: seated players may see it.
    view["code"] = record.code if seat is not None else None
    view["you"] = seat
    view["moves"] = moves or _NO_MOVES
    view["state"] = game.view(state, seat) if state is not None else None
    return view


_NO_MOVES: Final[list[Any]] = []
#: The record whose viewers were shown last, and what they all share: the actor builds the
#: views of one version one after the other. (Records are immutable; the entry holds the
#: record, so its id cannot be reused while it is here.)
_last_common: tuple[RoomRecord | None, tuple[Any, ...]] = (None, ())


def _common(record: RoomRecord, game: Game) -> tuple[Any, ...]:
    """What every viewer's view of ``record`` shares: whether it is being played, and the
    view's template: its keys in their order, the shared values (to_act, the seats, ...) set
    and the viewer's own (code, you, moves, state) still to fill."""
    global _last_common
    state = record.state
    playing = record.status == PLAYING and state is not None
    to_act = _shared_to_act(game.to_act(state) if playing and state is not None else [])
    template = {
        "room": record.id,
        "game": record.game,
        "status": record.status,
        "options": record.options,
        "private": record.private,
        "code": None,
        "creator": record.creator,
        "seats": _seats(record.seats),
        "you": None,
        "to_act": to_act,
        "moves": _NO_MOVES,
        "state": None,
        "outcome": record.outcome,
        "deadline": record.deadline,
        "rematch": record.rematch,
        "rematch_of": record.rematch_of,
    }
    common = (playing, template)
    _last_common = (record, common)
    return common


#: ``to_act`` lists of one seat, shared by every view (like the seats below).
_ONE: Final[list[list[int]]] = [[seat] for seat in range(16)]


def _shared_to_act(to_act: list[int]) -> list[int]:
    """The usual ``to_act`` of one seat as a list shared by all views, so a diff skips it by
    identity while the same seat is to act."""
    if len(to_act) == 1:
        seat = to_act[0]
        if type(seat) is int and 0 <= seat < len(_ONE):
            return _ONE[seat]
    return to_act

_SEATS_BY_ID: Final[dict[int, tuple[tuple[Seat, ...], list[dict[str, Any]]]]] = {}


def _seats(seats: tuple[Seat, ...]) -> list[dict[str, Any]]:
    """The seats as the view shows them. Cached, so consecutive views share the very same list
    while the seats do not change, and the diff skips it by identity. (Views are never mutated
    once built.) A record passes its seats tuple on to the next version unless they change, so
    the tuple itself is the key: hashing Seats by value costs more than building the list."""
    hit = _SEATS_BY_ID.get(id(seats))
    if hit is not None and hit[0] is seats:
        return hit[1]
    if len(_SEATS_BY_ID) >= 4096:
        _SEATS_BY_ID.clear()
    shown = _seats_by_value(seats)
    # The entry holds the tuple, so its id is not reused while the entry is there.
    _SEATS_BY_ID[id(seats)] = (seats, shown)
    return shown


@lru_cache(maxsize=4096)
def _seats_by_value(seats: tuple[Seat, ...]) -> list[dict[str, Any]]:
    return [seat.as_dict() for seat in seats]


def visible_events(events: list[Event], seat: int | None) -> list[Event]:
    """The events ``seat`` may see, without their ``visible_to`` marks: ``events`` itself when
    none is marked, so the viewers of a version share one list (and the room packs it once)."""
    for event in events:
        if "visible_to" in event:
            break
    else:
        return events
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


def lobby_order(summary: dict[str, Any]) -> str:
    """The room's place in the lobby, as a string that sorts as the lobby lists: waiting rooms
    first, then newest first, then by id. The lobby's index holds these (one sorted set per
    game, read a page at a time), and a page's cursor is the last one it listed."""
    rank = "0" if summary["status"] == "waiting" else "1"
    newest_first = 10**13 - round(summary["created"] * 1000)
    return f"{rank}{newest_first:013d}:{summary['room']}"
