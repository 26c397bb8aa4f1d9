"""Checking a game record (``PROTOCOL.md``, "Verifying a record"): everything that needs no
game engine, and a place for the engine's replay to plug in.

Without an engine, a record is checked for: its format; the revealed secret against the
commitment (``fairness.commitment``); one contribution per seat, each at most
``fairness.MAX_CONTRIBUTION`` bytes, and the key made of them (``fairness.room_key``); its steps'
versions (1, 2, 3, … without a gap), seats (none, or one of the record's), times (never going
back) and hashes (each step's own, from the stored hash before it, so a changed step is named
where it is, and ``final_hash``); and the outcome against the steps that ended the game (an
``abandon`` step for ``abandoned``, the ``leave_game`` steps for ``left``, resignation and
timeout). What only the engine can confirm (each move legal and made by a seat whose turn it
was, a server bot's move its own choice, the outcome the one the moves reach, from the key) is
the ``replay`` callable's: the server's ``playhall.record_check.check_replay`` is one, which
``playhall verify`` passes. It raises :class:`Diverged` at the first step that does not follow.

The JavaScript library's ``verify.js`` makes the same engine-free checks, with the same
locations, so a record checks out, or fails, alike in both.
"""

from __future__ import annotations

import binascii
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from playhall_protocol import fairness, gamerecord

#: The steps that the game's engine takes (the rest change the room, not the game).
GAME_STEPS: Final = frozenset({"move", "bot_move", "auto", "leave_game"})
#: The steps that can end a game: the engine's, and the room's ``abandon``.
ENDING_STEPS: Final = GAME_STEPS | {"abandon"}
#: The outcome reasons a seat leaving the game gives (``Game.leave``'s reasons).
LEAVE_REASONS: Final = ("resignation", "timeout")


class Diverged(Exception):
    """Where a record stops holding: ``where`` (``"step 12"``, ``"fair"``, ``"outcome"``...),
    ``field`` (the field there that does not hold) and ``reason`` (what does not, for people).
    ``step`` is the step's index in ``steps`` (from 0) when a step is at fault."""

    def __init__(self, where: str, field: str, reason: str, step: int | None = None) -> None:
        super().__init__(f"{where}, {field}: {reason}")
        self.where, self.field, self.reason, self.step = where, field, reason, step

    @classmethod
    def at_step(cls, index: int, step: dict[str, Any], field: str, reason: str) -> Diverged:
        """A divergence at step ``index`` of ``steps``, named with its version and kind."""
        return cls(_step_name(index, step), field, reason, index)


def _step_name(index: int, step: Any) -> str:
    if isinstance(step, dict):
        return f"step {index} (version {step.get('version')}, {step.get('kind')})"
    return f"step {index}"


#: What replays a record through its game's engine: given the record and its key, it returns
#: what it checked (lines for people) or raises :class:`Diverged`.
Replay = Callable[[dict[str, Any], bytes], list[str]]


