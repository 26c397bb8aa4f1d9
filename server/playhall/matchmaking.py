"""Quick play (``seek``): a seat at the best open public table that fits, or a new one.

A seek names a game, its options, the seat counts the player accepts (``seats: [3, 5]``),
optionally the ratings they accept at the table (``rating: [1400, 1700]``) and ``bots_after``
(seconds). The server claims a seat in one Redis script (playhall.store.seeks) over the game's
pool of open quick-play tables with those options: of the tables that fit (seat count in the
range, a seat free, each side's rating in the other's range, bots only for a seeker who accepts
them), the one with the fewest seats left, then the oldest; so however many processes take
seeks at once, no table is promised more seats than it has and nobody holds two. The player then
joins the room and says ``ready``; the last seat taken starts the game. If nothing fits, the
player opens a table: a new public room of the largest count they accept, in which they sit,
put in the pool. A table opened with ``bots_after`` has its empty seats filled by the server's
bots and its game started that many seconds after it opened (any process's sweep does it, once).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from playhall import log
from playhall.catalog import get_game
from playhall.config import Config
from playhall.rooms import table
from playhall.rooms.handle import RoomHandle
from playhall.rooms.ids import new_room_id
from playhall.rooms.manager import RoomManager
from playhall.rooms.record import WAITING
from playhall.rooms.table import RoomError
from playhall.store.outage import is_store_error, sweep_forever
from playhall.store.redis_store import Store
from playhall.store.results import ResultsStore
from playhall.store.seeks import Claim, SeekStore
from playhall.tasks import cancel_and_wait, pause
from playhall_protocol import ProtocolError, errors
from playhall_protocol.codec import pack

logger = log.get("playhall.matchmaking")

#: Claims one seek makes at most (a table whose join fails is dropped and the next tried).
TRIES: Final = 4
#: Seconds a seeker waits for the room of a table its opener is making.
OPENING: Final = 5.0
#: The longest ``bots_after`` (seconds).
MAX_WAIT: Final = 600
#: Seconds between sweeps for tables whose wait is over; tables per sweep.
SWEEP_EVERY: Final = 0.5
SWEEP_BATCH: Final = 16

Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
Create = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Matchmaker:
    def __init__(self, store: Store, config: Config, rooms: RoomManager) -> None:
        self.store = store
        self.config = config
        self.rooms = rooms
        self.db = SeekStore(store.redis, store.pipe, store.keys)
        self.ratings = ResultsStore(store.redis, store.pipe, store.keys)
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def ttl(self) -> int:
        """Seconds a table and its seekers' keys are kept: the wait for players."""
        return max(60, int(self.config.waiting_ttl or 3600))

    async def seek(
        self, player: str, message: dict[str, Any], create: Create, ask: Ask
    ) -> dict[str, Any]:
        """Seat ``player`` as the module says; ``create`` makes a room (as ``create``) and
        ``ask`` hands a request to a room (as the player's own). Reply: as ``join``'s, with
        ``opened`` (whether the player opened the table) and ``seats``."""
        game_id, options = message["game"], message.get("options") or {}
        low, high = _pair(message, "seats")
        if low is None or high is None:
            raise ProtocolError(errors.BAD_MESSAGE, '"seats" is [fewest, most]')
        accepted = _pair(message, "rating")
        wait = message.get("bots_after")
        if wait is not None and wait > MAX_WAIT:
            raise ProtocolError(errors.BAD_MESSAGE, f'"bots_after" is at most {MAX_WAIT}')
        pool = _pool(game_id, options, low, high)
        rating = await self._rating(game_id, player)
        for _ in range(TRIES):
            now = time.time()
            bots_at = None if wait is None else int((now + wait) * 1000)
            what, claim = await self.db.claim(
                pool, player, (low, high), rating, accepted, bots_at, new_room_id(),
                int(now * 1000), self.ttl,
            )
            if what == "open":
                return await self._open(claim, player, game_id, options, high, create, ask)
            seated = await self._sit(claim, ask)
            if seated is not None:
                return {**seated, "opened": False}
            # The table is gone, full by other joins, or started: out of play; try another.
            await self.db.release(claim, player)
            if what == "seat":
                await self.db.close(claim)
        raise RoomError(errors.OVERLOADED, "no quick-play table could be had; ask again")

    async def _sit(self, claim: Claim, ask: Ask) -> dict[str, Any] | None:
        """Join ``room``, take a seat and say ready: the join's reply with ``seats``; None if
        no seat was had there (or its game is under way). A table whose room its opener is
        still making is waited for, :data:`OPENING` seconds at most."""
        room = claim.room
        deadline = time.monotonic() + OPENING
        while True:
            try:
                joined = await ask("join", {"room": room})
                break
            except RoomError as exc:
                if exc.code != errors.NO_SUCH_ROOM:
                    raise
                if time.monotonic() > deadline or not await self.db.exists(claim):
                    return None
                await pause(0.02)
        try:
            if joined["seat"] is None:
                await ask("leave", {"room": room})
                return None
            await ask("ready", {"room": room})
        except RoomError as exc:
            if exc.code in (errors.NO_SUCH_ROOM, errors.WRONG_STATUS, errors.SEAT_TAKEN):
                return None
            raise
        return {**joined, "seats": await self._if_started(claim)}

    async def _open(
        self, claim: Claim, player: str, game: str, options: dict[str, Any], seats: int,
        create: Create, ask: Ask,
    ) -> dict[str, Any]:
        """Make the room of the table the claim opened for ``player`` (seated in it)."""
        room = claim.room
        try:
            made = await create(
                {"game": game, "seats": seats, "options": options, "room_id": room}
            )
        except BaseException:
            await self.db.close(claim)
            await self.db.release(claim, player)
            raise
        await ask("ready", {"room": room})
        await self._if_started(claim)
        return {
            "room": room, "seat": made["seat"], "version": made["version"], "seats": seats,
            "opened": True,
        }

    async def _table(self, handle: RoomHandle) -> dict[str, Any]:
        """The table's status, seat count, free seats and players, from whichever process
        holds its room (``rooms.commands.table_state``)."""
        return await handle.ask("_table", None, {})

    async def _if_started(self, claim: Claim) -> int:
        """Once every seat of the table is taken its game starts; then it leaves quick play and
        its players may seek again. Returns the table's seat count."""
        handle = await self.rooms.handle(claim.room)
        table = await self._table(handle)
        status = table["status"]
        if status == WAITING and not table["free"]:
            status = (await handle.ask("_quick_start", None, {"bots": False}))["status"]
        if status != WAITING:
            await self.db.close(claim)
            for player in table["players"]:
                await self.db.drop_holder(player, claim)
        return int(table["seats"])

    async def cancel(self, player: str, ask: Ask) -> dict[str, Any]:
        """Give up the seat a seek holds at a table that has not started (``cancel_seek``)."""
        claim = await self.db.holding(player)
        if claim is None:
            return {"room": None}
        room = claim.room
        try:
            await ask("leave", {"room": room})
        except RoomError as exc:
            if exc.code != errors.NO_SUCH_ROOM:
                raise
        try:
            started = (await self._table(await self.rooms.handle(room)))["status"] != WAITING
        except RoomError as exc:
            if exc.code != errors.NO_SUCH_ROOM:
                raise
            started = False
        if started:
            await self.db.drop_holder(player, claim)
            raise RoomError(errors.WRONG_STATUS, "the table's game has started; resign instead")
        await self.db.release(claim, player)
        return {"room": room}

    async def left(self, player: str, room: str) -> None:
        """``player`` left ``room``: a seat their seek claimed there is free again."""
        claim = await self.db.holding(player)
        if claim is not None and claim.room == room:
            await self.db.release(claim, player)

    async def _rating(self, game: str, player: str) -> int | None:
        [row] = await self.ratings.ratings(game, [player])
        return None if row[0] is None else round(60 * float(row[0]))

    # -- tables whose wait is over ----------------------------------------------------------------

    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(
            sweep_forever(self.sweep, SWEEP_EVERY, self.store.outage, "quick play sweep", logger)
        )

    async def stop(self) -> None:
        await cancel_and_wait(self._sweeper)

    async def sweep(self) -> int:
        """Fill and start the tables whose wait is over; how many were due."""
        due = await self.db.due(int(time.time() * 1000), SWEEP_BATCH)
        for claim in due:
            if not await self.db.take_due(claim):
                continue  # another process has it
            try:
                await (await self.rooms.handle(claim.room)).ask("_quick_start", None, {})
            except RoomError as exc:
                if exc.code == errors.NO_SUCH_ROOM:
                    await self.db.close(claim)
                    continue
                await self.db.retry_due(claim, int(time.time() * 1000) + 1000)
                continue
            except Exception as exc:
                if is_store_error(exc):
                    await self.db.retry_due(claim, int(time.time() * 1000) + 1000)
                raise
            await self._if_started(claim)
        return len(due)



def _pair(message: dict[str, Any], name: str) -> tuple[int | None, int | None]:
    """``[low, high]`` of ``message[name]`` (absent: ``(None, None)``)."""
    value = message.get(name)
    if value is None:
        return None, None
    if len(value) != 2 or value[0] > value[1]:
        raise ProtocolError(errors.BAD_MESSAGE, f'"{name}" is [lowest, highest]')
    return int(value[0]), int(value[1])


def _pool(game_id: str, options: dict[str, Any], low: int, high: int) -> str:
    """The pool of ``game_id`` tables with these options, once they are checked (a bad game,
    option or seat count is refused as ``create`` refuses it)."""
    game = get_game(game_id)
    if game is None:
        raise RoomError(errors.NO_SUCH_GAME, f'no game {game_id!r}; see "games"')
    record = table.create(
        game_id, options, high, "-", private=False, room_id="-", secret=bytes(32), created=0.0
    )
    least, _ = game.seat_range(table.game_options(record.options))
    if low < least:
        raise RoomError(errors.BAD_SEATS, f"{game.title} takes {least} seats or more")
    digest = hashlib.sha1(pack(sorted(record.options.items()))).hexdigest()[:16]
    return f"{game_id}:{digest}"
