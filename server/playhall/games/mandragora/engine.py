"""Mandragora Mania as a :class:`~playhall.games.contract.Game`: options, setup, moves, views.

The state is plain data (see :func:`MandragoraGame.setup` for its fields). Nothing is hidden in
this game, so every viewer gets the same view apart from ``"you"``. The board mechanics live in
:mod:`.board` and piece values in :mod:`.pieces`; this module only sequences turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from playhall.games.contract import (
    Applied,
    Event,
    Game,
    Move,
    Option,
    Options,
    Outcome,
    Rejected,
    State,
    View,
)
from playhall.games.rng import Rng, RngState, seed_state

from . import board, bot, pieces

SEATS = 2
_FIRST_CHOICES: tuple[str, ...] = ("random", "0", "1")
_MOVE_KEYS = frozenset({"type", "area"})


class MandragoraGame(Game):
    """Two seats sow pieces around two interlocking loops and score what lands in their base."""

    id = "mandragora"
    title = "Mandragora Mania"
    min_seats = SEATS
    max_seats = SEATS
    quick_tables = ((SEATS, {}),)
    moves_off_turn: list[Move] | None = []  # only the seat whose turn it is moves
    options: Sequence[Option] = (
        Option(
            "pattern",
            "random",
            "Setup pattern A-E (ruling 7), or random.",
            choices=("random", *board.PATTERN_NAMES),
            label="setup pattern",
        ),
        Option(
            "first",
            "random",
            "Seat that moves first: 0 (seat 1 to people), 1 (seat 2), or random (ruling 1).",
            choices=_FIRST_CHOICES,
            label="first to move",
            # Seats are numbered from 1 for people (the wire's seat 0 is "seat 1").
            value_labels=(("0", "seat 1"), ("1", "seat 2")),
        ),
    )

    # -- options ---------------------------------------------------------------------------

    def normalize_options(self, options: Mapping[str, Any]) -> Options:
        """As the base class, but "first" also accepts the ints 0 and 1 (clients naturally send
        a seat number); they are stored as the strings "0"/"1" so the option keeps one kind."""
        first = options.get("first")
        if type(first) is int and first in (0, 1):
            options = {**options, "first": str(first)}
        return super().normalize_options(options)

    # -- setup and turn order --------------------------------------------------------------

    def setup(self, seats: int, options: Options, seed: bytes | int) -> State:
        """Draw the pattern (if random) and then the first mover (if random) from the seed.

        State fields: ``pattern``; ``first`` (seat that moved first, fixes piece values);
        ``areas`` (ten stacks, each a string of piece codes bottom first, e.g. "PMK");
        ``scores``; ``turn`` (seat to move, None once over); ``chain`` (extra turns the mover
        has taken in a row); ``moves`` (moves applied); ``last`` (public summary of the last
        move); ``stuck`` (the seat that could not move when the game ended); ``rng``
        (generator state, kept so a restored game is identical).
        """
        if seats != SEATS:
            raise Rejected("bad_seats", f"Mandragora Mania is for exactly {SEATS} seats")
        options = self.normalize_options(options)
        rng = Rng(seed_state(seed))
        pattern = str(options["pattern"])
        if pattern == "random":
            pattern = rng.choice(board.PATTERN_NAMES)
        first = rng.below(SEATS) if options["first"] == "random" else int(options["first"])
        state: State = {
            "pattern": pattern,
            "first": first,
            "areas": board.initial_areas(pattern),
            "scores": [0, 0],
            "turn": first,
            "chain": 0,
            "moves": 0,
            "last": None,
            "stuck": None,
            "rng": rng.state,
        }
        return state

    def to_act(self, state: State) -> list[int]:
        return [] if state["turn"] is None else [state["turn"]]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if state["turn"] is None or seat != state["turn"]:
            return []
        areas = sorted(board.selectable_areas(state["areas"], seat))
        return [{"type": "sow", "area": a} for a in areas]

    # -- moves -----------------------------------------------------------------------------

    def apply(self, state: State, seat: object, move: Any) -> Applied:
        # seat: an int from the room, but checked (and typed) as anything (see below).
        area = _parse_move(move)
        if state["turn"] is None:
            raise Rejected("game_over", "the game is over")
        if type(seat) is not int or seat != state["turn"]:  # True == 1, but is not a seat
            raise Rejected("not_your_turn", f"it is seat {state['turn']}'s turn")
        if area not in board.SELECTABLE[seat]:
            whose = "a base" if area in board.BASE else "the other seat's area"
            raise Rejected(
                "illegal_move",
                f"area {area} is {whose}; seat {seat} may select "
                f"{', '.join(map(str, sorted(board.SELECTABLE[seat])))}",
            )
        if not state["areas"][area]:
            raise Rejected("illegal_move", f"area {area} is empty")

        # Only the stack list and scores change; stacks are immutable strings, so copying the
        # two lists is a full copy.
        areas = list(state["areas"])
        scores = list(state["scores"])
        moved_first = seat == state["first"]
        base = board.BASE[seat]
        landings = board.sow(areas, seat, area)
        events: list[Event] = [{"type": "sow", "seat": seat, "area": area, "count": len(landings)}]
        gained = 0
        for piece, target in landings:
            events.append({"type": "land", "seat": seat, "piece": piece, "area": target})
            if target == base:
                points = pieces.value(piece, moved_first)
                gained += points
                scores[seat] += points
                events.append(
                    {
                        "type": "score",
                        "seat": seat,
                        "piece": piece,
                        "points": points,
                        "total": scores[seat],
                    }
                )

        extra = landings[-1][1] == base
        nxt = seat if extra else 1 - seat
        chain = state["chain"] + 1 if extra else 0
        if extra:
            events.append({"type": "extra_turn", "seat": seat, "chain": chain})
        new: State = {
            **state,
            "areas": areas,
            "scores": scores,
            "turn": nxt,
            "chain": chain,
            "moves": state["moves"] + 1,
            "last": {
                "seat": seat,
                "area": area,
                "landings": [{"piece": p, "area": a} for p, a in landings],
                "points": gained,
                "extra_turn": extra,
            },
        }
        # Ruling 6: the end is checked at the start of every turn, extra turns included.
        if not board.selectable_areas(areas, nxt):
            new["turn"] = None
            new["stuck"] = nxt
            result = _outcome(new)
            events.append({"type": "game_end", "stuck": nxt, **result.as_dict()})
        return Applied(new, events)

    # -- views and outcome -----------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> View:
        """Everything: the game has no hidden information. Stacks are listed bottom to top
        (ruling 3), and the rule tables a client needs to draw and explain the board are
        included so clients need no rules of their own."""
        turn = state["turn"]
        outcome = self.outcome(state)
        return {
            "game": self.id,
            "you": seat if seat in (0, 1) else None,
            "pattern": state["pattern"],
            "first": state["first"],
            "phase": "over" if turn is None else "play",
            "turn": turn,
            "chain": state["chain"],
            "move_count": state["moves"],
            "areas": [list(stack) for stack in state["areas"]],  # bottom to top
            "counts": [len(stack) for stack in state["areas"]],
            "scores": list(state["scores"]),
            "movable": [] if turn is None else sorted(board.selectable_areas(state["areas"], turn)),
            "bases": list(board.BASE),
            "selectable": [sorted(areas) for areas in board.SELECTABLE],
            "loops": [list(loop) for loop in board.LOOPS],
            "values": [pieces.value_table(s == state["first"]) for s in range(SEATS)],
            "piece_names": dict(pieces.NAMES),
            "last": _copy_last(state["last"]),
            "outcome": None if outcome is None else {**outcome.as_dict(), "stuck": state["stuck"]},
        }

    def outcome(self, state: State) -> Outcome | None:
        return None if state["turn"] is not None else _outcome(state)

    def ended(self, state: State, left: int, reason: str) -> State:
        """Nobody moves any more; ``left`` (a key only a left game has) says who left and why."""
        new = dict(state)
        new["turn"] = None
        new["left"] = {"seat": left, "reason": reason}
        return new

    # -- bot -------------------------------------------------------------------------------

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        return bot.choose(view, seat, moves, seed)


def _parse_move(move: Any) -> int:
    """The selected area of a well-formed sow move, else ``Rejected("bad_move")``. Checked
    before anything else so junk never reaches the rules."""
    if not isinstance(move, Mapping):
        raise Rejected("bad_move", "a move must be a map")
    if move.get("type") != "sow":
        raise Rejected("bad_move", 'the only move is {"type": "sow", "area": n}')
    if set(move) != _MOVE_KEYS:
        extra = sorted(map(str, set(move) - _MOVE_KEYS))
        raise Rejected(
            "bad_move", f"unexpected fields {extra}" if extra else "missing field 'area'"
        )
    area = move["area"]
    if type(area) is not int or not 0 <= area < board.AREA_COUNT:
        raise Rejected("bad_move", f"'area' must be an integer 0-{board.AREA_COUNT - 1}")
    return area


def _outcome(state: State) -> Outcome:
    scores = state["scores"]
    left = state.get("left")
    if left is not None:
        # A player left (resigned, or forfeited on time): the other wins.
        return Outcome([1 - left["seat"]], list(scores), left["reason"], (left["seat"],))
    if scores[0] == scores[1]:
        winners: list[int] = []
    else:
        winners = [0 if scores[0] > scores[1] else 1]
    return Outcome(winners=winners, scores=list(scores), reason="no_moves")


def _copy_last(last: dict[str, Any] | None) -> dict[str, Any] | None:
    if last is None:
        return None
    return {**last, "landings": [dict(landing) for landing in last["landings"]]}
