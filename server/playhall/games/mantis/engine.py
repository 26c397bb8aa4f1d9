"""The Mantis rule engine.

Mantis is the game the server's benchmark plays, so every method here is written to be cheap:

- Cards are ints (see :mod:`.cards`); every fact about a card is one table lookup.
- The shuffled deck is one list that is never changed after setup. ``next`` is the index of
  the top card; drawing a card is ``next + 1``. New states share the deck list with the old
  one instead of copying 105 ints per move (nothing ever writes to it).
- ``apply`` copies the state dict shallowly and replaces only the lists a move changes (one or
  two tanks, at most one score pile), never the whole state.

State (server-only; plain data)::

    seats   int           number of players, 2..6
    target  int           score pile size that wins at once (option resolved at setup)
    deck    list[int]     the shuffled 105 cards, in deal/draw order (hidden)
    next    int           index in ``deck`` of the top card of the draw pile; 105 = empty
    tanks   list[list[int]]  face-up cards in front of each seat
    piles   list[list[int]]  face-down score piles (only their sizes are public)
    turn    int           the seat to act (meaningless once ``result`` is set)
    first   int           the randomly chosen first player
    rng     map           the RNG state after setup (Rulings 2: shuffle and first player)
    last    dict | None   the last flip, in public form (what the view shows)
    result  dict | None   {"winners", "scores", "reason"} once the game is over, and "left"
                          when seats left
    out     list[int]     seats that left the game (Ruling 10), in the order they left; the
                          key is there only once a seat has left

Cards in the deck before ``next`` were dealt or drawn and now sit in a tank or a score pile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from playhall.games.contract import (
    Applied,
    Event,
    Game,
    Move,
    Option,
    Outcome,
    Rejected,
    State,
    View,
    check_leave,
    game_over_event,
    left_event,
)
from playhall.games.rng import Rng, RngState, seed_state

from .bot import choose
from .cards import BACK, BACK_NAMES, CODE, COLOURS, DECK_SIZE, FACE

TANK_DEAL: Final = 4  # Ruling 2: four cards face up into each tank.
DEFAULT_TARGET: Final = 10  # Ruling 6.
TWO_PLAYER_TARGET: Final = 15  # Ruling 6, two players.
MIN_SEATS: Final = 2  # the seed rules: 2 to 6 players
MAX_SEATS: Final = 6


# -- the view ------------------------------------------------------------------------------------


def _public(state: State) -> dict[str, Any]:
    """The view of ``state``: the same for every viewer (Ruling 3)."""
    nxt = state["next"]
    result = state["result"]
    tanks: list[list[int]] = state["tanks"]
    piles: list[list[int]] = state["piles"]
    public = {
        "seats": state["seats"],
        "turn": None if result is not None else state["turn"],
        "first": state["first"],
        "target": state["target"],
        # Built afresh for each state, not cached by value: an unchanged tank's list is equal
        # to the last version's, which the (C) diff finds as fast as the same list, while a
        # cache of every tank seen would keep thousands of short-lived lists and keys alive for
        # the cyclic collector to walk (docs/benchmarks.md, "Collector pauses").
        "tanks": [[CODE[c] for c in tank] for tank in tanks],
        "scores": [len(pile) for pile in piles],
        "top_back": _TOP_BACK[BACK[state["deck"][nxt]]] if nxt < DECK_SIZE else None,
        "cards_left": DECK_SIZE - nxt,
        # The state's own map: states and views are never changed once built.
        "last": state["last"],
        "left": state.get("out", _NONE_LEFT),
        "outcome": None if result is None else _outcome(result).as_dict(),
    }
    return public


#: The view's ``left`` while every seat plays (shared: nobody changes it).
_NONE_LEFT: Final[list[int]] = []


def _outcome(result: dict[str, Any]) -> Outcome:
    left = tuple(result.get("left", ()))
    return Outcome(list(result["winners"]), list(result["scores"]), result["reason"], left)


#: Each seat's legal moves at a table of each size: the room view of the seat to act holds its
#: list, so a move does not build them, and a view whose moves did not change (an extra turn)
#: holds the very same list, which the diff skips at once. Shared: nobody changes them.
_MOVES: Final[list[list[list[Move]]]] = [
    [
        [{"type": "score"}, *({"type": "steal", "target": o} for o in range(seats) if o != seat)]
        for seat in range(seats)
    ]
    for seats in range(MAX_SEATS + 1)
]

#: The top card's back colours as the view shows them, one list per back.
_TOP_BACK: Final[list[list[str]]] = [list(names) for names in BACK_NAMES]


def resolve_target(seats: int, option: int) -> int:
    """The winning score for ``seats`` players: the option, where 0 means the rules' default."""
    if option:
        return option
    return TWO_PLAYER_TARGET if seats == 2 else DEFAULT_TARGET


