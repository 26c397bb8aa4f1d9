"""The contract every rule engine fulfils, and the plain-data types it speaks.

A game is pure, deterministic code over plain data: dicts with string keys, lists, ints, strings,
bools and None (what msgpack carries). Given the same seat count, options, seed and moves, an
engine reaches the same state, byte for byte once encoded. All randomness comes from
:class:`playhall.games.rng.Rng` (a stream keyed by the room's key) whose state lives inside the
game state, so a game restored from
Redis continues exactly as it would have. The server relies on it: between two checkpoints it
stores a room's moves, not its states, and a process that loads the room applies the logged
moves again (``playhall.rooms.replay``), each move as msgpack gives it back (lists, never
tuples). ``tests/rooms/test_replay.py`` checks every game for this.

The server calls an engine only through :class:`Game`. It never looks inside a state: it stores
it, hands it back, and asks the engine what each viewer may see.

Seats are ints ``0 .. seats-1``. A viewer is a seat, or ``None`` for a spectator (who may see
only what is public to everybody).

Moves are dicts with a ``"type"`` key, e.g. ``{"type": "steal", "target": 2}``. Engines enumerate
legal moves so thin clients and bots need no rules of their own. Where a move carries a free-form
payload too large to enumerate (a 20-card deck), ``legal_moves`` lists a *template* for it with
``"template": True`` and the view explains what may be filled in; ``apply`` validates the payload.

Events describe what happened, for animation and the game log. Each is a dict with a ``"type"``;
an optional ``"visible_to"`` list of seats restricts it to those seats (absent: everybody,
spectators included). The server strips ``"visible_to"`` before sending.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from playhall.games.rng import RngState

# Plain data as msgpack carries it. Kept as Any for the checker: the recursive type would cost
# more in casts than it buys, and the encoder refuses anything that is not plain data anyway.
State = dict[str, Any]
Move = dict[str, Any]
Event = dict[str, Any]
View = dict[str, Any]
Options = dict[str, Any]


class Rejected(Exception):
    """A move the rules do not allow. ``code`` is for machines, ``reason`` for people.

    Codes engines use (others may be added, documented in the game's rules page):
    ``not_your_turn``, ``illegal_move``, ``bad_move`` (malformed: wrong type or fields),
    ``game_over``.
    """

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


class Applied(NamedTuple):
    """The result of applying a move or an automatic step: the new state and what happened.
    (A named tuple: see docs/operations.md, "The compiled build".)"""

    state: State
    events: list[Event]


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.

    ``winners`` lists the winning seats (several on a shared win, empty on a draw where nobody
    wins); ``scores`` is indexed by seat; ``reason`` is a short machine word such as
    ``"target_reached"``, ``"deck_exhausted"``, ``"no_moves"``, or, when players leave
    (:meth:`Game.leave`), ``"resignation"`` or ``"timeout"``. ``left`` lists the seats that
    left the game before it ended (they win nothing); the outcome's map has it only when some
    did.
    """

    winners: list[int]
    scores: list[int | float | str]
    reason: str
    left: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "winners": list(self.winners),
            "scores": list(self.scores),
            "reason": self.reason,
        }
        if self.left:
            out["left"] = list(self.left)
        return out


