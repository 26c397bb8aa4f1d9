"""A client-side bot: an example of playing over the protocol with no rules of its own.

It sits at a room, says it is ready, and whenever the view lists legal moves for it, sends one
chosen at random among those that are not templates (a template, such as a Card Battle custom
deck, needs a payload the bot knows nothing about) and not a resignation. After a game it can
ask for rematches.

Everything it knows comes from the room view kept by the client library: ``status``,
``to_act`` (it moves only when its seat is awaited), ``moves`` and ``outcome``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playhall_client.client import Client, RoomMirror, ServerError
from playhall_client.terminal import connect_with_token_file

Log = Callable[[str], None]

#: Messages per second assumed when the server's welcome states no limit.
DEFAULT_RATE = 20.0
#: Refusals that say "not now" rather than "not this move", and the pause before trying again.
TRANSIENT = frozenset({"rate_limited", "overloaded", "store_failed", "draining"})
BACKOFF = 0.5

#: How long one wait on the mirror lasts before it is simply started again (a bot may wait for
#: opponents indefinitely).
WAIT_SLICE = 3600.0


def playable(moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The moves a rule-less bot can send: every one except templates; and resigning only when
    nothing else is left (a move type any game may offer, and the one no bot should pick at
    random)."""
    sendable = [m for m in moves if not m.get("template")]
    return [m for m in sendable if m.get("type") != "resign"] or sendable


def _quiet(_: str) -> None:
    return None


def _newer_than(version: int) -> Callable[[RoomMirror], bool]:
    return lambda m: m.version > version


class RandomBot:
    """Plays random legal moves for whatever seat its client holds in a room."""

    def __init__(self, client: Client, *, seed: int | None = None, log: Log = _quiet) -> None:
        self.client = client
        self.rng = random.Random(seed)
        self.log = log
        self.moves_made = 0
        # Keep under the server's message rate (it drops what comes faster): one move per
        # interval, with a margin.
        rate = float(client.welcome.get("limits", {}).get("rate") or DEFAULT_RATE)
        self.interval = 1.1 / rate if rate > 0 else 0.0
        self._next_send = 0.0

    async def _pace(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now < self._next_send:
            await asyncio.sleep(self._next_send - now)   # rate pacing, not synchronisation
        self._next_send = max(now, self._next_send) + self.interval

    async def _wait(self, mirror: RoomMirror, predicate: Callable[[RoomMirror], bool]) -> None:
        while True:
            try:
                await mirror.wait(predicate, timeout=WAIT_SLICE)
                return
            except TimeoutError:
                continue

    async def play_game(self, mirror: RoomMirror) -> dict[str, Any]:
        """Ready up (if the room is waiting), play until the game is over; return the outcome."""
        room = mirror.room
        seat = mirror.seat
        if seat is None:
            raise RuntimeError(f"the bot holds no seat in room {room}")
        if mirror.view.get("status") == "waiting" and not mirror.view["seats"][seat]["ready"]:
            await self.client.ready(room)
            self.log(f"{room}: ready at seat {seat + 1}")
        refused: dict[int, list[dict[str, Any]]] = {}   # version -> moves refused there

        def can_act(m: RoomMirror) -> bool:
            if m.view.get("status") == "finished":
                return True
            if not m.my_turn:
                return False   # moves open off-turn (resigning) are not for a random bot
            left = [x for x in playable(m.view.get("moves") or []) if x not in
                    refused.get(m.version, [])]
            return bool(left)

        while True:
            await self._wait(mirror, can_act)
            if mirror.view.get("status") == "finished":
                outcome: dict[str, Any] = mirror.view.get("outcome") or {}
                self.log(f"{room}: game over: {outcome}")
                return outcome
            version = mirror.version
            choices = [x for x in playable(mirror.view["moves"])
                       if x not in refused.get(version, [])]
            move = self.rng.choice(choices)
            await self._pace()
            try:
                await self.client.move(room, move, version=version)
                self.moves_made += 1
            except ServerError as exc:
                if exc.code in ("stale", "not_your_turn"):
                    continue   # the view moved on under us: look again at the new one
                if exc.code in TRANSIENT:
                    self._next_send += BACKOFF   # busy or too fast: the same decision, later
                    continue
                if exc.code == "game_over":
                    await self._wait(mirror, lambda m: m.view.get("status") == "finished")
                    continue
                self.log(f"{room}: move {move} refused: {exc}")
                refused.setdefault(version, []).append(move)
                continue
            # Wait for the accepted move to reach the mirror before looking at moves again.
            await self._wait(mirror, _newer_than(version))

    async def play_games(self, mirror: RoomMirror, games: int = 1) -> list[dict[str, Any]]:
        """Play ``games`` games: this room's, then rematches in new rooms."""
        outcomes = []
        for n in range(games):
            outcomes.append(await self.play_game(mirror))
            if n + 1 < games:
                new_room = await self.client.rematch(mirror.room)
                self.log(f"{mirror.room}: rematch in {new_room}")
                mirror = await self.client.join(new_room)
        return outcomes


async def run_bot(url: str, *, room: str | None = None, code: str | None = None,
                  create: str | None = None, seats: int = 2,
                  options: dict[str, Any] | None = None, fill: bool = False,
                  games: int = 1, name: str | None = None, token_file: Path | None = None,
                  seed: int | None = None, log: Log = print) -> list[dict[str, Any]]:
    """Connect (with the token kept in ``token_file``, if given), sit (join ``room`` / ``code``,
    or ``create`` a room of ``seats``; with ``fill`` the other seats get server bots), and play
    ``games`` games. Returns their outcomes."""
    name = name or f"bot-{random.randrange(16**4):04x}"
    if token_file is not None:
        client = await connect_with_token_file(url, name, token_file, log)
    else:
        client = await Client.connect(url, name=name)
    try:
        if create is not None:
            mirror = await client.create(create, seats, options=options)
            log(f"created room {mirror.room} ({create}, {seats} seats); waiting for players")
            if fill:
                for seat, taken in enumerate(mirror.view["seats"]):
                    if seat != mirror.seat and not (taken["player"] or taken["bot"]):
                        await client.add_bot(mirror.room, seat)
        else:
            mirror = await client.join(room, code=code)
            if mirror.seat is None:
                raise RuntimeError(f"no free seat in room {mirror.room}")
            log(f"joined room {mirror.room} at seat {mirror.seat + 1}")
        bot = RandomBot(client, seed=seed, log=log)
        return await bot.play_games(mirror, games)
    finally:
        await client.close()
