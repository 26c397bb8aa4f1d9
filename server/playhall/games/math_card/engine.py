"""The Math Magic Card duel engine: deck building, turn flow, actions, scoring, views.

Pure and deterministic. The state is plain data (see :func:`MathCardGame.setup`); every random
step (deck shuffles, the coin flip, reshuffles after searches) draws from the Rng whose state is
``state["rng"]``. ``apply`` clones its input, so the caller's state is never touched.

A move is checked in three steps: shape (``bad_move``, :mod:`.moves`), whose turn
(``not_your_turn``), then membership in :meth:`legal_moves` (``illegal_move`` with a reason),
so the enumeration the clients and bots see and the rules ``apply`` enforces cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from playhall.games.contract import (
    Applied,
    Game,
    Move,
    Option,
    Outcome,
    Rejected,
    State,
    View,
    clone,
)
from playhall.games.rng import Rng, RngState, seed_state

from . import board, effects
from .bot import choose
from .cards import (
    can_be_assertion,
    can_be_value,
    card,
    function_uses,
    is_function,
    is_legend,
    is_operator,
    is_rainbow,
    pool_view,
)
from .decks import MAX_DECK, MIN_DECK, READY_DECKS, validate_deck
from .functions import apply_function
from .moves import check_shape
from .scoring import lane_values, score_board

Events = list[dict[str, Any]]

PVP_TARGET = 10
HAND_SIZE = 5
LEGEND_SLOTS = 4
PUZZLE = "000021"
AREAS = ("private", "left", "right")


def _area_key(seat: int, area: str) -> str:
    return f"private{seat}" if area == "private" else area


def _canonical(move: Move) -> Move:
    """The listed form of answers that can be written several ways: a swap with its positions
    in order, a rearrange cycle rotated to start at its smallest position (a 2-cycle sorted)."""
    if move["type"] == "swap" and move["b"] < move["a"]:
        return {**move, "a": move["b"], "b": move["a"]}
    if move["type"] == "rearrange" and move["cycle"]:
        cycle = move["cycle"]
        start = cycle.index(min(cycle))
        cycle = cycle[start:] + cycle[:start]
        return {**move, "cycle": sorted(cycle) if len(cycle) == 2 else cycle}
    return move


class MathCardGame(Game):
    """Two-player Math Magic Card duel (rules: docs/games/math_card.md)."""

    id = "math_card"
    title = "Math Magic Card duel"
    min_seats = 2
    max_seats = 2
    quick_tables = ((2, {}),)
    #: Either seat may resign at any time (ruling 16), and that is all a seat may do off turn.
    moves_off_turn: list[Move] | None = [{"type": "resign"}]
    options: Sequence[Option] = ()

    # -- setup and turn flow ----------------------------------------------------------------

    def setup(self, seats: int, options: dict[str, Any], seed: bytes | int) -> State:
        if seats != 2:
            raise Rejected("bad_option", "Math Magic Card duel is for exactly 2 players")
        return {
            "phase": "deckbuild",
            "rng": seed_state(seed),
            "first": None,
            "turn": None,
            "lanes": [[None] * board.SLOTS for _ in range(board.LANES)],
            "areas": {"left": [], "right": [], "private0": [], "private1": []},
            "legends": [[], []],
            "rainbow": [[], []],
            "players": [
                {
                    "deck": [],
                    "hand": [],
                    "discard": [],
                    "pvp": 0,
                    "decklist": None,
                    "zero_turn": -1,
                    "induction_turn": -1,
                }
                for _ in range(2)
            ],
            "pending": [],
            "last": [],
            "result": None,
        }

    def _begin(self, state: State, events: Events) -> None:
        """Both decks are in: shuffle, flip for first player, deal 5 each, start turn 1."""
        rng = Rng(state["rng"])
        for seat in (0, 1):
            me = state["players"][seat]
            me["deck"] = list(me["decklist"])
            rng.shuffle(me["deck"])
        first = rng.below(2)
        state["rng"] = rng.state
        state["first"] = first
        events.append(
            {
                "type": "decks_revealed",
                "decklists": [sorted(p["decklist"]) for p in state["players"]],
            }
        )
        events.append({"type": "first_player", "seat": first})
        for seat in (first, 1 - first):
            effects.draw(state, seat, HAND_SIZE, events)
        self._start_turn(state, first, 1, events)

    def _start_turn(self, state: State, seat: int, number: int, events: Events) -> None:
        """Turn start -> standby -> draw (ruling 4, 5); leaves the turn in its action phase."""
        state["turn"] = {
            "seat": seat,
            "number": number,
            "value_actions": 0,
            "value_limit": 1,
            "operator_used": False,
            "asserted": {area: False for area in AREAS},
            "public_value": False,
            "public_operator": False,
        }
        state["phase"] = "action"
        events.append({"type": "turn_start", "seat": seat, "number": number})
        effects.turn_start(state, seat, events)
        if any(p["pvp"] >= PVP_TARGET for p in state["players"]):
            return  # the game ends at once (ruling 16): _advance scores it before any draw
        # standby phase: no card in the pool triggers here.
        count = 1 if number == 1 else 2
        effects.draw(state, seat, count, events, from_discard=True)

    def _advance(self, state: State, events: Events) -> None:
        """Run automatic steps until somebody must decide (or the game is over)."""
        while state["phase"] != "over":
            if any(p["pvp"] >= PVP_TARGET for p in state["players"]):
                self._finish(state, "pvp_target", events)
                return
            if state["phase"] == "deckbuild":
                if all(p["decklist"] is not None for p in state["players"]):
                    self._begin(state, events)
                    continue
                return
            effects.settle(state, events)
            if state["pending"] or state["phase"] == "action":
                return
            # end phase (ruling 8, 16)
            seat = state["turn"]["seat"]
            if len(state["players"][seat]["hand"]) > effects.HAND_LIMIT:
                events.append({"type": "hand_limit", "seat": seat})
                state["pending"].append({"kind": "hand_limit", "seat": seat, "source": ""})
                continue
            if board.public_full(state["lanes"]):
                self._finish(state, "public_lane_full", events)
                return
            if any(not p["deck"] for p in state["players"]):
                self._finish(state, "deck_empty", events)
                return
            self._start_turn(state, 1 - seat, state["turn"]["number"] + 1, events)

    def _finish(
        self, state: State, reason: str, events: Events, resigned: int | None = None
    ) -> None:
        first = state["first"] if state["first"] is not None else 0
        scored = score_board(state, first)
        vp = scored["vp"]
        pvp = [p["pvp"] for p in state["players"]]
        if resigned is not None:
            winners = [1 - resigned]
        elif vp[0] != vp[1]:
            winners = [0 if vp[0] > vp[1] else 1]
        elif pvp[0] != pvp[1]:
            winners = [0 if pvp[0] > pvp[1] else 1]
        else:
            winners = []
        state["phase"] = "over"
        state["pending"] = []
        state["result"] = {
            "vp": vp,
            "pvp": pvp,
            "winners": winners,
            "reason": reason,
            "public_direction": scored["public_direction"],
            "combos": scored["combos"],
        }
        events.append(
            {"type": "game_over", "winners": winners, "vp": vp, "pvp": pvp, "reason": reason}
        )

    # -- who acts and what they may do ------------------------------------------------------

    def to_act(self, state: State) -> list[int]:
        if state["phase"] == "over":
            return []
        if state["phase"] == "deckbuild":
            return [s for s in (0, 1) if state["players"][s]["decklist"] is None]
        if state["pending"]:
            return [state["pending"][0]["seat"]]
        return [state["turn"]["seat"]]

    def turn_goes_on(self, before: State, after: State, seat: int) -> bool:
        """A turn is any number of actions, then ``end_turn`` (ruling 6), with the choices it
        opens (the other seat's answers to them included) and its end phase: ``seat``'s turn
        goes on while it is the player of the same turn."""
        old, new = before["turn"], after["turn"]
        return (
            old is not None
            and new is not None
            and old["seat"] == new["seat"] == seat
            and old["number"] == new["number"]
        )

    def legal_moves(self, state: State, seat: int) -> list[Move]:
        if state["phase"] == "over" or seat not in (0, 1):
            return []
        resign: list[Move] = [{"type": "resign"}]
        if seat not in self.to_act(state):
            return resign
        if state["phase"] == "deckbuild":
            picks: list[Move] = [{"type": "pick_deck", "deck": name} for name in READY_DECKS]
            return [*picks, {"type": "submit_deck", "cards": [], "template": True}, *resign]
        if state["pending"]:
            return [*effects.answers(state, state["pending"][0]), *resign]
        return [*self._actions(state, seat), {"type": "end_turn"}, *resign]

    def _actions(self, state: State, seat: int) -> list[Move]:
        """Every action-phase move but end_turn and resign (rulings 6-11)."""
        turn = state["turn"]
        lanes = state["lanes"]
        me = state["players"][seat]
        hand = sorted(set(me["hand"]))
        value_ok = turn["value_actions"] < turn["value_limit"]
        out: list[Move] = []
        for lane in board.placeable_lanes(seat):
            public = lane == board.PUBLIC
            if (
                value_ok
                and not (public and turn["public_operator"])
                and board.value_target(lanes, lane, seat) is not None
            ):
                out += [
                    {"type": "set_value", "card": c, "lane": lane} for c in hand if can_be_value(c)
                ]
            if (
                not turn["operator_used"]
                and not (public and turn["public_value"])
                and board.operator_target(lanes, lane, seat) is not None
            ):
                out += [
                    {"type": "set_operator", "card": c, "lane": lane}
                    for c in hand
                    if is_operator(c)
                ]
            if (
                value_ok
                and not turn["operator_used"]
                and board.function_target(lanes, lane, seat) is not None
            ):
                out += [
                    {"type": "set_function", "card": c, "lane": lane}
                    for c in hand
                    if is_function(c) and "operator_value" in function_uses(c)
                ]
        if value_ok:
            for lane in board.placeable_lanes(seat):
                for slot in range(0, board.SLOTS, 2):
                    entry = lanes[lane][slot]
                    if not board.is_plain_value(entry) or entry["owner"] != seat:
                        continue
                    for target in board.move_targets(seat, lane):
                        if lanes[target][board.moved_slot(seat, lane, slot)] is None:
                            out.append({"type": "move_value", "from": [lane, slot], "lane": target})
        values = [c for c in hand if can_be_value(c)]
        for c in hand:
            if not can_be_assertion(c):
                continue
            for area in AREAS:
                if turn["asserted"][area]:
                    continue
                if c == PUZZLE:
                    out += [{"type": "assert", "card": c, "area": area, "under": v} for v in values]
                else:
                    out.append({"type": "assert", "card": c, "area": area})
        positions = board.calc_positions(state)
        for c in hand:
            if is_function(c):
                out += self._calcs(state, c, positions)
                if "effect" in function_uses(c):
                    out.append({"type": "function_effect", "card": c})
            if is_legend(c):
                if is_rainbow(c) or len(state["legends"][seat]) < LEGEND_SLOTS:
                    out.append({"type": "legend", "card": c})
                else:
                    out += [
                        {"type": "legend", "card": c, "replace": i} for i in range(LEGEND_SLOTS)
                    ]
        if "000009" in hand and len(me["hand"]) == 6:
            out.append({"type": "use", "card": "000009"})
        return out

    @staticmethod
    def _calcs(field: State, fn: str, positions: list[list[Any]]) -> list[Move]:
        """Temporary calculations with ``fn``: input -> output pairs of value cards anywhere on
        the field, lanes and assertion areas (ruling 10)."""
        out: list[Move] = []
        values = [board.calc_value(field, pos) for pos in positions]
        for pin, x in zip(positions, values, strict=True):
            assert x is not None
            y = apply_function(fn, Fraction(x))
            for pout, v in zip(positions, values, strict=True):
                if pout != pin and v == y:
                    out.append({"type": "function_calc", "card": fn, "input": pin, "output": pout})
        return out

    # -- applying moves ---------------------------------------------------------------------

    def apply(self, state: State, seat: int, move: Any) -> Applied:
        if state["phase"] == "over":
            raise Rejected("game_over", "the game is over")
        kind = check_shape(move)
        if seat not in (0, 1):
            raise Rejected("not_your_turn", f"no seat {seat!r} in this game")
        events: Events = []
        new = clone(state)
        if kind == "resign":
            events.append({"type": "resign", "seat": seat})
            self._finish(new, "resigned", events, resigned=seat)
        else:
            if seat not in self.to_act(state):
                raise Rejected("not_your_turn", "it is not your turn to act")
            if kind == "submit_deck" and state["phase"] != "deckbuild":
                raise Rejected("illegal_move", "decks are only submitted before play")
            move = _canonical(move)
            if kind == "submit_deck":
                self._submit(new, seat, validate_deck(move["cards"]), events)
            elif move not in self.legal_moves(state, seat):
                raise Rejected("illegal_move", self._why(state, seat, move))
            elif kind == "pick_deck":
                self._submit(new, seat, list(READY_DECKS[move["deck"]]), events)
            elif state["pending"]:
                effects.resolve(new, seat, move, events)
            else:
                self._act(new, seat, move, events)
            self._advance(new, events)
        new["last"] = [e for e in events if "visible_to" not in e]
        return Applied(new, events)

    def _submit(self, state: State, seat: int, deck: list[str], events: Events) -> None:
        state["players"][seat]["decklist"] = sorted(deck)
        events.append({"type": "deck_in", "seat": seat})  # the list stays secret until both

    def _why(self, state: State, seat: int, move: Move) -> str:
        """A human reason for an illegal but well-formed move (the most likely culprit)."""
        kind = move["type"]
        if state["phase"] == "deckbuild":
            return f"deck building: pick one of {', '.join(READY_DECKS)} or submit a deck"
        if state["pending"]:
            return f"answer the open {state['pending'][0]['kind']} choice first"
        if kind in ("choose", "decline", "swap", "move_assertion", "rearrange"):
            return "no choice is waiting for that answer"
        hand = state["players"][seat]["hand"]
        if "card" in move and move["card"] not in hand and kind != "choose":
            return f"card {move['card']} is not in your hand"
        turn = state["turn"]
        if kind in ("set_value", "move_value") and turn["value_actions"] >= turn["value_limit"]:
            return "you already used this turn's value action"
        if kind == "set_operator" and turn["operator_used"]:
            return "you already set an operator this turn"
        if kind == "assert" and turn["asserted"][move["area"]]:
            return f"you already placed an assertion in the {move['area']} area this turn"
        if kind in ("set_value", "set_operator", "set_function"):
            return "that card cannot go into that lane now (nearest, lane or public-lane limits)"
        return "that move is not legal now"

    def _act(self, state: State, seat: int, move: Move, events: Events) -> None:
        """Carry out a legal action-phase move."""
        kind = move["type"]
        turn = state["turn"]
        lanes = state["lanes"]
        if kind == "end_turn":
            state["phase"] = "end"
            events.append({"type": "end_turn", "seat": seat})
            return
        if kind == "move_value":
            lane, slot = move["from"]
            target = board.moved_slot(seat, lane, slot)
            lanes[move["lane"]][target] = lanes[lane][slot]
            lanes[lane][slot] = None
            turn["value_actions"] += 1
            events.append(
                {
                    "type": "move_value",
                    "seat": seat,
                    "from": move["from"],
                    "to": [move["lane"], target],
                }
            )
            return
        cid = move["card"]
        if kind == "use":
            effects.use_six(state, seat, events)
            return
        effects.take_from_hand(state, seat, cid)
        public = move.get("lane") == board.PUBLIC
        if kind == "set_value":
            slot = board.value_target(lanes, move["lane"], seat)
            assert slot is not None
            lanes[move["lane"]][slot] = {"card": cid, "owner": seat}
            turn["value_actions"] += 1
            turn["public_value"] = turn["public_value"] or public
            events.append(
                {"type": "set_value", "seat": seat, "card": cid, "at": [move["lane"], slot]}
            )
            effects.on_set_value(state, seat, cid, events)
        elif kind == "set_operator":
            slot = board.operator_target(lanes, move["lane"], seat)
            assert slot is not None
            lanes[move["lane"]][slot] = {"card": cid, "owner": seat}
            turn["operator_used"] = True
            turn["public_operator"] = turn["public_operator"] or public
            events.append(
                {"type": "set_operator", "seat": seat, "card": cid, "at": [move["lane"], slot]}
            )
            effects.on_set_operator(state, seat, cid, events)
        elif kind == "set_function":
            slot = board.function_target(lanes, move["lane"], seat)
            assert slot is not None
            lanes[move["lane"]][slot] = {"card": cid, "owner": seat}
            lanes[move["lane"]][slot + 1] = {"card": cid, "owner": seat, "part": "value"}
            turn["value_actions"] += 1
            turn["operator_used"] = True
            events.append(
                {"type": "set_function", "seat": seat, "card": cid, "at": [move["lane"], slot]}
            )
        elif kind == "assert":
            self._assert(state, seat, move, events)
        elif kind == "function_calc":
            self._calc(state, seat, move, events)
        elif kind == "function_effect":
            events.append({"type": "function_effect", "seat": seat, "card": cid})
            effects.discard(state, seat, cid, events)
            effects.function_effect(state, seat, cid, events)
        elif kind == "legend":
            self._legend(state, seat, move, events)

    def _assert(self, state: State, seat: int, move: Move, events: Events) -> None:
        cid = move["card"]
        entry: dict[str, Any] = {"card": cid, "owner": seat}
        if cid == PUZZLE:
            effects.take_from_hand(state, seat, move["under"])
            entry["under"] = move["under"]
            events.append(
                {"type": "puzzle_card", "seat": seat, "under": move["under"], "visible_to": [seat]}
            )
        state["areas"][_area_key(seat, move["area"])].append(entry)
        state["turn"]["asserted"][move["area"]] = True
        events.append({"type": "assert", "seat": seat, "card": cid, "area": move["area"]})
        effects.on_assert(state, seat, cid, events)

    def _calc(self, state: State, seat: int, move: Move, events: Events) -> None:
        """Temporary calculation: function card, then input, then output to the discard piles."""
        cid = move["card"]
        taken = board.take_calc_cards(state, [move["input"], move["output"]])
        events.append(
            {
                "type": "function_calc",
                "seat": seat,
                "card": cid,
                "input": move["input"],
                "output": move["output"],
                "cards": [e["card"] for e in taken],
            }
        )
        effects.discard(state, seat, cid, events)
        for entry in taken:
            effects.discard(state, entry["owner"], entry["card"], events)
        effects.gain_pvp(state, seat, card(cid)["pvp"], events)

    def _legend(self, state: State, seat: int, move: Move, events: Events) -> None:
        cid = move["card"]
        if is_rainbow(cid):
            state["rainbow"][seat].append(cid)
        else:
            slots = state["legends"][seat]
            if "replace" in move:
                effects.discard(state, seat, slots.pop(move["replace"]), events)
            slots.append(cid)
        events.append({"type": "legend", "seat": seat, "card": cid})

    # -- what each viewer sees --------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> View:
        over = state["phase"] == "over"
        revealed = all(p["decklist"] is not None for p in state["players"])
        areas = {}
        for name, entries in state["areas"].items():
            shown = []
            for e in entries:
                out = {"card": e["card"], "owner": e["owner"]}
                if "under" in e:
                    visible = over or e["owner"] == seat
                    out["under"] = e["under"] if visible else None
                    out["hidden"] = not visible
                shown.append(out)
            areas[name] = shown
        players = []
        for s, p in enumerate(state["players"]):
            players.append(
                {
                    "hand": list(p["hand"]) if s == seat else None,
                    "hand_size": len(p["hand"]),
                    "deck_size": len(p["deck"]),
                    "discard": list(p["discard"]),
                    "pvp": p["pvp"],
                    "decklist": list(p["decklist"])
                    if p["decklist"] is not None and (revealed or s == seat)
                    else None,
                    "deck_in": p["decklist"] is not None,
                }
            )
        pending = None
        if state["pending"]:
            choice = state["pending"][0]
            pending = {"kind": choice["kind"], "seat": choice["seat"], "source": choice["source"]}
            if choice["seat"] == seat:
                pending["options"] = effects.answers(state, choice)
        estimate = None
        if state["phase"] in ("action", "end"):
            seen = score_board({"lanes": state["lanes"], "areas": areas}, state["first"])
            estimate = {"vp": seen["vp"], "public_direction": seen["public_direction"]}
        return {
            "phase": state["phase"],
            "estimate": estimate,
            "to_act": self.to_act(state),
            "first": state["first"],
            "turn": clone(state["turn"]),
            "lanes": clone(state["lanes"]),
            "lane_values": lane_values(state["lanes"]),
            "areas": areas,
            "legends": clone(state["legends"]),
            "rainbow": clone(state["rainbow"]),
            "players": players,
            "pending": pending,
            "ready_decks": {k: list(v) for k, v in READY_DECKS.items()},
            "deck_rules": {"min": MIN_DECK, "max": MAX_DECK},
            "pool": pool_view(),
            "last": clone(state["last"]),
            "result": clone(state["result"]),
        }

    def outcome(self, state: State) -> Outcome | None:
        result = state["result"]
        if result is None:
            return None
        return Outcome(
            winners=list(result["winners"]),
            scores=list(result["vp"]),
            reason=result["reason"],
            left=tuple(result.get("left", ())),
        )

    def ended(self, state: State, left: int, reason: str) -> State:
        """A player leaves the room's way (the ``resign`` request, or a forfeit on time): the
        game ends as the ``resign`` move ends it, with the room's reason."""
        new = clone(state)
        self._finish(new, reason, [], resigned=left)
        new["result"]["left"] = [left]
        return new

    # -- bot --------------------------------------------------------------------------------

    def bot_move(self, view: View, seat: int, moves: Sequence[Move], seed: RngState | int) -> Move:
        return choose(view, seat, moves, seed)