def _split(tank: list[int], colour: int) -> tuple[list[int], list[int]]:
    """The cards of ``tank`` whose face is ``colour``, and the rest (both in tank order)."""
    matched = [c for c in tank if FACE[c] == colour]
    if not matched:
        return matched, tank
    return matched, [c for c in tank if FACE[c] != colour]


def final_result(
    piles: Sequence[Sequence[int]], tanks: Sequence[Sequence[int]], out: Sequence[int] = ()
) -> dict[str, Any]:
    """Ruling 8: the deck ran out with nobody at the target. Most points wins; a tie goes to the
    most cards in tank; players still tied all win. Seats that left (``out``, Ruling 10) win
    nothing: only the others are compared."""
    points = [len(p) for p in piles]
    playing = [s for s in range(len(piles)) if s not in out]
    best = max(points[s] for s in playing)
    leaders = [s for s in playing if points[s] == best]
    most = max(len(tanks[s]) for s in leaders)
    winners = [s for s in leaders if len(tanks[s]) == most]
    return {"winners": winners, "scores": points, "reason": "deck_exhausted"}


def next_seat(seat: int, seats: int, out: Sequence[int]) -> int:
    """The seat after ``seat`` in turn order, skipping those that left (Ruling 10)."""
    turn = (seat + 1) % seats
    while turn in out:
        turn = (turn + 1) % seats
    return turn


def _parse(state: State, seat: int, move: Any) -> int | None:
    """Check the move's shape; return the steal target, or None for a score.

    Raises ``bad_move`` for anything malformed and ``illegal_move`` for stealing from yourself.
    """
    if type(move) is not dict:
        raise Rejected("bad_move", "a move must be a map with a 'type'")
    kind = move.get("type")
    if kind == "score":
        if len(move) != 1:
            raise Rejected("bad_move", "a score move has no other fields")
        return None
    if kind == "steal":
        if len(move) != 2 or "target" not in move:
            raise Rejected("bad_move", "a steal move has exactly the fields 'type' and 'target'")
        victim = move["target"]
        if type(victim) is not int or not 0 <= victim < state["seats"]:
            raise Rejected("bad_move", "'target' must be the seat number of a player")
        if victim == seat:
            raise Rejected("illegal_move", "you cannot steal from yourself")
        if victim in state.get("out", ()):
            raise Rejected("illegal_move", f"seat {victim} has left the game (Ruling 10)")
        return victim
    raise Rejected("bad_move", "move type must be 'score' or 'steal'")


