"""The room actor: one asyncio task per live room, the only code that changes that room.

Everything that changes a room (join, leave, ready, start, bot, move, automatic step, rematch)
is a :class:`Command` in the room's bounded inbox, handled one at a time by its handler
(:mod:`playhall.rooms.commands`), which asks the table's rules (:mod:`playhall.rooms.table`) for
the new record. The actor stores it in Redis (record, version, log entry: atomically, fenced
by the room's lease; its lobby listing and other index entries around it), and only then
replies and hands it to the audience (:mod:`playhall.rooms.audience`), which sends it to the
viewers. A crash at any instant therefore loses nothing a client was told about.

The commit protocol is all here, in one place: :meth:`Room.commit` stores a change and adopts
it; a change whose reply from Redis was lost is settled (:meth:`Room._settle`) before anything
else is answered; a status change resets the room's expiry date. The handlers meet the room
through the contract :class:`playhall.rooms.commands.Room`, and this module is the only one
that imports them: nothing imports back. (Folded here rather than split into a committer
object: the protocol works on the actor's own state, the record, lease, checkpoint and
listing, so a committer would need them handed over on every move, and a move would pay a
call and a coroutine more for it.)

Two ways in: :meth:`Room.submit` from outside (a full inbox refuses with ``overloaded``, which
the client may retry; :meth:`Room.ask` is submit and wait for the answer), and ``_post`` for the
room's own timers and bots, which a full inbox delays a little instead of dropping. A step the
room makes by itself that meets a store failure is posted again after a backoff, and a change
whose reply was lost is settled from a timer (``_retry_later``): nobody else would ask for
either.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from playhall import log
from playhall.config import Config
from playhall.counters import Counters
from playhall.games.contract import Event, Game
from playhall.lobby import Lobby
from playhall.results import results_of
from playhall.rooms import table
from playhall.rooms.audience import Audience, Viewer
from playhall.rooms.commands import HANDLERS, hide_from_outsiders
from playhall.rooms.handle import Claimed, EarlyMail, Replies, ReplyTo
from playhall.rooms.inbox import Command, Inbox
from playhall.rooms.listing import Listing
from playhall.rooms.record import FINISHED, PLAYING, RoomRecord
from playhall.rooms.replay import STEPS, step_entry
from playhall.rooms.table import RoomError
from playhall.store.outage import is_store_error, outcome_unknown
from playhall.store.redis_store import Store
from playhall.store.rooms import Commit, Fenced, Placed, VersionConflict
from playhall_protocol import errors

logger = log.get("playhall.room")


class Room:
    def __init__(
        self,
        record: RoomRecord,
        game: Game,
        *,
        store: Store,
        config: Config,
        lobby: Lobby,
        lease: str,
        replies: Replies,
        create_room: Callable[[RoomRecord, str, str], Awaitable[None]],
        on_idle: Callable[[Room], None],
        checkpoint: int | None = None,
        counters: Counters | None = None,
        early: EarlyMail | None = None,
    ) -> None:
        self.record = record
        #: The process's counts (playhall.counters), shared by its rooms.
        self.counters = counters if counters is not None else Counters()
        #: The version of the record as last stored whole (see _commit); ``record``'s own
        #: unless the room was loaded from an older checkpoint and its log.
        self._checkpoint = record.version if checkpoint is None else checkpoint
        self.game = game
        self.store = store
        self.config = config
        self.lobby = lobby
        self.lease = lease
        #: Where the answers to requests go (``rooms.handle``).
        self.replies = replies
        self.create_room = create_room
        self._on_idle = on_idle
        self.inbox: Inbox[Command] = Inbox(config.room_inbox)
        self.audience = Audience(record.id, game, config)
        #: Where the frames of other processes' viewers go with the commit (see ``commit``).
        self._early = early
        if early is not None:
            self.audience.early_kinds = early.kinds
        #: What the commit in flight publishes, until it is known stored or not; and the
        #: command whose answer it carries, with that answer's address (see ``commit``).
        self._claimed: Claimed | None = None
        self._answered: tuple[Command, ReplyTo] | None = None
        self.listing = Listing(game.title, store, lobby)
        self._timer: asyncio.TimerHandle | None = None
        #: The timer of the next clock to run out, or of a seat's player away too long.
        self._clock_timer: asyncio.TimerHandle | None = None
        #: When this process last saw the room change or its last viewer leave (0: neither):
        #: the room has been left alone since (see ``expiry_ttl``).
        self.active_at = 0.0
        #: Set once the room was closed for good (deleted from Redis).
        self.discarded = False
        self._idle: asyncio.TimerHandle | None = None
        #: The timer that posts again the room's own steps that met a store failure, and those
        #: steps (kind -> args; ``_settle`` while a change's outcome is unknown).
        self._retry_timer: asyncio.TimerHandle | None = None
        self._to_retry: dict[str, dict[str, Any]] = {}
        #: Rounds of retries since the room's own steps last went through (the backoff's).
        self._retries = 0
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        #: A change whose commit reply was lost, not yet known to be stored or not, and what
        #: adopts it if it was (see :meth:`_settle`).
        self.unsettled: tuple[RoomRecord, Callable[[], None]] | None = None
        self.log = logger.bind(room=record.id, game=record.game)
        self._debug = log.debug_enabled()

    # -- lifecycle and the inbox ---------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"room:{self.record.id}")
        self.schedule()

    async def stop(self) -> None:
        """Finish the command in hand, refuse the rest, and stop."""
        self._closed = True
        self._cancel_timers()
        if self._task is not None:
            self.inbox.put(Command("_stop", None, {}), force=True)
            await self._task
        for command in self.inbox.take_all():
            refusal = RoomError(errors.DRAINING, "the room is closing")
            command.finish(self.replies, self.record.id, None, refusal)

    @property
    def id(self) -> str:
        return self.record.id

    def submit(
        self, kind: str, session: Viewer | None, args: dict[str, Any],
        reply_to: ReplyTo | None = None,
    ) -> None:
        """Queue a command whose answer goes to ``reply_to`` (``rooms.handle``); raises
        :class:`RoomError` at once when the room cannot take it (closing, or its inbox is
        full)."""
        request = None if reply_to is None else reply_to.request
        self._queue(Command(kind, session, args, request, reply_to))

    async def ask(
        self, kind: str, session: Viewer | None, args: dict[str, Any], request: int | None = None
    ) -> dict[str, Any]:
        """Queue a command and wait for the answer; raises :class:`RoomError` when refused."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._queue(Command(kind, session, args, request, None, future))
        return await future

    def _queue(self, command: Command) -> None:
        if self._closed:
            raise RoomError(errors.DRAINING, "the room is closing; reconnect to resume")
        if not self.inbox.put(command):
            raise RoomError(errors.OVERLOADED, "the room is busy; retry shortly")

    def _post(self, kind: str, args: dict[str, Any] | None = None) -> None:
        """Queue an internal command; a full inbox is retried shortly, never dropped."""
        if self._closed:
            return
        if not self.inbox.put(Command(kind, None, args or {})):
            asyncio.get_running_loop().call_later(0.05, self._post, kind, args)

    async def _run(self) -> None:
        while True:
            command = await self.inbox.get()
            if command.kind == "_stop":
                return
            await self._handle(command)
            # (Not kept while the room waits for the next: it holds the connection that sent it.)
            del command

    async def _handle(self, command: Command) -> None:
        handler = HANDLERS[command.kind]
        try:
            if self.unsettled is not None:
                await self._settle()
            if self.record.private:
                hide_from_outsiders(self, command)
            result = await handler(self, command)
        except RoomError as refusal:  # (named apart: docs/operations.md, "The compiled build")
            command.finish(self.replies, self.record.id, None, refusal)
            if refusal.code == errors.STORE_FAILED:
                self._retry_later(command)
            return
        except Fenced:
            self.log.warning("room_fenced", command=command.kind)
            self._let_go(command, "this server no longer owns the room; reconnect")
            return
        except VersionConflict as conflict:
            # Redis holds another version than this process does: never serve that room
            # from memory again; it is loaded afresh (viewers get a snapshot).
            self.log.warning("room_out_of_date", command=command.kind, stored=str(conflict))
            self._let_go(command, "the room changed under this server; sync and retry")
            return
        except Exception as exc:
            self._failed(command, exc)
            return
        command.finish(self.replies, self.record.id, result)
        if command.kind in _SELF_DRIVEN and self.unsettled is None:
            self._retries = 0
        if command.kind in _COMINGS_AND_GOINGS:
            self.arm_clock()
            if not self.audience.viewers:
                self.active_at = time.time()
        self._check_idle()

    def _failed(self, command: Command, exc: Exception) -> None:
        """A command that raised: Redis failing (``store_failed``, counted in the outage
        log, tried again if the room posted it itself) or a bug (``internal``, logged with
        its traceback). Either way the change was not made."""
        if is_store_error(exc):
            self.store.outage.failed(exc, room=self.record.id, command=command.kind)
            refusal = RoomError(errors.STORE_FAILED, "the change was not made")
            command.finish(self.replies, self.record.id, None, refusal)
            self._retry_later(command)
            return
        player = getattr(command.session, "player", None)
        self.log.exception(
            "room_command_failed", command=command.kind, player=player, req=command.request
        )
        refusal = RoomError(errors.INTERNAL, "the change was not made")
        command.finish(self.replies, self.record.id, None, refusal)

    def _let_go(self, command: Command, reason: str) -> None:
        """Refuse ``command`` and close the room: this process may no longer serve it from
        memory. The manager loads it again from Redis if anyone watches or it has work."""
        command.finish(self.replies, self.record.id, None, RoomError(errors.STORE_FAILED, reason))
        self._closed = True
        self._on_idle(self)

    def _retry_later(self, command: Command) -> None:
        """``command`` met a store failure. If the room posted it itself (a clock or an away
        player's stand-in, expiry, an automatic step, a bot's turn), it is posted again after a
        backoff; so is a settling of the room while a change's outcome is unknown (whoever's
        command it was). Nobody else would ask for either, and the room would stand still.

        The backoff doubles from an eighth of its cap to the cap (a second, less with a short
        lease), and starts again once one of the room's own steps goes through; the failures
        themselves are counted in the store's outage log (``Outage``), not logged one by one."""
        if command.session is None and command.kind in _SELF_DRIVEN:
            self._to_retry[command.kind] = command.args
        if self.unsettled is not None:
            self._to_retry.setdefault("_settle", {})
        if not self._to_retry or self._retry_timer is not None or self._closed:
            return
        cap = min(1.0, self.config.lease_ms / 10_000)
        delay = cap / 8 * (1 << min(self._retries, 3))  # (typed int; 2 ** n is Any)
        self._retries += 1
        self._retry_timer = asyncio.get_running_loop().call_later(delay, self._retry)

    def _retry(self) -> None:
        self._retry_timer = None
        pending, self._to_retry = self._to_retry, {}
        for kind, args in pending.items():
            self._post(kind, args)

    # -- storing a change ----------------------------------------------------------------------

    async def commit(
        self, new: RoomRecord, kind: str, seat: int | None = None, player: str | None = None,
        move: Any = None, events: list[Event] | None = None, mid: Any = None,
        answer: tuple[Command, dict[str, Any]] | None = None,
    ) -> None:
        """Store ``new`` (whose version is the current one + 1), then adopt and broadcast it.
        Every change of the room is made here, by the command handlers (``rooms.commands``).
        ``answer``: the command being handled and what it answers once this change is stored
        (then a forwarded request's answer can go with the commit, see below; a handler
        passes it when its answer is known before the commit).

        A game step (``kind`` in ``STEPS``) that leaves the status and the seats as they were
        is stored as its log entry only, unless ``checkpoint_every`` steps have passed since
        the record was last stored whole: loading the room replays the steps since (see
        ``replay``)."""
        old = self.record
        seats_changed = new.seats is not old.seats
        summary = self.listing.after(old, new)
        lobby, unlist, order = self.listing.commit_fields(summary)
        checkpoint = (
            kind not in STEPS
            or seats_changed  # a player's move that took their seat back from a stand-in
            or new.status != old.status
            or new.version - self._checkpoint >= self.config.checkpoint_every
        )
        due, undue = None, False
        if new.status != old.status:  # a whole ttl from now (never, once finished)
            ttl = table.expiry_ttl(new, self.config.waiting_ttl, self.config.abandoned_ttl)
            due, undue = (None, True) if ttl is None else (time.time() + ttl, False)
        change = Commit(
            room=new.id,
            lease=self.lease,
            prev_version=old.version,
            version=new.version,
            record=new.pack() if checkpoint else b"",
            log=step_entry(new, kind, seat, player, move, mid, events),
            lobby=lobby,
            unlist=unlist,
            active=table.needs_server(new, self.game),
            was_active=table.needs_server(old, self.game),
            expire=self.config.finished_ttl if new.status == FINISHED else 0,
            code=new.code,
            game=new.game,
            order=order,
            due=due,
            undue=undue,
        )
        # (A room closed while it waited for its game ends no game: it leaves no results.)
        ends = new.status == FINISHED and old.status == PLAYING
        if ends:  # noted first: a process that dies after the commit leaves it to the next
            await results_of(self.store, self.config).expect(old, new)
        # Viewers on other processes get their frames from Redis as it stores the change: the
        # commit publishes them (on one Redis), a hop sooner than this process could once it
        # has read the commit's answer. Everyone else's wait in ``held`` for that answer.
        held: list[tuple[Viewer, bytes]] | None = None
        early = self._early
        if early is not None and self.audience.has_early():
            held = []
            self.audience.broadcast(new, events or [], held)
            # (Not when the change moves the room's presence: on one process that goes out
            # before the answer, once the change is stored; so the answer waits for it here.)
            if answer is not None and not (
                _moves_presence(old, new) and self.audience.presence_moves(new)
            ):
                command, reply = answer
                to = command.reply_to
                if to is not None and to.edge is not None:  # a forwarded request's
                    early.answer(to, reply)  # after its frames, as on one process
                    command.reply_to = None  # answered: the handler's return answers nothing
                    self._answered = (command, to)
            self._claimed = early.claim()
            change.publish = self._claimed[0]
        reply_lost = False
        started = _commit_clock()
        try:
            await self.store.rooms.commit(change)
        except Exception as exc:
            if not outcome_unknown(exc):
                self._not_stored()
                raise
            reply_lost = True
        # (Settled after the except block: docs/operations.md, "The compiled build".)
        if reply_lost:
            self.unsettled = (
                new,
                lambda: self._adopt(new, kind, seat, player, events, checkpoint, summary, held),
            )
            try:
                await self._settle()
            except RoomError:  # the outcome still unknown: the asker is told so too
                self._answer_back()
                raise
            if self.record is not new:
                raise RoomError(errors.STORE_FAILED, "the change was not made")
            if change.indexed():
                self.store.rooms.write_indexes(change)
        else:
            self.counters.committed(kind, _commit_clock() - started)
            self._adopt(new, kind, seat, player, events, checkpoint, summary, held)
        if new.status != old.status:
            self.counters.game_changed(new.game, new.status)
        if ends:
            results_of(self.store, self.config).ended(new)

    def _not_stored(self) -> None:
        """The change whose commit was to publish :attr:`_claimed` is not stored: what was
        made for it is forgotten (viewers get a snapshot of the next version), and the edges
        it was for hear of the gap."""
        self._answer_back()
        claimed, self._claimed = self._claimed, None
        if claimed is not None and self._early is not None:
            self.audience.forget()
            self._early.lost(claimed)

    def _answer_back(self) -> None:
        """Give the command whose answer the commit in flight carries its address back, so
        that its refusal goes out as any other (should the commit have stored the change
        after all, its edge keeps the first answer to the request and drops the later)."""
        answered, self._answered = self._answered, None
        if answered is not None:
            answered[0].reply_to = answered[1]

    def _adopt(
        self, new: RoomRecord, kind: str, seat: int | None, player: str | None,
        events: list[Event] | None, checkpoint: bool, summary: dict[str, Any] | None,
        held: list[tuple[Viewer, bytes]] | None = None,
    ) -> None:
        """Make ``new``, stored, the room's record, and tell everyone (``held``: the frames
        of those its commit did not publish, made before it; see ``commit``)."""
        self._claimed = self._answered = None
        # Presence says when a stand-in would take an absent player's seat, which depends on
        # the seats and on whether the game is being played.
        presence_changed = _moves_presence(self.record, new)
        self.record = new
        if not self.audience.viewers:  # with viewers, the room is not alone: their leaving is
            self.active_at = time.time()  # when it starts to be (see _run)
        if checkpoint:
            self._checkpoint = new.version
        self.listing.adopt(new, summary)
        if self._debug:
            self.log.debug("committed", kind=kind, seat=seat, player=player, version=new.version)
        if held is None:
            self.audience.broadcast(new, events or [])
        else:
            self.audience.deliver(held)
        if presence_changed:  # a seat taken, left or given to a bot, the game started or ended;
            self.audience.push_presence(new)  # viewers coming and going push it themselves
        self.schedule()

    async def _settle(self) -> None:
        """Resolve :attr:`unsettled`, a commit whose reply was lost: the connection to Redis
        dropped after the commit script was sent (or the command's deadline passed), so the
        change may or may not be in Redis, and the room answers nothing from memory until Redis
        says which (docs/operations.md, "Faults: what clients see"). Redis's version of the
        room is the new one (stored: adopt and broadcast it, as if the reply had come) or still
        the old one (not stored); this process's lease token still being there proves nobody
        else wrote the room meanwhile. Raises :class:`RoomError` (``store_failed``, outcome
        unknown) while Redis cannot be asked, :class:`Fenced` if the lease is gone,
        :class:`VersionConflict` if the room holds yet another version."""
        assert self.unsettled is not None
        new, adopt = self.unsettled
        version, token = await self._stored_version()
        self.unsettled = None
        if token != self.lease:
            self._not_stored()  # (the room is let go: its viewers sync wherever it goes)
            raise Fenced(f"lease now {token!r}")
        if version == new.version:
            self.log.info("commit_settled", version=version, stored=True)
            adopt()
            return
        self._not_stored()
        if version != self.record.version:
            raise VersionConflict(f"VERSION {version}")
        self.log.info("commit_settled", version=version, stored=False)

    async def _stored_version(self) -> tuple[int | None, str | None]:
        """Redis's version of the room and its lease token, asked once more on a fresh
        connection if the first read fails: the fault that lost the commit's reply often reset
        the pool's connections too, while Redis itself answers at once. Raises
        :class:`RoomError` (``store_failed``, outcome unknown) if the second read fails too."""
        failed: BaseException | None = None
        for fresh in (False, True):
            try:
                return await asyncio.wait_for(
                    self.store.rooms.version_and_lease(self.record.id, fresh), SETTLE_TIMEOUT / 2
                )
            except Exception as exc:
                if not (is_store_error(exc) or isinstance(exc, TimeoutError)):
                    raise
                failed = exc
        assert failed is not None
        self.store.outage.failed(failed, room=self.record.id, during="settling a commit")
        raise RoomError(errors.STORE_FAILED, OUTCOME_UNKNOWN)

    # -- the indexes other rooms share -------------------------------------------------------------

    def reindex(self) -> None:
        """Put the room's entries in the lobby, the active set and the expiry index, and its
        join code's expiry, as they should be now, before any client's command (a room just
        loaded: an evicted room left the listing; or one whose entries its owner found
        otherwise at a lease renewal)."""
        self._post("_reindex")

    def placed(self) -> Placed:
        """Where the room should be in the indexes its commit does not write."""
        record = self.record
        finished = record.status == FINISHED
        return Placed(
            room=record.id,
            active=table.needs_server(record, self.game),
            due=self.expiry_ttl() is not None,
            code=record.code if finished else None,
        )

    def code_ttl(self) -> int:
        """Seconds a finished room's join code has left (its keys' time to live)."""
        return self.config.finished_ttl

    # -- expiry --------------------------------------------------------------------------------

    def expiry_ttl(self) -> float | None:
        """How long the room may be left alone before it goes (None: it expires by itself, or
        never)."""
        config = self.config
        return table.expiry_ttl(self.record, config.waiting_ttl, config.abandoned_ttl)

    def post_expiry(self, due: float) -> None:
        """The room was due for its expiry check at ``due`` (``rooms.commands.expire``)."""
        self._post("_expire", {"due": due})

    async def discard(self) -> None:
        """Close a room that goes without a game (a waiting room nobody came back to): delete
        it from Redis, take it off the lobby, and let the process forget it."""
        record = self.record
        await self.listing.unlist(record, self.lease)
        await self.store.rooms.delete_room(record.id, record.code)
        self.discarded = True
        self._closed = True
        self._cancel_timers()
        self._on_idle(self)

    # -- timers --------------------------------------------------------------------------------

    def schedule(self) -> None:
        """Arm the timers the room needs now: its automatic step, or a bot's turn (a bot's seat,
        or a stand-in's); and the next clock or away player (:meth:`arm_clock`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        record = self.record
        if self._closed or record.status != PLAYING or record.state is None:
            self.arm_clock(())
            return
        to_act = self.game.to_act(record.state)
        self.arm_clock(to_act)
        # The loop is asked for only when a timer is armed: on Python 3.11 that is a getpid()
        # system call, and most moves (a person's turn next) arm none.
        if record.deadline is not None:
            delay = max(0.0, record.deadline - time.time())
            self._timer = asyncio.get_running_loop().call_later(delay, self._post, "_auto")
            return
        for seat in to_act:
            held = record.seats[seat]
            if held.bot or held.stand_in is not None:  # table.plays_itself, on every move
                self._timer = asyncio.get_running_loop().call_later(
                    self.config.bot_delay, self._post, "_bot_turn", {"seat": seat}
                )
                return

    def arm_clock(self, to_act: Sequence[int] | None = None) -> None:
        """Arm a timer for the earliest of: a seat's clock running out (its stored absolute
        deadline, so a room loaded after a restart fires it on time, never early), and a
        seat's player being away ``away_takeover`` seconds while the game waits for them
        (``to_act``: the game's, if the caller has it)."""
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        record = self.record
        if self._closed or record.status != PLAYING or record.state is None:
            return
        due = None if record.clocks is None else table.next_timeout(record)
        if self.config.away_takeover > 0:
            to_act = self.game.to_act(record.state) if to_act is None else to_act
            if not self.audience.watched().issuperset(to_act):  # rare: a player is not here
                away = list(self.away_due(record).values())
                due = min(away if due is None else [*away, due], default=None)
        if due is not None:
            delay = max(0.0, due - time.time())
            self._clock_timer = asyncio.get_running_loop().call_later(delay, self._post, "_clock")

    def away_due(self, record: RoomRecord) -> dict[int, float]:
        """:func:`table.away_due` of this room's viewers."""
        limit, audience = self.config.away_takeover, self.audience
        watched, gone = audience.watched(), audience.gone
        return table.away_due(record, self.game, limit, watched, gone, audience.loaded)

    def _cancel_timers(self) -> None:
        for handle in (self._timer, self._clock_timer, self._idle, self._retry_timer):
            if handle is not None:
                handle.cancel()

    def _check_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        pending = (
            self._timer is not None or self._clock_timer is not None
            or self._retry_timer is not None
        )
        if not self.audience.viewers and not pending and not self._closed:
            # A finished room only changes by a rematch or a chat line, which need a viewer: it
            # goes sooner (finished rooms nobody watches would be most of a busy server's memory).
            finished = self.record.status == FINISHED
            delay = self.config.finished_evict if finished else self.config.idle_evict
            self._idle = asyncio.get_running_loop().call_later(delay, self._on_idle, self)


#: The clock a commit is timed by, bound once: compiled, ``time.perf_counter`` would be looked up
#: on the module at every call.
_commit_clock: Final = time.perf_counter


def _moves_presence(old: RoomRecord, new: RoomRecord) -> bool:
    """Whether storing ``new`` over ``old`` may change the room's presence (a seat taken, left
    or given to a bot, the game started or ended: who a stand-in is due for)."""
    return new.seats is not old.seats or new.status != old.status


#: The answer while Redis cannot be asked whether a change whose reply was lost was stored.
OUTCOME_UNKNOWN: Final = (
    "Redis did not answer whether the change was stored; retry the same request (a move's"
    " mid makes that safe)"
)

#: Seconds the room waits for Redis to say whether a change was stored, before it answers
#: that the outcome is unknown (the room's other commands wait behind it): half for the first
#: read, half for the read again on a fresh connection.
SETTLE_TIMEOUT: Final = 2.0

#: Commands the room posts to itself (no client waits for them): tried again after a store
#: failure (``Room._retry_later``).
_SELF_DRIVEN: Final = frozenset(
    {"_auto", "_bot_turn", "_clock", "_expire", "_reindex", "_settle"}
)

#: Commands after which a seat may be watched by nobody, or by somebody again.
_COMINGS_AND_GOINGS: Final = frozenset({"join", "sync", "detach", "leave"})