@dataclass(frozen=True)
class Option:
    """One room option a game accepts.

    ``choices`` restricts the value to a list; otherwise ``minimum``/``maximum`` bound an int.
    The kind is taken from ``default`` (bool, int or str).

    What clients show people, so that none needs to know the game: ``label``, the option's name
    for people (the name itself when empty); ``unit``, what an int counts (``"ms"``: a duration
    in milliseconds, which a client may show in minutes and seconds); ``when``, the choices of
    other options under which this one applies (``{"clock": ("turn", "fischer")}``), so a client
    shows it only then; ``value_labels``, what particular values mean (Mantis's target 0: the
    rules' own target).
    """

    name: str
    default: bool | int | str
    help: str
    choices: tuple[bool | int | str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    label: str = ""
    unit: str | None = None
    when: tuple[tuple[str, tuple[bool | int | str, ...]], ...] = ()
    value_labels: tuple[tuple[bool | int | str, str], ...] = ()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "default": self.default,
            "kind": type(self.default).__name__,
            "help": self.help,
            "label": self.label or self.name,
        }
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["min"] = self.minimum
        if self.maximum is not None:
            out["max"] = self.maximum
        if self.unit is not None:
            out["unit"] = self.unit
        if self.when:
            out["when"] = {name: list(choices) for name, choices in self.when}
        if self.value_labels:
            out["value_labels"] = {str(value): text for value, text in self.value_labels}
        return out

    def check(self, value: Any) -> bool | int | str:
        """Return the value if acceptable, else raise :class:`Rejected` (code ``bad_option``)."""
        kind = type(self.default)
        # bool is a subclass of int: keep them apart so `true` is not accepted as a seat count.
        if type(value) is not kind:
            raise Rejected("bad_option", f"option {self.name!r} must be a {kind.__name__}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise Rejected("bad_option", f"option {self.name!r} must be one of: {allowed}")
        if isinstance(value, int) and self.minimum is not None and value < self.minimum:
            raise Rejected("bad_option", f"option {self.name!r} must be at least {self.minimum}")
        if isinstance(value, int) and self.maximum is not None and value > self.maximum:
            raise Rejected("bad_option", f"option {self.name!r} must be at most {self.maximum}")
        result: bool | int | str = value
        return result


class Game(ABC):
    """A game definition. Subclasses are stateless; every method is a pure function of its
    arguments. ``apply`` and ``apply_auto`` must not mutate the state they are given (the server
    keeps it until the new one is safely stored)."""

    #: Stable identifier used on the wire and in Redis, e.g. ``"mantis"``.
    id: str
    #: Human title, e.g. ``"Mantis"``.
    title: str
    #: Seat range for any option set (see :meth:`seat_range` for option-dependent limits).
    min_seats: int
    max_seats: int
    #: Room options the game accepts.
    options: Sequence[Option] = ()
    #: Whether every viewer (each seat, and spectators) sees the same view of a state. Then the
    #: room asks :meth:`view` once per state and shows that one map to all of them, which also
    #: lets it diff the map once for all viewers.
    public_view: bool = False
    #: What :meth:`legal_moves` gives every seat that is not in :meth:`to_act` while the game
    #: is on, whatever the state, when the game knows it without being asked (``[]``: a seat
    #: moves only when the game waits for it; Math Magic Card: resigning, at any time). The
    #: room then asks :meth:`legal_moves` only of the seats in ``to_act`` and shows every other
    #: seat this very list (which nobody changes). ``None``, the default: the room asks every
    #: seat at every step. The contract's checks hold a game to what it says here.
    moves_off_turn: list[Move] | None = None
    #: Small tables that play the game quickly, as (seat count, options) pairs: the contract's
    #: checks (playhall.games.conformance: tests/games/test_conformance.py and ``playhall
    #: check-game``) and every suite that plays all games play the game at each. Cover each
    #: seat count or mode that plays differently; keep automatic steps unpaced. Empty: one
    #: table of ``min_seats`` with the default options.
    quick_tables: Sequence[tuple[int, Options]] = ()

    # -- options and seats ------------------------------------------------------------------

    def normalize_options(self, options: Mapping[str, Any]) -> Options:
        """Fill defaults and validate; unknown names are refused."""
        known = {o.name: o for o in self.options}
        for name in options:
            if name not in known:
                raise Rejected("bad_option", f"unknown option {name!r} for {self.id}")
        return {
            o.name: o.check(options[o.name]) if o.name in options else o.default
            for o in self.options
        }

    def seat_range(self, options: Options) -> tuple[int, int]:
        """Allowed seat counts for these (normalized) options. Override when options matter
        (Mandala's solo mode has exactly one seat)."""
        return (self.min_seats, self.max_seats)

    def describe(self) -> dict[str, Any]:
        """What the lobby shows about this game."""
        return {
            "id": self.id,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": [o.describe() for o in self.options],
            "seats_by_option": self._seats_by_option(),
        }

    def _seats_by_option(self) -> dict[str, dict[str, list[int]]]:
        """Seat ranges that depend on an option's choice, so a client can offer the right seat
        counts without a round of refusals. An option is listed when its choices give different
        ranges (each tried with the other options at their defaults), and then every choice
        whose range differs from the game's ``min_seats``/``max_seats``, the default choice
        included (Mandala: standard takes exactly 2 seats, solo exactly 1)."""
        found: dict[str, dict[str, list[int]]] = {}
        for option in self.options:
            ranges = {
                str(choice): self.seat_range(self.normalize_options({option.name: choice}))
                for choice in option.choices or ()
            }
            if len(set(ranges.values())) < 2:
                continue  # the seats do not depend on this option
            for choice, (low, high) in ranges.items():
                if (low, high) != (self.min_seats, self.max_seats):
                    found.setdefault(option.name, {})[choice] = [low, high]
        return found

    # -- the game itself --------------------------------------------------------------------

    @abstractmethod
    def setup(self, seats: int, options: Options, seed: bytes | int) -> State:
        """The initial state. ``options`` are already normalized; ``seed`` is the room's 32-byte
        key, from which every draw comes (``Rng(seed_state(seed))``; an int stands for
        ``rng.int_key`` of it, for tests and tools)."""

    @abstractmethod
    def to_act(self, state: State) -> list[int]:
        """The seats that may act now (several during simultaneous steps, none when the game is
        over or an automatic step is pending)."""

    @abstractmethod
    def legal_moves(self, state: State, seat: int) -> list[Move]:
        """Every move ``seat`` may make now (empty if it may not act). Read-only for the caller:
        an engine may hand out the same list again (views, which hold it, never change)."""

    @abstractmethod
    def apply(self, state: State, seat: int, move: Any) -> Applied:
        """Apply ``move`` for ``seat``; raise :class:`Rejected` if it is not legal.

        ``move`` is what the player sent, any msgpack value (a :data:`Move` only once checked):
        a malformed one is refused with ``bad_move``."""

    @abstractmethod
    def view(self, state: State, seat: int | None) -> View:
        """What ``seat`` (or a spectator, ``None``) may see. Must hold nothing else."""

    @abstractmethod
    def outcome(self, state: State) -> Outcome | None:
        """``None`` while the game goes on."""

    def turn_goes_on(self, before: State, after: State, seat: int) -> bool:
        """Whether the step from ``before`` to ``after`` leaves ``seat`` in the turn it was
        playing in ``before``: a room's ``turn`` clock then goes on (or, if ``seat`` waits
        in ``after`` for another seat's answer, resumes later with what was left) instead of
        giving the seat's next turn the whole time again. The server asks it for every seat
        after every game step of a room with a clock.

        The default is False: whenever a seat is to act again after its own move, or after
        other seats have moved, it begins a new turn (the extra turns of Mantis and
        Mandragora; each pick of a Mandala resolution). A game whose turn is several moves
        (Math Magic Card: any number of actions, then ``end_turn``) overrides it."""
        return False

    # -- automatic steps (Master Yoga, a Card Battle turn) ----------------------------------

    def auto_delay(self, state: State) -> float | None:
        """Seconds to wait before the next automatic step, or ``None`` if none is pending.

        The room stores the resulting absolute deadline with the room, so a restart neither
        loses nor resets it, then calls :meth:`apply_auto`.
        """
        return None

    def apply_auto(self, state: State) -> Applied:
        """Run the pending automatic step."""
        raise Rejected("illegal_move", "no automatic step is pending")

    # -- leaving (resignation, forfeit on time) -------------------------------------------

    def leave(self, state: State, seat: int, reason: str) -> Applied:
        """``seat`` leaves the game for ``reason`` (:data:`LEAVE_REASONS`: it resigned, or its
        clock ran out and the room's policy is to forfeit). A player may leave at any time while
        the game is on, whether or not it is their turn.

        The default is the rule of a two-seat game: the other seat wins at once, and the outcome
        lists the leaver under ``left``. It asks :meth:`ended` for the finished state. Games of
        other sizes override this (Mandala solo: Master Yoga wins; Mantis with three or more:
        the seat drops out and play goes on without it). Refused with ``game_over`` once the
        game is over, ``bad_move`` for a reason or seat that is not one."""
        check_leave(self, state, seat, reason)
        if (self.min_seats, self.max_seats) != (2, 2):
            raise Rejected("illegal_move", f"{self.title} has no rule for a player leaving")
        new = self.ended(state, seat, reason)
        outcome = self.outcome(new)
        assert outcome is not None, "ended() must finish the game"
        return Applied(new, [left_event(seat, reason), game_over_event(outcome)])

    def ended(self, state: State, left: int, reason: str) -> State:
        """The state of a two-seat game that ``left`` left for ``reason``: over, the other seat
        the winner, and :meth:`outcome` saying so (with ``left``). Used by the default
        :meth:`leave`; a game that cannot end early keeps this refusal."""
        raise Rejected("illegal_move", f"{self.title} cannot end early")

    # -- bots -------------------------------------------------------------------------------

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        """A move for a server-side bot in ``seat``, chosen from ``moves`` using only ``view``
        (what that seat may see). ``seed`` is the state of the bot's own stream
        (``rng.bot_state``; ``Rng(seed)`` draws from it), so the choice is reproducible. The
        default plays the first legal move; games override it with something sensible."""
        return dict(moves[0])


#: Why a seat leaves a game: it resigned, or its clock ran out under the ``forfeit`` policy.
LEAVE_REASONS: Final = ("resignation", "timeout")


def check_leave(game: Game, state: State, seat: object, reason: object) -> None:
    """Refuse a leave that cannot happen: the game is over, the reason or the seat is not one
    (the seat's range is each game's to check, as its ``apply`` does)."""
    if game.outcome(state) is not None:
        raise Rejected("game_over", "the game is over")
    if reason not in LEAVE_REASONS:
        raise Rejected("bad_move", f"a leave's reason is one of: {', '.join(LEAVE_REASONS)}")
    if type(seat) is not int or not 0 <= seat < game.max_seats:
        raise Rejected("bad_move", "the seat leaving must be a seat number")


def left_event(seat: int, reason: str) -> Event:
    """The event of ``seat`` leaving the game."""
    return {"type": "left", "seat": seat, "reason": reason}


def game_over_event(outcome: Outcome) -> Event:
    """The ``game_over`` event announcing ``outcome``."""
    return {"type": "game_over", **outcome.as_dict()}


def clone(data: Any) -> Any:
    """A deep copy of plain data, several times faster than ``copy.deepcopy`` (no memo, no
    reduce protocol): engines call it at the top of ``apply`` to keep the input untouched."""
    if isinstance(data, dict):
        return {k: clone(v) for k, v in data.items()}
    if isinstance(data, list):
        return [clone(v) for v in data]
    return data
