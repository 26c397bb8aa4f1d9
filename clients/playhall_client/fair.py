"""Checking a finished room's deal: the revealed secret against the commitment shown before the
game, and the player's own contribution among those the key was made from (:func:`verify_deal`);
and a whole game record (:func:`verify_record`).

The construction is ``PROTOCOL.md``, "Fair deals"; ``playhall_protocol.fairness`` computes it.
What this proves, and what it cannot, is said there too; checking a record is "Verifying a
record".
"""

from __future__ import annotations

from typing import Any

from playhall_protocol.fairness import NotVerified, verify
from playhall_protocol.recordcheck import Diverged, Replay, Report, Seen
from playhall_protocol.recordcheck import verify_record as _verify_record

__all__ = [
    "Diverged", "NotVerified", "Replay", "Report", "Seen", "verify_deal", "verify_record",
]


def verify_record(
    record: dict[str, Any], replay: Replay | None = None, seen: Seen | None = None
) -> Report:
    """Check a game record (``Client.record``'s, or ``playhall export``'s JSON read back) and
    return a :class:`Report`: ``report.ok``, ``report.lines()`` (what was checked, and each
    :class:`Diverged`: where the record stops holding, the step and its field).

    Without ``replay`` every check that needs no game engine is made: the secret against the
    commitment, the key from the secret and the seats' contributions, each step's version,
    seat, time and hash, the outcome against the steps that ended the game. The engine's part
    (every move legal in turn, the server bots' moves, the outcome the moves reach) needs the
    games, which are the server's: with the ``playhall`` server installed, pass
    ``playhall.record_check.check_replay`` (``playhall verify FILE`` does).

    ``seen``: what this client knows apart from the record, checked against it: the commitment
    it saw before the game, its seat and the bytes it sent with ``ready`` (a ``RoomMirror``
    keeps them: ``mirror.seen()``)."""
    return _verify_record(record, replay, seen)


def verify_deal(
    view: dict[str, Any],
    *,
    seen_commitment: str | None = None,
    own: bytes | None = None,
) -> bytes:
    """Check the ``fair`` map of a finished room's ``view`` and return the room's key (what
    the game drew every card from).

    - the secret revealed must hash, with the room id, to the commitment shown, and to
      ``seen_commitment`` (hex) when given: the commitment this client saw before the game, so
      a server cannot show another at the end;
    - when the view is from a seat (``you``), that seat's contribution must be ``own`` (what
      this client sent with ``ready``; None or empty: it sent none).

    Raises :class:`NotVerified` saying what does not hold (also for a view that reveals
    nothing yet: the game is not over)."""
    fair = view.get("fair")
    if not isinstance(fair, dict) or not isinstance(fair.get("commitment"), str):
        raise NotVerified("the view has no commitment")
    if fair.get("secret") is None or fair.get("contributions") is None:
        raise NotVerified("nothing is revealed yet: the game is not over")
    if seen_commitment is not None and seen_commitment != fair["commitment"]:
        raise NotVerified("the commitment at the end is not the one shown before the game")
    try:
        shown = bytes.fromhex(fair["commitment"])
        secret = bytes.fromhex(fair["secret"])
        contributions = [None if c is None else bytes.fromhex(c) for c in fair["contributions"]]
    except (TypeError, ValueError):
        raise NotVerified("the revealed material is not hex") from None
    seat = view.get("you")
    return verify(
        view["room"], shown, secret, contributions,
        own=own if seat is not None else None, own_seat=seat,
    )