class Mantis(Game):
    """Mantis for 2–6 players (the rules and rulings 1–9 restated in docs/games/mantis.md)."""

    id = "mantis"
    title = "Mantis"
    min_seats = MIN_SEATS
    max_seats = MAX_SEATS
    public_view = True  # Ruling 3: everything is public but the deck and the score piles
    moves_off_turn: list[Move] | None = []  # only the seat whose turn it is moves
    quick_tables: Sequence[tuple[int, dict[str, Any]]] = ((2, {}), (5, {}))
    options: Sequence[Option] = (
        Option(
            "target",
            0,
            "score pile size that wins at once; 0 = the rules' default (10, or 15 with 2 players)",
            minimum=0,
            maximum=DECK_SIZE,
            label="target score",
            value_labels=((0, "the rules' (10, or 15 with 2 players)"),),
        ),
    )

    # -- setup ------------------------------------------------------------------------------

    def setup(self, seats: int, options: dict[str, Any], seed: bytes | int) -> State:
        if type(seats) is not int or not self.min_seats <= seats <= self.max_seats:
            raise Rejected("bad_option", "Mantis needs 2 to 6 players")
        rng = Rng(seed_state(seed))
        deck = list(range(DECK_SIZE))
        rng.shuffle(deck)
        first = rng.below(seats)
        dealt = TANK_DEAL * seats
        # Dealt one card at a time around the table, as at a real table.
        tanks = [deck[s:dealt:seats] for s in range(seats)]
        return {
            "seats": seats,
            "target": resolve_target(seats, int(options.get("target", 0))),
            "deck": deck,
            "next": dealt,
            "tanks": tanks,
            "piles": [[] for _ in range(seats)],
            "turn": first,
            "first": first,
            "rng": rng.state,
            "last": None,
            "result": None,
        }

    # -- queries ----------------------------------------------------------------------------

    def to_act(self, state: State) -> list[int]:
        if state["result"] is not None:
            return []
        return [state["turn"]]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        """Score, or steal from any other seat (Rulings 4 and 5): the same list for a seat at a
        table of a size, made once (see ``_MOVES``)."""
        if state["result"] is not None or seat != state["turn"]:
            return []
        moves = _MOVES[state["seats"]][seat]
        out = state.get("out")
        if out:
            # Ruling 10: nobody may steal from a seat that left.
            return [m for m in moves if m.get("target") not in out]
        return moves

    def outcome(self, state: State) -> Outcome | None:
        result = state["result"]
        return None if result is None else _outcome(result)

    def view(self, state: State, seat: int | None) -> View:
        """Everything in Mantis is public except the deck's faces and order and the colours in
        score piles (Ruling 3), so every viewer gets the same view: the very same map. (Which
        seat is looking is the room view's ``you``.)

        The game says so (``public_view``): the room asks once per state and shows all its
        viewers the one map, and works out its diff once for all of them. A tank that did not
        change is an equal list in the next view, not the same one (see ``_public`` for why);
        the C diff finds it unchanged about as fast."""
        return _public(state)

    # -- the move ---------------------------------------------------------------------------

    def apply(self, state: State, seat: object, move: Any) -> Applied:
        # seat: an int from the room, but checked (and typed) as anything: None or a bool
        # is not a seat.
        if state["result"] is not None:
            raise Rejected("game_over", "the game is over")
        if seat != state["turn"] or type(seat) is not int:
            raise Rejected("not_your_turn", "it is not your turn")
        victim = _parse(state, seat, move)

        nxt: int = state["next"]
        deck: list[int] = state["deck"]
        card = deck[nxt]
        colour = FACE[card]
        code = CODE[card]
        colour_name = COLOURS[colour]
        new = dict(state)
        new["next"] = nxt + 1
        tanks: list[list[int]] = list(state["tanks"])
        new["tanks"] = tanks
        events: list[Event] = [
            {
                "type": "flip",
                "seat": seat,
                "action": "score" if victim is None else "steal",
                "target": victim,
                "card": code,
                "colour": colour_name,
            }
        ]
        extra_turn = False
        won = False

        if victim is None:
            # Ruling 4 (and 9: an empty tank never matches, so the card joins it).
            matched, rest = _split(tanks[seat], colour)
            if matched:
                piles: list[list[int]] = list(state["piles"])
                pile = piles[seat] + matched
                pile.append(card)
                piles[seat] = pile
                new["piles"] = piles
                tanks[seat] = rest
                count = len(matched) + 1
                events.append(
                    {
                        "type": "scored",
                        "seat": seat,
                        "colour": colour_name,
                        "count": count,
                        "pile": len(pile),
                    }
                )
                result, into = "scored", seat
                won = len(pile) >= state["target"]
            else:
                tanks[seat] = rest + [card]
                count = 1
                events.append({"type": "to_tank", "seat": seat, "card": code})
                result, into = "to_tank", seat
        else:
            # Ruling 5; Ruling 7 gives a successful stealer another turn with two players.
            matched, rest = _split(tanks[victim], colour)
            if matched:
                moved = matched + [card]
                tanks[victim] = rest
                tanks[seat] = tanks[seat] + moved
                count = len(moved)
                events.append(
                    {
                        "type": "stolen",
                        "seat": seat,
                        "from": victim,
                        "colour": colour_name,
                        "cards": [CODE[c] for c in moved],
                        "count": count,
                    }
                )
                result, into = "stolen", seat
                extra_turn = state["seats"] == 2
            else:
                tanks[victim] = rest + [card]
                count = 1
                events.append({"type": "to_tank", "seat": victim, "card": code})
                result, into = "to_tank", victim

        new["last"] = {
            "seat": seat,
            "action": events[0]["action"],
            "target": victim,
            "card": code,
            "colour": colour_name,
            "result": result,
            "into": into,
            "count": count,
        }

        if won:
            outcome: dict[str, Any] | None = {
                "winners": [seat],
                "scores": [len(p) for p in new["piles"]],
                "reason": "target_reached",
            }
        elif nxt + 1 == DECK_SIZE:
            outcome = final_result(new["piles"], tanks, state.get("out", ()))
        else:
            outcome = None

        if outcome is not None:
            if "out" in state:
                outcome["left"] = list(state["out"])
            new["result"] = outcome
            events.append(game_over_event(_outcome(outcome)))
        elif extra_turn:
            events.append({"type": "extra_turn", "seat": seat})
        elif "out" in state:
            new["turn"] = next_seat(seat, state["seats"], state["out"])
        else:
            new["turn"] = (seat + 1) % state["seats"]
        return Applied(new, events)

    # -- leaving ----------------------------------------------------------------------------

    def leave(self, state: State, seat: object, reason: object) -> Applied:
        """Ruling 10: the seat drops out. Its tank and score pile stay where they are, out of
        play: nobody may steal from them (``_parse``, ``legal_moves``), turns skip the seat
        (``next_seat``) and it wins nothing (``final_result``); the outcome lists it under
        ``left``. When one player remains, that player wins at once, for ``reason`` (with two
        players, leaving hands the other the win). The variant chosen at setup for the table's
        size (target, Ruling 7's extra turn with two players) stays as it was."""
        # seat and reason: checked (and typed) as anything, as in ``apply``.
        check_leave(self, state, seat, reason)
        assert type(seat) is int and isinstance(reason, str)
        seats: int = state["seats"]
        if seat >= seats:
            raise Rejected("bad_move", "the seat leaving must be a seat number")
        out: list[int] = list(state.get("out", ()))
        if seat in out:
            raise Rejected("illegal_move", f"seat {seat} has already left the game")
        out.append(seat)
        new = dict(state)
        new["out"] = out
        events: list[Event] = [left_event(seat, reason)]
        remaining = [s for s in range(seats) if s not in out]
        if len(remaining) == 1:
            result = {
                "winners": remaining,
                "scores": [len(p) for p in state["piles"]],
                "reason": reason,
                "left": list(out),
            }
            new["result"] = result
            events.append(game_over_event(_outcome(result)))
        elif seat == state["turn"]:
            new["turn"] = next_seat(seat, seats, out)
        return Applied(new, events)

    # -- bot --------------------------------------------------------------------------------

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        return choose(view, seat, moves, seed)
