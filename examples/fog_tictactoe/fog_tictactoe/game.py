"""Fog Tic-Tac-Toe: tic-tac-toe with one hidden mine per player.

The rules: two seats, X (seat 0) moves first, on a 3×3 board (cells 0–8, row by row). At the
start each seat is given a secret cell, its mine, which only that seat sees (the two mines are
different cells). A turn marks one empty cell. Marking the other seat's mine lights its fuse:
after ``fuse_ms`` the mine blows up (an automatic step), the cell is burnt for good (nobody may
mark it), the mine is shown to both, and the turn passes. A seat's own mine is harmless to it.
Three of one's marks in a row, column or diagonal win; a board with no empty cell left is a
draw. A seat that leaves (resigns, or runs out of time) loses.

Everything here is a pure function of plain data: the state is a dict, the RNG state is kept
under ``"rng"``, and nothing given is ever changed (``clone`` first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from playhall.games.contract import (
    Applied,
    Game,
    Move,
    Option,
    Options,
    Outcome,
    Rejected,
    State,
    View,
    clone,
    game_over_event,
)
from playhall.games.rng import Rng, RngState, seed_state

BURNT = "burnt"
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)  # fmt: skip


class FogTicTacToe(Game):
    id = "fog_tictactoe"
    title = "Fog Tic-Tac-Toe"
    min_seats = 2
    max_seats = 2
    options = (
        Option("fuse_ms", 800, "time between a mine's fuse and its blast", minimum=0,
               maximum=5000, label="fuse", unit="ms"),
    )
    # The test suites play it with the fuse unpaced.
    quick_tables = ((2, {"fuse_ms": 0}),)

    # -- step 1: the state --------------------------------------------------------------------

    def setup(self, seats: int, options: Options, seed: bytes | int) -> State:
        if seats != 2:
            raise Rejected("bad_seats", "Fog Tic-Tac-Toe is for exactly 2 seats")
        rng = Rng(seed_state(seed))
        first = rng.below(9)
        second = (first + 1 + rng.below(8)) % 9  # any other cell
        return {
            "board": [None] * 9,  # None, a seat (0 or 1), or "burnt"
            "mines": [first, second],  # hidden: seat i sees only mines[i]
            "revealed": [],  # the seats whose mine has blown up
            "turn": 0,
            "fuse": None,  # the cell whose fuse burns: an automatic step is pending
            "fuse_ms": options["fuse_ms"],
            "result": None,  # {"winners", "reason", "left"} once over
            "rng": rng.state,
        }

    # -- step 2: whose turn, which moves, applying one ----------------------------------------

    def to_act(self, state: State) -> list[int]:
        if state["result"] is not None or state["fuse"] is not None:
            return []
        return [state["turn"]]

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if seat not in self.to_act(state):
            return []
        return [{"type": "mark", "cell": c} for c, v in enumerate(state["board"]) if v is None]

    def apply(self, state: State, seat: int, move: Any) -> Applied:
        if state["result"] is not None:
            raise Rejected("game_over", "the game is over")
        if seat not in self.to_act(state):
            raise Rejected("not_your_turn", "it is not your turn")
        if not isinstance(move, dict) or move.get("type") != "mark":
            raise Rejected("bad_move", "a move is {'type': 'mark', 'cell': 0..8}")
        cell = move.get("cell")
        if type(cell) is not int or not 0 <= cell < 9:
            raise Rejected("bad_move", "a move is {'type': 'mark', 'cell': 0..8}")
        if state["board"][cell] is not None:
            raise Rejected("illegal_move", f"cell {cell} is not empty")
        new = clone(state)
        new["board"][cell] = seat
        events = [{"type": "marked", "seat": seat, "cell": cell}]
        if cell == new["mines"][1 - seat]:
            new["fuse"] = cell  # the blast is the automatic step below
            events.append({"type": "fuse", "cell": cell})
            return Applied(new, events)
        if any(all(new["board"][c] == seat for c in line) for line in LINES):
            new["result"] = {"winners": [seat], "reason": "three_in_a_row", "left": []}
        return self._next_turn(new, events)

    def _next_turn(self, new: State, events: list[dict[str, Any]]) -> Applied:
        if new["result"] is None and None not in new["board"]:
            new["result"] = {"winners": [], "reason": "board_full", "left": []}
        if new["result"] is None:
            new["turn"] = 1 - new["turn"]
        else:
            outcome = self.outcome(new)
            assert outcome is not None
            events.append(game_over_event(outcome))
        return Applied(new, events)

    # -- step 3: the automatic step -----------------------------------------------------------

    def auto_delay(self, state: State) -> float | None:
        if state["fuse"] is None or state["result"] is not None:
            return None
        return float(state["fuse_ms"]) / 1000

    def apply_auto(self, state: State) -> Applied:
        if self.auto_delay(state) is None:
            raise Rejected("illegal_move", "no fuse is burning")
        new = clone(state)
        cell = new["fuse"]
        owner = new["mines"].index(cell)
        new["board"][cell] = BURNT
        new["revealed"].append(owner)
        new["fuse"] = None
        return self._next_turn(new, [{"type": "blast", "cell": cell, "mine_of": owner}])

    # -- step 4: what each viewer sees, and how it ends ---------------------------------------

    def view(self, state: State, seat: int | None) -> View:
        view: View = {
            "board": list(state["board"]),
            "turn": state["turn"],
            "fuse": state["fuse"],
            # A mine that blew up is public; the others only to their own seat.
            "mines": {str(s): state["mines"][s] for s in state["revealed"]},
        }
        if seat is not None:
            view["my_mine"] = state["mines"][seat]
        return view

    def outcome(self, state: State) -> Outcome | None:
        result = state["result"]
        if result is None:
            return None
        winners = list(result["winners"])
        scores: list[int | float | str] = [1 if s in winners else 0 for s in range(2)]
        return Outcome(winners, scores, result["reason"], tuple(result["left"]))

    def ended(self, state: State, left: int, reason: str) -> State:
        new = clone(state)
        new["fuse"] = None
        new["result"] = {"winners": [1 - left], "reason": reason, "left": [left]}
        return new

    # -- step 5: a bot ------------------------------------------------------------------------

    def bot_move(
        self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int
    ) -> Move:
        """Win if a move wins, else block the other seat's line, else the centre, else a
        seeded random move; from the seat's view alone (it knows its own mine, not the
        other's)."""
        board = view["board"]
        offered = {m["cell"]: m for m in moves}
        for who in (seat, 1 - seat):
            for line in LINES:
                marks = [board[c] for c in line]
                empty = [c for c in line if c in offered]
                if marks.count(who) == 2 and len(empty) == 1:
                    return dict(offered[empty[0]])
        if 4 in offered:
            return dict(offered[4])
        return dict(Rng(seed).choice(list(moves)))
