"""What each viewer of a room sees: the room view (room facts + the engine's view for that
seat + that seat's legal moves), the events it may see, and what the lobby shows of a room
and of a game.

Pure functions of a record (and of the room's :class:`ViewMemo`, which only lets views share
parts); the audience decides when to compute them and for whom.
"""

from __future__ import annotations

from typing import Any, Final

from playhall.games.contract import Event, Game, State, View
from playhall.rooms import clocks, room_options
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord, Seat
from playhall_protocol import fairness


class ViewMemo:
    """What the views of one room's viewers share, kept by the room (its audience) and handed
    to every :func:`room_view` of its broadcasts: the parts of the record's view that do not
    depend on the seat, the seats as last shown, and the game's view when it is the same for
    every viewer (``Game.public_view``). Views are never changed once built, so the viewers of
    a version share these objects, and consecutive versions share the unchanged ones, which the
    diff then skips by identity."""

    __slots__ = (
        "record", "playing", "to_act", "off_turn", "template", "seats", "shown_seats", "state",
        "state_view", "fair",
    )

    def __init__(self) -> None:
        self.record: RoomRecord | None = None  # the record the template was made for
        self.playing = False
        self.to_act: list[int] = []  # the template's to_act
        #: The moves of a seat not in ``to_act``, when the game says them (``moves_off_turn``).
        self.off_turn: list[Any] | None = None
        self.template: dict[str, Any] = {}
        self.seats: tuple[Seat, ...] | None = None  # the seats ``shown_seats`` shows
        self.shown_seats: list[dict[str, Any]] = []
        self.state: State | None = None  # the state ``state_view`` is the public view of
        self.state_view: View | None = None
        self.fair: dict[str, Any] | None = None  # the view's "fair" map, until it changes


def room_view(record: RoomRecord, game: Game, seat: int | None, memo: ViewMemo) -> dict[str, Any]:
    """The whole view one viewer has of a room. Diffs are computed between two of these."""
    state = record.state
    if memo.record is not record:
        _common(record, game, memo)
    # Asked of every seated viewer, not only those in to_act: some moves are open to a seat that
    # is not being waited on (resigning in the Math Magic Card duel), unless the game says what
    # such a seat may do (``Game.moves_off_turn``): then only of the seats in to_act.
    moves: list[Any] = NO_MOVES
    if memo.playing and state is not None and seat is not None and not record.seats[seat].bot:
        off_turn = memo.off_turn
        if off_turn is None or seat in memo.to_act:
            moves = game.legal_moves(state, seat)
        else:
            moves = off_turn
    # A copy of the record's template (what every viewer's view shares) with the viewer's own
    # parts set: copying a map is one memcpy where building it inserts key by key.
    view: dict[str, Any] = memo.template.copy()
    # The join code lets the holder bring friends: seated players may see it.
    view["code"] = record.code if seat is not None else None
    view["you"] = seat
    view["moves"] = moves or NO_MOVES
    if state is None:
        view["state"] = None
    elif not game.public_view:
        view["state"] = game.view(state, seat)
    else:
        if memo.state is not state:
            memo.state = state
            memo.state_view = game.view(state, seat)
        view["state"] = memo.state_view
    return view


#: The moves of a view that has none: one list, shared by all such views.
NO_MOVES: Final[list[Any]] = []


def _common(record: RoomRecord, game: Game, memo: ViewMemo) -> None:
    """What every viewer's view of ``record`` shares, into ``memo``: whether it is being
    played, and the view's template: its keys in their order, the shared values (to_act, the
    seats, ...) set and the viewer's own (code, you, moves, state) still to fill."""
    state = record.state
    playing = record.status == PLAYING and state is not None
    to_act = _shared_to_act(game.to_act(state) if playing and state is not None else [])
    # A record passes its seats tuple on to the next version unless they change: while it
    # does, the views show the very same list.
    if memo.seats is not record.seats:
        memo.seats = record.seats
        memo.shown_seats = [seat.as_dict() for seat in record.seats]
    memo.template = {
        "room": record.id,
        "game": record.game,
        "status": record.status,
        "options": record.options,
        "private": record.private,
        "rated": record.rated,
        "code": None,
        "creator": record.creator,
        "seats": memo.shown_seats,
        "you": None,
        "to_act": to_act,
        "moves": NO_MOVES,
        "state": None,
        "outcome": record.outcome,
        "deadline": record.deadline,
        "clock": None if record.clocks is None and record.options.get("clock", "none") == "none"
        else clocks.shown(clocks.Rules(record.options), record.clocks),
        "rematch": record.rematch,
        "rematch_of": record.rematch_of,
        "fair": _fair(record, memo),
    }
    memo.playing = playing
    memo.to_act = to_act
    memo.off_turn = game.moves_off_turn
    memo.record = record


def _fair(record: RoomRecord, memo: ViewMemo) -> dict[str, Any]:
    """The view's ``fair`` map: the commitment to the room's secret, and once the game is over
    the secret and the seats' contributions (hex). The same map for every version until the
    game ends, so diffs skip it."""
    revealed = record.status == FINISHED
    fair = memo.fair
    if fair is None or (fair["secret"] is not None) != revealed:
        fair = memo.fair = fair_map(record, revealed)
    return fair


def fair_map(record: RoomRecord, revealed: bool) -> dict[str, Any]:
    """``fair`` as :func:`room_view` shows it, revealing the secret or not."""
    return {
        "commitment": fairness.commitment(record.id, record.secret).hex(),
        "secret": record.secret.hex() if revealed else None,
        "contributions": (
            [None if c is None else c.hex() for c in record.contributions] if revealed else None
        ),
    }


#: ``to_act`` lists of one seat, shared by every view (like the seats above).
_ONE: Final[list[list[int]]] = [[seat] for seat in range(16)]


def _shared_to_act(to_act: list[int]) -> list[int]:
    """The usual ``to_act`` of one seat as a list shared by all views, so a diff skips it by
    identity while the same seat is to act."""
    if len(to_act) == 1:
        seat = to_act[0]
        if type(seat) is int and 0 <= seat < len(_ONE):
            return _ONE[seat]
    return to_act


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


def lobby_entry(record: RoomRecord, title: str) -> dict[str, Any] | None:
    """The lobby's summary of ``record``, or None when the lobby does not list it: the lobby
    lists public rooms with people in them, until they finish."""
    listed = (
        not record.private
        and record.status != FINISHED
        and any(s.taken and not s.bot for s in record.seats)
    )
    return lobby_summary(record, title) if listed else None


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
        "commitment": fairness.commitment(record.id, record.secret).hex(),
    }


def my_summary(record: RoomRecord, game: Game, player: str) -> dict[str, Any]:
    """A room as its player's own list shows it (``my_rooms``): the lobby's summary, whether it
    is private, the player's seat (None if they only created it), whom the game waits for now
    and the room's version."""
    playing = record.status == PLAYING and record.state is not None
    to_act = list(game.to_act(record.state)) if playing and record.state is not None else []
    return {
        **lobby_summary(record, game.title),
        "private": record.private,
        "you": record.seat_of(player),
        "to_act": to_act,
        "version": record.version,
    }


def game_entry(game: Game) -> dict[str, Any]:
    """What the lobby's ``games`` shows of ``game``: its own options, then the room's, which
    every game accepts (``rooms.room_options.OPTIONS``)."""
    out = game.describe()
    out["options"] = [*out["options"], *(option.describe() for option in room_options.OPTIONS)]
    return out
