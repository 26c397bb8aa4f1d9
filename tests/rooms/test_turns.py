"""A ``turn`` clock in every game, held to the game's rules: which steps keep a seat's turn
going (its clock runs on, or resumes with what was left) and which begin a new one (the whole
``clock_ms`` again). Each game is played out by its bot, at each of its quick tables, through
the room's own step (``rooms.replay.played``) at a time the test sets; every clock after every
step is checked against what the game's rules page says a turn is, and each game must have
shown the cases its rules are about.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from playhall.catalog import get_game
from playhall.games.contract import Game, State
from playhall.games.rng import int_key
from playhall.rooms import table
from playhall.rooms.record import PLAYING, RoomRecord, Seat
from playhall.rooms.replay import game_fields, played

LIMIT_MS = 100_000
#: Seconds between two steps of the games played here.
STEP = 1.0
#: Steps each game is played for at most (enough for every case below to show).
MAX_STEPS = 400


def math_card_turn_goes_on(before: State, after: State, seat: int) -> bool:
    """Math Magic Card (docs/games/math_card.md, ruling 6): a turn is any number of actions,
    then ``end_turn``; the choices it opens (either seat's to answer) and its end phase belong
    to it. The turn's player and number say which turn it is."""
    old, new = before["turn"], after["turn"]
    return bool(old and new and old["seat"] == new["seat"] == seat
                and old["number"] == new["number"])


def never(before: State, after: State, seat: int) -> bool:
    """Mantis, Mandragora, Mandala, Card Battle: a seat to act again after its own move begins
    a new turn (an extra turn; each pick of a Mandala resolution is a decision of its own; a
    Card Battle seat acts once, its deck)."""
    return False


#: What each game's rules say: does a step keep a seat in the turn it was playing?
RULES = {
    "mantis": never,
    "mandragora": never,
    "mandala": never,
    "card_battle": never,
    "math_card": math_card_turn_goes_on,
}


def clocked_room(game: Game, seats: int, options: dict[str, Any], now: float) -> RoomRecord:
    """A started room of bots with a turn clock, set up at ``now``."""
    clock = {"clock": "turn", "clock_ms": LIMIT_MS, "on_timeout": "bot"}
    record = table.create(
        game.id, {**options, **clock}, seats, "host", private=False, room_id="r",
        secret=int_key(11), created=now,
    )
    bots = tuple(Seat(None, f"Bot {i + 1}", bot=True, ready=True) for i in range(seats))
    state = game.setup(seats, table.game_options(record.options), table.room_key(record))
    fields = game_fields(game, state, record.options, seats, now)
    return replace(record.evolve(seats=bots), **fields)


def expected(
    game_id: str, before: RoomRecord, after_state: State, seat: int, mover: int | None
) -> str:
    """How ``seat``'s clock (to act after the step) goes on, by the rules: ``runs_on`` to the
    same deadline, ``resumes`` with what was left, or ``fresh``: a new turn, the whole limit."""
    assert before.state is not None and before.clocks is not None
    running = before.clocks["deadlines"][seat] is not None
    same_turn = RULES[game_id](before.state, after_state, seat)
    if running and (seat != mover or same_turn):
        return "runs_on"
    return "resumes" if same_turn else "fresh"


def observed(before: RoomRecord, after: RoomRecord, seat: int, now: float) -> str:
    assert before.clocks is not None and after.clocks is not None
    deadline = after.clocks["deadlines"][seat]
    assert deadline is not None, f"seat {seat} is to act and its clock does not run"
    if deadline == before.clocks["deadlines"][seat]:
        return "runs_on"
    if deadline == pytest.approx(now + LIMIT_MS / 1000):
        return "fresh"
    assert deadline == pytest.approx(now + before.clocks["remaining_ms"][seat] / 1000)
    return "resumes"


def play(game_id: str, seats: int, options: dict[str, Any]) -> Counter[tuple[str, bool]]:
    """Play a game out (or ``MAX_STEPS`` steps) by its bot, checking every clock after every
    step against the rules; the cases seen: (how the clock went on, whether the seat had
    just moved)."""
    game = get_game(game_id)
    assert game is not None
    now = 1_000.0
    record = clocked_room(game, seats, options, now)
    seen: Counter[tuple[str, bool]] = Counter()
    for _ in range(MAX_STEPS):
        if record.status != PLAYING:
            break
        state = record.state
        assert state is not None
        now += STEP
        to_act = game.to_act(state)
        if not to_act:
            applied, mover = game.apply_auto(state), None
        else:
            mover = to_act[0]
            moves = [m for m in game.legal_moves(state, mover) if m["type"] != "resign"]
            view = game.view(state, mover)
            choice = game.bot_move(view, mover, moves, record.version)
            applied = game.apply(state, mover, choice)
        new = played(record, game, applied, None, mover, now)
        if new.status == PLAYING:
            for seat in game.to_act(applied.state):
                how = observed(record, new, seat, now)
                assert how == expected(game_id, record, applied.state, seat, mover), (
                    f"step {new.version}: seat {seat} (mover {mover})"
                )
                seen[how, seat == mover] += 1
        record = new
    return seen


def cases(game_id: str) -> list[Any]:
    game = get_game(game_id)
    assert game is not None
    return [pytest.param(seats, options, id=f"{seats}") for seats, options in game.quick_tables]


@pytest.mark.parametrize("seats, options", cases("mantis"))
def test_mantis_every_turn_is_new_an_extra_turn_too(seats: int, options: dict[str, Any]) -> None:
    seen = play("mantis", seats, options)
    assert seen["fresh", False] > 0  # the next player's turn
    if seats == 2:  # a successful steal: another turn, with the whole limit
        assert seen["fresh", True] > 0
    assert seen["runs_on", True] == seen["resumes", True] == 0


@pytest.mark.parametrize("seats, options", cases("mandragora"))
def test_mandragora_an_extra_turn_is_a_new_turn(seats: int, options: dict[str, Any]) -> None:
    seen = play("mandragora", seats, options)
    assert seen["fresh", True] > 0 and seen["fresh", False] > 0  # extra turns, and the next
    assert seen["runs_on", True] == seen["resumes", True] == 0


@pytest.mark.parametrize("seats, options", cases("mandala"))
def test_mandala_each_action_and_each_pick_is_a_turn(seats: int, options: dict[str, Any]) -> None:
    seen = play("mandala", seats, options)
    assert seen["fresh", False] > 0  # the next action, or a pick, after a step of another's
    if seats == 2:  # a completion's first pick by the player who completed, or picks in a row
        assert seen["fresh", True] > 0
    assert seen["runs_on", True] == seen["resumes", True] == 0


@pytest.mark.parametrize("seats, options", cases("card_battle"))
def test_card_battle_each_seat_acts_once_while_the_other_s_clock_runs_on(
    seats: int, options: dict[str, Any]
) -> None:
    seen = play("card_battle", seats, options)
    # Both decks are built at once: the first one in leaves the other's clock running on.
    assert seen == Counter({("runs_on", False): 1})


@pytest.mark.parametrize("seats, options", cases("math_card"))
def test_math_card_a_turn_is_many_actions_then_end_turn(
    seats: int, options: dict[str, Any]
) -> None:
    seen = play("math_card", seats, options)
    assert seen["runs_on", True] > 0  # an action: the same turn's clock runs on
    assert seen["fresh", False] > 0  # end_turn: the other player's turn, the whole limit
    assert seen["runs_on", False] > 0  # deck building: the other deck's clock runs on