@dataclass
class Report:
    """What was checked (``checked``, a line each, those that held), what did not hold
    (``failures``, in the order found) and the key the record's material makes (None when it
    cannot be made)."""

    checked: list[str] = field(default_factory=list)
    failures: list[Diverged] = field(default_factory=list)
    key: bytes | None = None
    replayed: bool = False
    #: Every check that needs no engine held (set before the replay runs).
    held_without_engine: bool = False
    seen: Seen = field(default_factory=lambda: Seen())

    @property
    def ok(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        """The report for people: a line per check that held, then one per failure."""
        out = [f"ok    {line}" for line in self.checked]
        if not self.replayed and self.ok:
            out.append("not checked: the replay through the game's engine (no engine given)")
        out += [f"FAIL  {failure}" for failure in self.failures]
        if self.replayed and len(self.failures) == 1 and self._the_engine_alone():
            out.append(
                "      every stored step holds its hash, so the game the steps were played in "
                "differs from the one the engine replays: dealt from another key (a contribution "
                "or the secret other than revealed), set up with other options, played by another "
                "version of the engine, or a step was changed and the chain made again after it"
            )
        return out

    def _the_engine_alone(self) -> bool:
        """Whether the one failure is the replay's at a step or the outcome (not its setup),
        every check before it having held."""
        failure = self.failures[0]
        return self.held_without_engine and (failure.step is not None or failure.where == "outcome")


@dataclass(frozen=True)
class Seen:
    """What a player knows of the game apart from the record: the commitment (hex) they saw
    before it, and the seat they played with the bytes they sent with ``ready`` (None or empty:
    none)."""

    commitment: str | None = None
    seat: int | None = None
    entropy: bytes | None = None


def verify_record(record: Any, replay: Replay | None = None, seen: Seen | None = None) -> Report:
    """Check ``record`` (a game record as ``record`` returns it or ``playhall export`` writes
    it, read back from JSON) and return the :class:`Report`; ``replay``: the engine's replay
    (see the module's docstring), run when the key could be made; ``seen``: what the player
    checking it saw, checked against the record's fair-deal material."""
    report = Report()
    report.seen = seen or Seen()
    for name, check in (("format", _format), ("fair", _fair), ("steps", _steps),
                        ("outcome", _outcome)):
        try:
            line = check(record, report)
        except Diverged as failure:
            report.failures.append(failure)
            if check is _format:
                return report  # nothing else can be read
        except Exception as exc:  # a shape no check foresaw: a failure, never a crash
            report.failures.append(Diverged("record", name, f"cannot be read: {exc!r}"))
        else:
            report.checked.append(line)
    report.held_without_engine = not report.failures
    if replay is not None and report.key is not None:
        try:
            report.checked += replay(record, report.key)
        except Diverged as failure:
            report.failures.append(failure)
        except Exception as exc:
            report.failures.append(Diverged("record", "replay", f"cannot be replayed: {exc!r}"))
        report.replayed = True
    return report


def _format(record: Any, report: Report) -> str:
    if not isinstance(record, dict):
        raise Diverged("record", "format", "a game record is a JSON object")
    if (record.get("format"), record.get("format_version")) != (
        gamerecord.FORMAT, gamerecord.FORMAT_VERSION
    ):
        raise Diverged(
            "record", "format_version",
            f"not a {gamerecord.FORMAT} record of format version {gamerecord.FORMAT_VERSION}",
        )
    for name, kind in (("room", str), ("seats", list), ("fair", dict), ("steps", list),
                       ("outcome", dict), ("final_hash", str)):
        if not isinstance(record.get(name), kind):
            raise Diverged("record", name, f"missing, or not a {kind.__name__}")
    return f"format: {gamerecord.FORMAT} version {gamerecord.FORMAT_VERSION}, room {record['room']}"


def _hex(where: str, name: str, value: Any, size: int | None = None) -> bytes:
    try:
        data = binascii.unhexlify(value) if isinstance(value, str) else None
    except (binascii.Error, ValueError):
        data = None
    if data is None or (size is not None and len(data) != size):
        wanted = f"{size} bytes" if size is not None else "bytes"
        raise Diverged(where, name, f"not {wanted} in hex: {value!r}")
    return data


def _fair(record: dict[str, Any], report: Report) -> str:
    fair = record["fair"]
    shown = _hex("fair", "commitment", fair.get("commitment"), 32)
    secret = _hex("fair", "secret", fair.get("secret"), fairness.SECRET_BYTES)
    if not hmac.compare_digest(fairness.commitment(record["room"], secret), shown):
        raise Diverged(
            "fair", "secret",
            "the secret (with the room id) does not hash to the commitment shown before the "
            "game: the secret or the commitment was changed",
        )
    seen = report.seen
    if seen.commitment is not None and seen.commitment != fair["commitment"]:
        raise Diverged("fair", "commitment", "not the commitment this client saw before the game")
    given = fair.get("contributions")
    seats = len(record["seats"])
    if not isinstance(given, list) or len(given) != seats:
        raise Diverged("fair", "contributions", f"not one per seat ({seats} seats)")
    contributions: list[bytes | None] = []
    for seat, value in enumerate(given):
        if value is None:
            contributions.append(None)
            continue
        data = _hex("fair", f"contributions[{seat}]", value)
        if len(data) > fairness.MAX_CONTRIBUTION:
            raise Diverged(
                "fair", f"contributions[{seat}]",
                f"{len(data)} bytes, more than a seat may give ({fairness.MAX_CONTRIBUTION})",
            )
        contributions.append(data)
    if seen.seat is not None:
        if not 0 <= seen.seat < seats:
            raise Diverged("fair", "contributions", f"no seat {seen.seat} among {seats}")
        if (contributions[seen.seat] or b"") != (seen.entropy or b""):
            raise Diverged(
                "fair", f"contributions[{seen.seat}]", "not the contribution this client sent"
            )
    report.key = fairness.room_key(secret, record["room"], contributions)
    count = sum(1 for c in contributions if c)
    return (
        f"fair deal: the secret matches the commitment {fair['commitment'][:16]}…; "
        f"key {report.key.hex()[:16]}… made from it and {count} of {seats} seats' contributions"
        + (f" (seat {seen.seat}'s the one this client sent)" if seen.seat is not None else "")
        + ("; the commitment the one this client saw before the game"
           if seen.commitment is not None else "")
    )


def _time_of(step: dict[str, Any]) -> float:
    """A step's time as hashed: always a float64, however JSON spelled it (``17.0`` may come
    back from JSON as the int 17)."""
    at = step["time"]
    if isinstance(at, bool) or not isinstance(at, int | float):
        raise TypeError
    return float(at)


def _steps(record: dict[str, Any], report: Report) -> str:
    steps: list[Any] = record["steps"]
    seats = len(record["seats"])
    try:
        previous = gamerecord.chain_start(record["room"], record["fair"].get("commitment"))
    except (TypeError, ValueError):
        raise Diverged("fair", "commitment", "not hex: the chain cannot start") from None
    last_time = None
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or any(name not in step for name in (
            *gamerecord.STEP_FIELDS, "hash"
        )):
            raise Diverged(_step_name(index, step), "step", "not a step with every field")
        if step["version"] != index + 1 or type(step["version"]) is not int:
            raise Diverged.at_step(index, step, "version", f"{step['version']!r}, not {index + 1}")
        if not isinstance(step["kind"], str):
            raise Diverged.at_step(index, step, "kind", f"{step['kind']!r} is not a kind of step")
        seat = step["seat"]
        if seat is not None and (type(seat) is not int or not 0 <= seat < seats):
            raise Diverged.at_step(index, step, "seat", f"{seat!r} is not a seat of {seats}")
        try:
            at = _time_of(step)
        except TypeError:
            raise Diverged.at_step(index, step, "time", f"{step['time']!r} is not a time") from None
        if last_time is not None and at < last_time:
            raise Diverged.at_step(
                index, step, "time", f"{at} is before the step before it ({last_time})"
            )
        last_time = at
        try:
            current = gamerecord.step_hash(previous, {**step, "time": at})
        except (TypeError, ValueError) as exc:
            raise Diverged.at_step(index, step, "move", f"cannot be hashed: {exc}") from None
        if step["hash"] != current.hex():
            raise Diverged.at_step(
                index, step, "hash",
                "the step's fields (version, kind, seat, move, mid, time) do not hash, after the "
                "hash before it, to the hash it carries: one of them or its hash was changed",
            )
        previous = _stored_hash(index, step)
    if record["final_hash"] != previous.hex():
        raise Diverged("record", "final_hash", "not the last step's hash")
    return f"steps: {len(steps)} steps, versions 1 to {len(steps)} in order, every hash chained"


def _stored_hash(index: int, step: dict[str, Any]) -> bytes:
    """The hash a step carries, which the next one is hashed after (so a changed step is
    caught at that step, not at every one after it)."""
    return _hex(_step_name(index, step), "hash", step["hash"], 32)


def _outcome(record: dict[str, Any], report: Report) -> str:
    """The outcome against the steps: what ended the game, and who left it."""
    outcome = record["outcome"]
    steps = [s for s in record["steps"] if isinstance(s, dict)]
    seats = len(record["seats"])
    reason = outcome.get("reason")
    ending = [(i, s) for i, s in enumerate(steps) if s.get("kind") in ENDING_STEPS]
    if not ending:
        raise Diverged("outcome", "reason", f"{reason!r}, but no step of the game is recorded")
    index, last = ending[-1]
    for name in ("winners", "left"):
        if not isinstance(outcome.get(name, []), list):
            raise Diverged("outcome", name, "not a list of seats")
        for seat in outcome.get(name, []):
            if type(seat) is not int or not 0 <= seat < seats:
                raise Diverged("outcome", name, f"{seat!r} is not a seat of {seats}")
    if (reason == "abandoned") != (last.get("kind") == "abandon"):
        raise Diverged(
            "outcome", "reason",
            f"{reason!r}, but the game's last step is {_step_name(index, last)}",
        )
    left = [s["seat"] for s in steps if s.get("kind") == "leave_game"]
    # An abandoned game's outcome names nobody, those who had left it included.
    if reason != "abandoned" and sorted(outcome.get("left", [])) != sorted(left):
        raise Diverged(
            "outcome", "left",
            f"{outcome.get('left', [])}, but the seats that left the game are {left}",
        )
    if set(outcome.get("winners", [])) & set(left):
        raise Diverged("outcome", "winners", "a seat that left the game cannot win it")
    if reason in LEAVE_REASONS and (last.get("kind"), last.get("move")) != ("leave_game", reason):
        raise Diverged(
            "outcome", "reason",
            f"{reason!r}, but the game's last step is {_step_name(index, last)}",
        )
    return f"outcome: {reason!r} agrees with the game's last step, {_step_name(index, last)}"
