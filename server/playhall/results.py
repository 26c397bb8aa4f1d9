"""What a finished game leaves behind: an entry in each person's history, their win, loss and
draw counts and, for a rated game, their new ratings (playhall.ratings); and the requests that
read them back (``games_played``, ``profile``, ``leaderboard``).

Written once per game, whatever fails: before the commit that ends a game the room notes it as
due (with what its finished record will not say: the seats a stand-in was playing); after the
commit it writes the results, in steps each safe to repeat, the first of which decides the game
once (playhall.store.results); a rated game's write that finds a player's rating moved or held by
another game's write reads the ratings again. A process killed in between leaves the note, and
every process sweeps the notes older than ``results_delay`` every few seconds: the next one
writes the game (still once). A note whose room did not end after all (the commit was refused)
is dropped once it is a minute old.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any, Final

from playhall import log, ratings
from playhall.config import Config
from playhall.rooms.record import FINISHED, RoomRecord
from playhall.store.outage import is_store_error, sweep_forever
from playhall.store.redis_store import Store
from playhall.store.results import RatingMoved, ResultsStore
from playhall.tasks import Tasks, cancel_and_wait, pause
from playhall_protocol import ProtocolError, errors
from playhall_protocol.codec import pack

logger = log.get("playhall.results")

#: Seconds between sweeps of the games left unwritten; notes swept per pass.
SWEEP_EVERY: Final = 2.0
SWEEP_BATCH: Final = 32
#: A note this old whose room has not ended is dropped: its ending was not stored.
STALE_NOTE_MS: Final = 60_000
#: Tries of the write when ratings move under it (other games of the same players).
WRITE_TRIES: Final = 8
#: Games per page of ``games_played`` and places per page of ``leaderboard``, at most; and
#: recent games in a ``profile``.
PAGE_MAX: Final = 50
PROFILE_RECENT: Final = 10


class RatingsBusy(Exception):
    """A game's results could not be written: its players' ratings kept moving (other games of
    theirs being written, or a hold a process that died left, which lapses): the results sweep
    writes them later. Not a bug: logged ``results_deferred``, without a traceback."""


class Results:
    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.config = config
        self.db = ResultsStore(store.redis, store.pipe, store.keys)
        self._tasks = Tasks("results", logger)
        self._sweeper: asyncio.Task[None] | None = None

    # -- a game ends -----------------------------------------------------------------------------

    async def expect(self, old: RoomRecord, new: RoomRecord) -> None:
        """``new`` ends ``old``'s game and is about to be stored: note it as due. Raises if
        Redis does not take the note (then the ending is not stored either)."""
        stood_in = [i for i, seat in enumerate(old.seats) if seat.stand_in is not None]
        await self.db.expect(new.id, _ms(time.time()), {"stood_in": stood_in})

    def ended(self, new: RoomRecord) -> None:
        """``new``, which ended its game, is stored: write the results (in the background;
        the sweep writes them if this fails)."""
        self._tasks.spawn(self._write_later(new))

    async def _write_later(self, record: RoomRecord) -> None:
        room = record.id
        if self.config.results_delay:
            await pause(self.config.results_delay)
        try:
            await self.settle_due(room, record)
        except RatingsBusy as exc:  # (the sweep writes them)
            logger.warning("results_deferred", room=room, reason=str(exc))
        except Exception as exc:
            if is_store_error(exc):
                self.store.outage.failed(exc, room=room, during="results")
            else:
                logger.exception("results_failed", room=room)

    async def settle_due(self, room: str, ended: RoomRecord | None = None) -> None:
        """Write the noted game of ``room`` if its room has ended; forget a stale note.
        ``ended``: the finished record this process just stored (else it is read)."""
        noted = await self.db.note(room)
        if noted is not None:
            await self._settle(room, *noted, ended)

    async def _settle(
        self, room: str, at: int, note: dict[str, Any], ended: RoomRecord | None = None
    ) -> None:
        record = ended if ended is not None else await self._stored(room)
        if record is None or record.status != FINISHED:
            if _ms(time.time()) - at > STALE_NOTE_MS:
                await self.db.forget(room)
            return
        await self.write(record, at, frozenset(note.get("stood_in") or ()))

    async def _stored(self, room: str) -> RoomRecord | None:
        """``room``'s stored record if it is stored whole (None: gone, or not whole)."""
        stored = await self.store.rooms.load(room)
        # (A room stored as log entries since its checkpoint has not ended: the step that ends
        # a game, and every change after it, store the record whole.)
        whole = stored is not None and stored.checkpoint == stored.version
        return RoomRecord.unpack(stored.record) if stored is not None and whole else None

    async def write(self, record: RoomRecord, at: int, stood_in: frozenset[int]) -> bool:
        """Write ``record``'s finished game once; False if it was written before."""
        seats = [s.as_dict() for s in record.seats]
        rated = ratings.rated_players(record.rated, seats, record.outcome)
        people = [i for i, s in enumerate(record.seats) if s.player and not s.bot]
        players = [record.seats[i].player or "" for i in people]
        for attempt in range(WRITE_TRIES):
            before = [_rating(row) for row in await self.db.ratings(record.game, players)]
            after = before
            if rated:
                assert record.outcome is not None
                place = ratings.places(record.outcome, len(record.seats), stood_in)
                after = ratings.update(before, place, at / 1000, self.config.rating_sigma_per_day)
            blob = pack(_summary(record, at, stood_in, rated, before, after))
            rows = [
                (
                    players[k],
                    ratings.result_of(record.outcome, seat, len(record.seats)),
                    before[k].games,
                    after[k].mu,
                    after[k].sigma,
                    after[k].at,
                    not ratings.provisional(
                        after[k], after[k].at, 0.0, self.config.rating_provisional_sigma
                    ),
                )
                for k, seat in enumerate(people)
            ]
            try:
                return await self.db.write(
                    record.id, blob, self.config.history_ttl, at, record.game, rated, rows
                )
            except RatingMoved:  # (another game of a player's is being written: its turn)
                await pause(0.005 * 2**attempt)
        raise RatingsBusy(f"the ratings of room {record.id} kept moving; left to the sweep")

    # -- the sweep -------------------------------------------------------------------------------

    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(
            sweep_forever(self.sweep, SWEEP_EVERY, self.store.outage, "results sweep", logger)
        )

    async def stop(self) -> None:
        await cancel_and_wait(self._sweeper)
        self._tasks.cancel()
        await self._tasks.wait()

    async def sweep(self) -> int:
        """Write the games noted more than ``results_delay`` ago; how many notes were seen."""
        cutoff = _ms(time.time() - self.config.results_delay) - 1000
        due = await self.db.due(cutoff, SWEEP_BATCH)
        for room, at, note in due:
            try:
                await self._settle(room, at, note)
            except RatingsBusy as exc:  # (its next pass tries again)
                logger.warning("results_deferred", room=room, reason=str(exc))
            except Exception as exc:
                if is_store_error(exc):
                    raise
                logger.exception("results_failed", room=room)
        return len(due)


    # -- the requests ----------------------------------------------------------------------------

    async def games_played(
        self, player: str, after: str | None, limit: int | None, *, own: bool = True
    ) -> dict[str, Any]:
        """A page of ``player``'s history, newest first (``games_played``); games of private
        rooms only for the player themselves (``own``). A page may hold fewer games than
        asked (expired, or private ones left out) and still have a ``next``."""
        count = _limit(limit)
        before = _cursor(after) if after else None
        rows = await self.db.history(player, before, count)
        records = await self.db.games([room for room, _ in rows])
        games = [g for g in records if g is not None and (own or not g.get("private"))]
        reply: dict[str, Any] = {"games": games}
        if len(rows) == count:
            room, at = rows[-1]
            reply["next"] = f"{at}:{room}"
        return reply

    async def profile(self, player: str, *, own: bool = True) -> dict[str, Any]:
        """A player's name, ratings and counts per game, and recent games (``profile``)."""
        stored = await self.store.players.player(player)
        if stored is None:
            raise ProtocolError(errors.NO_SUCH_PLAYER, "no player has that id")
        stats = await self.db.stats(player)
        now = time.time()
        games: dict[str, dict[str, Any]] = {}
        for key, value in stats.items():
            game, _, field = key.rpartition(":")
            games.setdefault(game, {"w": 0, "l": 0, "d": 0})
            if field in ("w", "l", "d"):
                games[game][field] = int(value)
        for game, entry in games.items():
            row = [stats.get(f"{game}:{f}") for f in ("mu", "sigma", "at", "n")]
            if row[0] is not None:
                entry["rating"] = self._shown(_rating(row), now)
        recent = await self.games_played(player, None, PROFILE_RECENT, own=own)
        return {
            "player": player, "name": stored.name, "games": games, "recent": recent["games"],
        }

    async def leaderboard(self, game: str, after: str | None, limit: int | None) -> dict[str, Any]:
        """A page of ``game``'s leaderboard, best first, provisional ratings left out."""
        count = _limit(limit)
        start = _offset(after) if after else 0
        players = await self.db.leaders(game, start, count)
        rows = await self.db.ratings(game, players)
        names = await asyncio.gather(*(self.store.players.player(p) for p in players))
        now = time.time()
        entries, gone = [], []
        for player, row, stored in zip(players, rows, names, strict=True):
            if row[0] is None or stored is None:
                gone.append(player)
                continue
            shown = self._shown(_rating(row), now)
            if not shown["provisional"]:
                entries.append({"player": player, "name": stored.name, **shown})
        await self.db.unlist(game, gone)
        reply: dict[str, Any] = {"game": game, "players": entries}
        if len(players) == count:
            reply["next"] = str(start + count)
        return reply

    def _shown(self, rating: ratings.Rating, now: float) -> dict[str, Any]:
        per_day = self.config.rating_sigma_per_day
        return {
            "rating": rating.shown(),
            "mu": round(rating.mu, 3),
            "sigma": round(rating.live_sigma(now, per_day), 3),
            "games": rating.games,
            "provisional": ratings.provisional(
                rating, now, per_day, self.config.rating_provisional_sigma
            ),
        }


