"""``playhall admin``: an operator's commands, sent to the operator's listener of a running
server process (``admin_listen``, :mod:`playhall.net.admin`), which carries them out whichever
process holds the room.

Every command names its operator (``--operator``, else the OS user), which the server logs
with the action. The listener's address comes from ``--url``, else ``PLAYHALL_ADMIN_LISTEN``,
else the default ``127.0.0.1:9766``; the token from ``--token``, else ``PLAYHALL_ADMIN_TOKEN``.
Exit status: 0 done, 1 refused by the server or not reached, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Final, TextIO

from playhall.config import Config

#: A duration: a number and an optional unit (seconds by default).
_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNITS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
#: Seconds the server has to answer.
TIMEOUT: Final = 15.0


class Failed(Exception):
    """The command did not go through: why, for the operator."""


def duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``15m``, ``2h`` or ``1d``."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration: give e.g. 90s, 15m, 2h or 1d"
        )
    return float(match[1]) * _UNITS[match[2]]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "admin",
        help="an operator's commands to a running server",
        description="An operator's commands, sent to the operator's listener of a running "
        "server process (admin_listen), which carries them out whichever process holds the room.",
    )
    p.add_argument("--url", help="the operator's listener, e.g. http://127.0.0.1:9766 "
                   "(default: from PLAYHALL_ADMIN_LISTEN, else 127.0.0.1:9766)")
    p.add_argument("--token", help="the admin token (default: PLAYHALL_ADMIN_TOKEN)")
    p.add_argument("--operator", help="who runs the command, for the server's log "
                   "(default: the OS user)")
    p.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    actions = p.add_subparsers(dest="action", required=True)
    rooms = actions.add_parser("rooms", help="list rooms: status, game, seats, owning process")
    rooms.add_argument("--status", default="live",
                       choices=["live", "waiting", "playing", "finished", "all"],
                       help="which rooms (live: waiting or playing, the default)")
    rooms.add_argument("--game", default="", help="only this game's rooms")
    rooms.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    actions.add_parser("room", help="show one room").add_argument("room")
    actions.add_parser("end", help="end a room (reason closed_by_operator)").add_argument("room")
    for name, what in (("mute", "mute a player's chat in a room"),
                       ("unmute", "let a muted player chat again")):
        muting = actions.add_parser(name, help=what)
        muting.add_argument("room")
        muting.add_argument("player", help="the player's id (as `room` shows it)")
    refuse = actions.add_parser("refuse", help="refuse a client address on every process for "
                                "a time")
    refuse.add_argument("address", help="an IPv4 or IPv6 address")
    refuse.add_argument("duration", type=duration, help="for how long: 90s, 15m, 2h, 1d")
    refuse.add_argument("--reason", default="", help="why (shown to the refused client)")
    actions.add_parser("refusals", help="list the addresses refused now")
    actions.add_parser("lift", help="end an address's refusal now").add_argument("address")


def request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The action and its arguments the command sends."""
    action = args.action
    if action == "rooms":
        return action, {"status": args.status, "game": args.game, "limit": args.limit}
    if action in ("room", "end"):
        return action, {"room": args.room}
    if action in ("mute", "unmute"):
        return action, {"room": args.room, "player": args.player}
    if action == "refuse":
        return action, {"address": args.address, "seconds": args.duration,
                        "reason": args.reason}
    if action == "lift":
        return action, {"address": args.address}
    return action, {}


def post(
    url: str, token: str, operator: str, action: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Send one action; its answer, or :class:`Failed` saying why not."""
    headers = {"Content-Type": "application/json", "X-Playhall-Operator": operator}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    sent = urllib.request.Request(
        f"{url.rstrip('/')}/admin/{action}", json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(sent, timeout=TIMEOUT) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result
    except urllib.error.HTTPError as refused:
        try:
            said = json.loads(refused.read())
            raise Failed(f"{said['error']}: {said['reason']}") from None
        except (ValueError, KeyError, TypeError):
            raise Failed(f"HTTP {refused.code} {refused.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        why = getattr(exc, "reason", exc)
        raise Failed(f"cannot reach the operator's listener at {url}: {why}") from None


def listener_url(given: str | None) -> str:
    if given:
        return given if "://" in given else f"http://{given}"
    listen = os.environ.get("PLAYHALL_ADMIN_LISTEN") or Config().admin_listen
    return f"http://{listen}"


def operator_name(given: str | None) -> str:
    if given:
        return given
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (a bare container)
        return f"uid {os.getuid()}"


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    action, body = request(args)
    token = args.token if args.token is not None else os.environ.get("PLAYHALL_ADMIN_TOKEN", "")
    try:
        answer = post(listener_url(args.url), token, operator_name(args.operator), action, body)
    except Failed as exc:
        print(f"playhall admin {action}: {exc}", file=err)
        return 1
    if args.json:
        print(json.dumps(answer, indent=2), file=out)
    else:
        for line in shown(action, answer):
            print(line, file=out)
    return 0


def shown(action: str, answer: dict[str, Any]) -> list[str]:
    """The answer for people."""
    if action == "rooms":
        lines = [_room_line(room) for room in answer["rooms"]]
        more = answer["matched"] - len(answer["rooms"])
        matched = answer["matched"]
        counted = f"{matched} room{'' if matched == 1 else 's'}"
        return [*lines, counted + (f" ({more} not shown)" if more else "")]
    if action == "room":
        room = answer["room"]
        lines = [_room_line(room)]
        for index, seat in enumerate(room["seats"]):
            lines.append(f"  seat {index}: {_seat(seat)}")
        for key in ("options", "creator", "outcome", "muted", "rematch", "rematch_of"):
            if room.get(key):
                lines.append(f"  {key}: {json.dumps(room[key])}")
        return lines
    if action == "end":
        return [f"room {answer['room']} ended (closed_by_operator) at version {answer['version']}"]
    if action in ("mute", "unmute"):
        return [f"room {answer['room']}: muted {', '.join(answer['muted']) or 'nobody'}"]
    if action == "refuse":
        refusal = answer["refusal"]
        return [f"{refusal['address']} refused until {_when(refusal['until'])}"]
    if action == "refusals":
        return [
            f"{r['address']} until {_when(r['until'])} by {r['by']}"
            + (f": {r['reason']}" if r["reason"] else "")
            for r in answer["refusals"]
        ] or ["no address is refused"]
    if action == "lift":
        return [f"{answer['lifted']} is no longer refused"]
    return [json.dumps(answer)]


def _room_line(room: dict[str, Any]) -> str:
    owner = room["owner"] or "-"
    seats = ", ".join(_seat(s) for s in room["seats"])
    return (f"{room['room']}  {room['game']:<12} {room['status']:<9} v{room['version']:<5} "
            f"owner {owner}  [{seats}]")


def _seat(seat: dict[str, Any]) -> str:
    if seat["bot"]:
        return "bot"
    if seat["player"] is None:
        return "empty"
    stand_in = f", bot standing in ({seat['stand_in']})" if seat["stand_in"] else ""
    return f"{seat['name']} ({seat['player']}{stand_in})"


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))
