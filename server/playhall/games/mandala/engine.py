"""Mandala as a :class:`~playhall.games.contract.Game`: options, setup, turn control, and the
glue between moves, Master Yoga's automatic steps, resolution and views."""

from __future__ import annotations

from collections.abc import Sequence
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
    check_leave,
    clone,
    left_event,
)
from playhall.games.rng import Rng, RngState, seed_state

from . import bot
from .actions import play_action
from .board import add_to_mountain, new_mandala
from .cards import new_deck, zero_counts
from .moves import action_moves, check_action, check_choice, choice_moves, parse
from .resolution import pick, start_resolution
from .scoring import outcome
from .turns import YOGA, acting_player, advance, begin_slot, is_bot_player
from .view import build_view
from .yoga import yoga_choice, yoga_move

HAND_SIZE = 6
CUP_SIZE = 2


def _new_player() -> dict[str, Any]:
    return {"hand": zero_counts(), "cup": zero_counts(), "river": []}


def _deal(deck: list[str], pile: dict[str, int], count: int) -> None:
    for _ in range(count):
        pile[deck.pop(0)] += 1


def _seed_mountains(deck: list[str], mandalas: list[dict[str, Any]]) -> None:
    """Ruling 3: left mandala first, two cards one at a time, same colours stacked."""
    for mandala in mandalas:
        for _ in range(2):
            add_to_mountain(mandala, deck.pop(0))


class Mandala(Game):
    """Mandala for two players, or one player against Master Yoga (room option ``mode``)."""

    id = "mandala"
    title = "Mandala"
    min_seats = 1
    max_seats = 2
    quick_tables = ((2, {}), (1, {"mode": "solo", "yoga_delay_ms": 0}))
    moves_off_turn: list[Move] | None = []  # only the seats the game waits for move
    options: Sequence[Option] = (
        Option(
            "mode",
            "standard",
            "standard: two players; solo: one player against Master Yoga",
            choices=("standard", "solo"),
            label="mode",
            value_labels=(("standard", "two players"), ("solo", "solo against Master Yoga")),
        ),
        Option(
            "yoga",
            "full",
            "Master Yoga's colour choice: full procedure, or simple "
            "(leftmost, preferring colours new to his river)",
            choices=("full", "simple"),
            label="Master Yoga's choice",
            when=(("mode", ("solo",)),),
        ),
        Option(
            "yoga_delay_ms",
            800,
            "pause before each of Master Yoga's automatic steps",
            minimum=0,
            maximum=10000,
            label="Master Yoga's pause",
            unit="ms",
            when=(("mode", ("solo",)),),
        ),
    )

    def seat_range(self, options: Options) -> tuple[int, int]:
        return (1, 1) if options.get("mode") == "solo" else (2, 2)

    # -- setup --------------------------------------------------------------------------------

    def setup(self, seats: int, options: Options, seed: bytes | int) -> State:
        low, high = self.seat_range(options)
        if not low <= seats <= high:
            raise Rejected("bad_option", f"mandala ({options.get('mode')}) needs {low} seat(s)")
        rng = Rng(seed_state(seed))
        deck = new_deck()
        rng.shuffle(deck)
        players = [_new_player(), _new_player()]
        mandalas = [new_mandala(), new_mandala()]
        solo = options["mode"] == "solo"
        if solo:
            # Ruling 10 follows the seed's order: your hand and cup, Yoga's cup, then mandalas.
            _deal(deck, players[0]["hand"], HAND_SIZE)
            _deal(deck, players[0]["cup"], CUP_SIZE)
            _deal(deck, players[YOGA]["cup"], CUP_SIZE)
            _seed_mountains(deck, mandalas)
            first = 0
        else:
            _seed_mountains(deck, mandalas)
            for player in players:
                _deal(deck, player["hand"], HAND_SIZE)
                _deal(deck, player["cup"], CUP_SIZE)
            first = rng.below(2)
        state: State = {
            "mode": options["mode"],
            "yoga": options["yoga"],
            "delay_ms": options["yoga_delay_ms"],
            "seats": seats,
            "rng": rng.state,
            "deck": deck,
            "discard": [],
            "reshuffled": False,
            "mandalas": mandalas,
            "players": players,
            "slot": first,
            "phase": "action",
            "resolution": None,
            "end": None,
            "last": [],
        }
        begin_slot(state, first)
        return state

    # -- turn control -------------------------------------------------------------------------

    def _acting(self, state: State) -> int | None:
        """The player who acts now (human or Yoga), or None when the game is over."""
        if state["phase"] == "resolve":
            return int(state["resolution"]["chooser"])
        if state["phase"] in ("action", "yoga"):
            return acting_player(state)
        return None

    def _auto_pending(self, state: State) -> bool:
        player = self._acting(state)
        return player is not None and is_bot_player(state, player)

    def to_act(self, state: State) -> list[int]:
        player = self._acting(state)
        if player is None or is_bot_player(state, player):
            return []
        return [player]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat not in self.to_act(state):
            return []
        if state["phase"] == "resolve":
            return choice_moves(state)
        return action_moves(state, seat)

    # -- moves --------------------------------------------------------------------------------

    def apply(self, state: State, seat: int, move: Any) -> Applied:
        if state["phase"] == "over":
            raise Rejected("game_over", "the game is over")
        parsed = parse(move)
        if seat not in self.to_act(state):
            raise Rejected("not_your_turn", "it is not your turn")
        new = clone(state)
        events: list[Event] = []
        if new["phase"] == "resolve":
            check_choice(new, parsed)
            pick(new, parsed["colour"], events)
        else:
            check_action(new, seat, parsed)
            play_action(new, seat, parsed, events)
        return self._done(new, events)

    def auto_delay(self, state: State) -> float | None:
        return state["delay_ms"] / 1000 if self._auto_pending(state) else None

    def apply_auto(self, state: State) -> Applied:
        """One Yoga move, or one Yoga pick in a resolution (ruling 10)."""
        if not self._auto_pending(state):
            raise Rejected("illegal_move", "no automatic step is pending")
        new = clone(state)
        events: list[Event] = []
        if new["phase"] == "resolve":
            pick(new, yoga_choice(new, new["resolution"]["mandala"]), events)
        else:
            index = new["slot"] - 1
            if yoga_move(new, index, events):
                start_resolution(new, index, YOGA, bool(new["reshuffled"]), events)
            elif new["phase"] != "over":
                advance(new)
        return self._done(new, events)

    def _done(self, state: State, events: list[Event]) -> Applied:
        """Close a step: announce the end if it came, and keep the public events for views."""
        result = outcome(state)
        if result is not None:
            events.append({"type": "game_over", **result.as_dict()})
        state["last"] = [e for e in events if "visible_to" not in e]
        return Applied(state, events)

    def leave(self, state: State, seat: int, reason: str) -> Applied:
        """The other player wins; in solo, Master Yoga (see ``scoring.outcome``)."""
        check_leave(self, state, seat, reason)
        if seat >= len(state["players"]) or (state["mode"] == "solo" and seat != 0):
            raise Rejected("bad_move", "the seat leaving must be a seat number")
        new = clone(state)
        new["phase"] = "over"
        new["end"] = reason
        new["left"] = seat
        return self._done(new, [left_event(seat, reason)])

    # -- views, outcome, bot ------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> View:
        return build_view(state, seat, self.to_act(state))

    def outcome(self, state: State) -> Outcome | None:
        return outcome(state)

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        return bot.choose(view, seat, moves, seed)