async def results_request(
    results: Results, me: str, kind: str, message: dict[str, Any]
) -> dict[str, Any]:
    """The reply to a ``games_played``, ``profile`` or ``leaderboard`` request of ``me``."""
    if kind == "leaderboard":
        game, after, limit = message["game"], message.get("after"), message.get("limit")
        return await results.leaderboard(game, after, limit)
    player = message.get("player") or me
    if kind == "profile":
        return await results.profile(player, own=player == me)
    return await results.games_played(
        player, message.get("after"), message.get("limit"), own=player == me
    )


_RESULTS: weakref.WeakKeyDictionary[Store, Results] = weakref.WeakKeyDictionary()


def results_of(store: Store, config: Config) -> Results:
    """The process's :class:`Results` for ``store`` (one per store: the rooms and the endpoint
    share it, and so its sweep)."""
    found = _RESULTS.get(store)
    if found is None:
        found = _RESULTS[store] = Results(store, config)
    return found


def _summary(
    record: RoomRecord, at: int, stood_in: frozenset[int], rated: bool,
    before: list[ratings.Rating], after: list[ratings.Rating],
) -> dict[str, Any]:
    """The game as its players' histories keep it."""
    people = iter(zip(before, after, strict=True))
    seats = []
    for index, seat in enumerate(record.seats):
        entry: dict[str, Any] = {"player": seat.player, "name": seat.name, "bot": seat.bot}
        if index in stood_in:
            entry["stand_in"] = True
        if seat.player and not seat.bot:
            old, new = next(people)
            if rated:
                entry["rating"] = [old.shown(), new.shown()]
        seats.append(entry)
    return {
        "room": record.id, "game": record.game, "at": at / 1000, "seats": seats,
        "outcome": record.outcome, "rated": rated, "private": record.private,
    }


def _rating(row: list[Any]) -> ratings.Rating:
    if row[0] is None:
        return ratings.Rating()
    return ratings.Rating(float(row[0]), float(row[1]), float(row[2] or 0), int(row[3] or 0))


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _limit(limit: int | None) -> int:
    return PAGE_MAX if limit is None else max(1, min(PAGE_MAX, limit))


def _cursor(after: str) -> tuple[int, str]:
    at, colon, room = after.partition(":")
    if not colon or not at.isdigit() or not room:
        raise ProtocolError(errors.BAD_MESSAGE, '"after" is not a cursor this request gave')
    return int(at), room


def _offset(after: str) -> int:
    if not after.isdigit() or int(after) > 100_000:
        raise ProtocolError(errors.BAD_MESSAGE, '"after" is not a cursor this request gave')
    return int(after)

