"""The terminal client: a line-based UI over :class:`playhall_client.Client`.

The UI never touches stdin or stdout itself. It takes ``read`` (an async function returning the
next input line, or ``None`` at end of input) and ``write`` (a function printing one block of
text), so tests drive it with scripted lines and read what it wrote. :func:`stdin_reader` gives
a ``read`` over the real stdin that does not block the event loop.

Outside a room it shows a main menu (games, open rooms followed live, create, join, watch,
rejoin, quit). Inside a room it redraws the room on every change of the mirror (board from the
game's renderer in :mod:`playhall_client.render`, seats with presence and ready marks, who
watches, whose turn, the legal moves numbered), prints game events and chat lines as they come,
and reads commands: a number picks a legal move, and ``bot N``, ``ready``, ``start``,
``chat TEXT``, ``name NAME``, ``decks``, ``rematch``, ``leave``, ``quit``, ``help``. The
client's own connection notices are printed as they come: the connection is lost and being
re-established, and when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from playhall_client import render
from playhall_client.client import Client, ConnectionLost, RoomMirror, ServerError
from playhall_client.standings import leaderboard_lines, profile_lines

ReadLine = Callable[[], Awaitable[str | None]]
Write = Callable[[str], None]

DEFAULT_URL = "ws://127.0.0.1:8765/"

log = logging.getLogger("playhall_client.terminal")

MENU = """\
Main menu:
  1) games    list the games
  2) rooms    list open rooms, then follow them live until you enter a room
  3) create   create a room   (or: create GAME [SEATS] [name=value ...])
  4) join     join a room by room id or join code   (or: join ID-OR-CODE);
              watch ROOM-ID to watch without a seat
  5) mine     rejoin one of my rooms
     play     quick play: a seat at a table about to start
              (play GAME [SEATS or MIN-MAX] [bots=SECONDS])
     me       my ratings, wins, losses and recent games   (or: profile PLAYER-ID)
     top      a game's leaderboard   (top GAME)
  6) quit"""

ROOM_HELP = """\
In a room:
  N            play legal move number N (a move marked "enter JSON" then asks for its fields)
  bot N        fill seat N with a server bot (seats are numbered from 1)
  ready        say you are ready (unready: take it back)
  start        start now (the room's creator; every seat must be filled)
  chat TEXT    say something to the room
  name NAME    go by NAME from now on (every room where you sit shows it)
  decks        list the ready-made decks' cards (games with decks)
  resign       leave the game being played (the other player wins; in Mantis with three or
               more, your seat drops out and the others play on)
  rematch      after the game: play again with the same seats
  leave        leave the room and go back to the menu (a seat in a running game is kept)
  quit         exit (your seats are kept; rejoin later with the same token)
  help         this list; an empty line redraws"""


class Quit(Exception):
    """End of input, or the user asked to quit."""


class _Stay:
    """A room command's answer: stay in this room."""


STAY = _Stay()


# -- tokens -------------------------------------------------------------------------------------


def default_token_file(url: str) -> Path:
    """``~/.config/playhall/token-<host>-<port>``: one identity per server."""
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "wss" else 80)
    host = (parsed.hostname or "localhost").replace(":", "_")
    return Path.home() / ".config" / "playhall" / f"token-{host}-{port}"


def load_token(path: Path) -> str | None:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return token or None


def save_token(path: Path, token: str) -> None:
    """Write the token readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.touch(mode=0o600, exist_ok=True)
    tmp.chmod(0o600)
    tmp.write_text(token + "\n", encoding="utf-8")
    tmp.replace(path)


async def open_client(url: str, *, name: str | None = None, token: str | None = None) -> Client:
    """Connect and say hello (a refused hello closes the socket again)."""
    return await Client.connect(url, name=name, token=token)


async def connect_with_token_file(url: str, name: str | None, token_file: Path,
                                  write: Write | None = None) -> Client:
    """Connect with the token saved in ``token_file`` (if any) and save the token the server
    gives. A token the server no longer knows is dropped for a new identity."""
    token = load_token(token_file)
    try:
        client = await open_client(url, name=name, token=token)
    except ServerError as exc:
        if exc.code != "bad_token":
            raise
        if write is not None:
            write(f"The saved token in {token_file} was refused ({exc.reason}); "
                  "starting as a new player.")
        client = await open_client(url, name=name)
    if client.token and client.token != token:
        save_token(token_file, client.token)
    return client


# -- input --------------------------------------------------------------------------------------


def stdin_reader() -> ReadLine:
    """A ``read`` over stdin that never blocks the event loop: a daemon thread reads lines
    into a queue (a daemon, so a pending read never holds up exit)."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, name="playhall-stdin", daemon=True).start()

    async def read() -> str | None:
        return await lines.get()

    return read


def parse_value(text: str, option: dict[str, Any]) -> bool | int | str:
    """An option value typed by the user, converted to the option's kind."""
    kind = option.get("kind", "str")
    if kind == "bool":
        low = text.strip().lower()
        if low in ("y", "yes", "true", "1", "on"):
            return True
        if low in ("n", "no", "false", "0", "off"):
            return False
        raise ValueError("answer yes or no")
    if kind == "int" and option.get("unit") == "ms":
        return parse_duration(text)
    if kind == "int":
        return int(text.strip())
    return text.strip()


_DURATION_UNITS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "min": 60_000, "s": 1000,
                   "ms": 1}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|ms|m|s)")


def parse_duration(text: str) -> int:
    """A duration typed by a person, in milliseconds: ``90s``, ``1m30s``, ``3 min``, ``1d``,
    ``500ms``; a bare number is milliseconds (the option's wire value)."""
    typed = text.strip().lower()
    if typed.isdigit():
        return int(typed)
    parts = _DURATION.findall(typed)
    if not parts or _DURATION.sub("", typed).strip():
        raise ValueError("a duration such as 90s, 1m30s, 3min, 1d or 500ms")
    return round(sum(float(n) * _DURATION_UNITS[unit] for n, unit in parts))


def show_duration(ms: int) -> str:
    """Milliseconds as people say them: ``1m30s``, ``3m``, ``1d``, ``0.8s`` (parse_duration reads
    it back)."""
    left, parts = int(ms), []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000)):
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count}{unit}")
    if left or not parts:
        parts.append(f"{left / 1000:g}s")
    return "".join(parts)


# -- the UI -------------------------------------------------------------------------------------


class Terminal:
    def __init__(self, client: Client, read: ReadLine, write: Write) -> None:
        self.client = client
        self.read = read
        self.write = write
        self.games: list[dict[str, Any]] = []
        self.my_rooms: list[str] = list(client.welcome.get("rooms", []))
        self.screen: RoomScreen | None = None
        self._pump: asyncio.Task[None] | None = None
        #: The public rooms as last listed, by id, while the lobby is followed live.
        self.lobby: dict[str, dict[str, Any]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_connection_state = ""

    async def run(self) -> int:
        """The whole session: menu and rooms until ``quit`` or end of input. Returns 0."""
        self._pump = asyncio.create_task(self._pump_pushes())
        try:
            self.write(f"Connected to {self.client.url} as {self.client.name} "
                       f"(player {self.client.player}).")
            with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
                # Clocks count down by the server's time (PROTOCOL.md, "Clocks").
                await asyncio.wait_for(self.client.measure_clock_offset(), 5)
            if self.my_rooms:
                self.write(f"You have {len(self.my_rooms)} room(s): type 'mine' to rejoin.")
            while True:
                try:
                    await self._menu_once()
                except Quit:
                    break
        finally:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        self.write("Bye.")
        return 0

    async def ask(self, prompt: str) -> str:
        self.write(prompt)
        line = await self.read()
        if line is None:
            raise Quit
        return line.strip()

    # -- pushes (chat, notices) ----------------------------------------------------------------

    async def _pump_pushes(self) -> None:
        while True:
            message = await self.client.pushes.get()
            kind = message.get("t")
            if kind == "connection":
                self._connection(message)
            elif kind == "lobby":
                self._lobby_change(message)
            elif kind == "chat":
                screen = self.screen
                where = "" if screen is not None and screen.mirror.room == message.get("room") \
                    else f" in {message.get('room')}"
                self.write(f"[chat{where}] {message.get('name')}: {message.get('text')}")
            elif kind == "notice":
                self.write(f"[server] {message.get('text') or message.get('reason') or message}")

    def _connection(self, message: dict[str, Any]) -> None:
        """The client's own notices: the connection dropped (it reconnects by itself), the
        server refuses to take it back for now (said once, however many tries it takes), or
        it is back with every room re-synced."""
        previous, state = self._last_connection_state, str(message.get("state"))
        self._last_connection_state = state
        if state == "retrying" and previous != "retrying":
            self.write(f"*** The server cannot take us back yet ({message.get('reason')}); "
                       "trying again…")
        elif state == "lost":
            self.write("*** Connection lost — reconnecting… (what you type waits until it is "
                       "back, or is reported as not sent)")
        elif state == "back":
            self.write("*** Connection back: the rooms are up to date again.")
            if self.lobby is not None:  # the server forgot the watch with the old connection
                task = asyncio.create_task(self._watch_lobby(quiet=True))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if self.screen is not None:
                self.screen.draw()

    # -- menu ----------------------------------------------------------------------------------

    async def _menu_once(self) -> None:
        line = await self.ask(MENU + "\nChoose:")
        words = line.split()
        if not words:
            return
        choice, rest = words[0].lower(), words[1:]
        try:
            if choice in ("1", "games"):
                await self.show_games()
            elif choice in ("2", "rooms"):
                await self.show_rooms()
            elif choice in ("3", "create"):
                mirror = await (self.quick_create(rest) if rest else self.create_room())
                if mirror is not None:
                    await self.in_room(mirror)
            elif choice in ("4", "join"):
                target = rest[0] if rest else await self.ask("Room id or join code:")
                if target:
                    mirror = await self.join(target)
                    await self.in_room(mirror)
            elif choice == "watch":
                target = rest[0] if rest else await self.ask("Room id or join code:")
                if target:
                    mirror = await self.join(target, watch=True)
                    await self.in_room(mirror)
            elif choice in ("5", "mine", "rejoin"):
                mirror = await self.rejoin()
                if mirror is not None:
                    await self.in_room(mirror)
            elif choice == "play":
                mirror = await self.quick_play(rest)
                if mirror is not None:
                    await self.in_room(mirror)
            elif choice in ("me", "profile"):
                found = await self.client.profile(rest[0] if rest else None)
                self.write("\n".join(profile_lines(found, self.title)))
            elif choice == "top":
                game = rest[0] if rest else await self.ask("Which game (id)?")
                board = await self.client.leaderboard(game, limit=20)
                self.write("\n".join(leaderboard_lines(board, self.title)))
            elif choice in ("6", "q", "quit", "exit"):
                raise Quit
            elif choice in ("?", "help"):
                return
            else:
                self.write(f"Unknown choice {line!r}.")
        except ServerError as exc:
            self.write(f"Refused: {exc.reason} ({exc.code})")
        except ConnectionLost as exc:
            self.write(f"Connection lost: {exc}")
        except TimeoutError:
            self.write(f"Still not connected: {line!r} was not sent.")

    async def _games(self) -> list[dict[str, Any]]:
        if not self.games:
            self.games = await self.client.games()
        return self.games

    def title(self, game_id: str) -> str:
        for game in self.games:
            if game["id"] == game_id:
                return str(game["title"])
        return game_id

    async def show_games(self) -> None:
        lines = ["Games:"]
        for n, game in enumerate(await self._games(), 1):
            lines.append(f"  {n}) {game['id']:<12} {game['title']}  "
                         f"({game['min_seats']}-{game['max_seats']} seats)")
            for option in game.get("options", []):
                lines.append(f"       option {_describe_option(option)}")
        self.write("\n".join(lines))

    async def show_rooms(self) -> None:
        """List the open rooms and follow the lobby live (``lobby.watch``): changes are printed
        as they come while the menu is up."""
        await self._games()
        await self._watch_lobby()

    async def _watch_lobby(self, quiet: bool = False) -> None:
        rooms = await self.client.watch_lobby()
        self.lobby = {room["room"]: room for room in rooms}
        if quiet:
            return
        if not rooms:
            self.write("No open rooms. Create one! (New rooms will show up here.)")
            return
        lines = ["Open rooms (join with: join ROOM-ID; watch with: watch ROOM-ID); "
                 "changes follow live:"]
        lines += [f"  {self._room_line(room)}" for room in rooms]
        self.write("\n".join(lines))

    def _room_line(self, room: dict[str, Any]) -> str:
        players = ", ".join(p or "-" for p in room.get("players", []))
        return (f"{room['room']}  {self.title(room['game']):<12} {room['status']:<8} "
                f"{room['taken']}/{room['seats']} seats  [{players}]")

    def _lobby_change(self, message: dict[str, Any]) -> None:
        if self.lobby is None:
            return
        quiet = self.screen is not None  # inside a room the lobby is not shown
        for room in message.get("rooms", []):
            new = room["room"] not in self.lobby
            self.lobby[room["room"]] = room
            if not quiet:
                self.write(f"[lobby] {'new' if new else 'now'}: {self._room_line(room)}")
        for room_id in message.get("removed", []):
            if self.lobby.pop(room_id, None) is not None and not quiet:
                self.write(f"[lobby] gone: {room_id}")

    async def _stop_lobby(self) -> None:
        if self.lobby is not None:
            self.lobby = None
            await self.client.request("lobby.unwatch")

    async def _pick_game(self) -> dict[str, Any] | None:
        games = await self._games()
        listing = "\n".join(f"  {n}) {g['id']:<12} {g['title']}" for n, g in enumerate(games, 1))
        answer = await self.ask(f"Games:\n{listing}\nWhich game (number or id)?")
        for n, game in enumerate(games, 1):
            if answer in (str(n), game["id"]):
                return game
        self.write(f"No game {answer!r}.")
        return None

    async def create_room(self) -> RoomMirror | None:
        game = await self._pick_game()
        if game is None:
            return None
        options: dict[str, Any] = {}
        seats: int | None = None
        if not game.get("seats_by_option"):  # no option changes the seats: ask them first
            seats = await self._ask_seats(game, options)
            if seats is None:
                return None
        for option in game.get("options", []):
            if not option_applies(option, game, options):
                continue  # e.g. Master Yoga's settings for a two-player Mandala
            while True:
                default = _option_value(option, option["default"]).split(" = ")[0]
                answer = await self.ask(f"Option {_describe_option(option)}\n"
                                        f"{option['name']} [{default}]:")
                if not answer:
                    break
                try:
                    options[option["name"]] = parse_value(answer, option)
                    break
                except ValueError as exc:
                    self.write(f"Invalid value: {exc}.")
        if seats is None:  # asked after the options that decide them
            seats = await self._ask_seats(game, options)
            if seats is None:
                return None
        answer = await self.ask("Private room, joined by code only (y/N)?")
        private = answer.lower() in ("y", "yes")
        return await self._create(game["id"], seats, options, private)

    async def _ask_seats(self, game: dict[str, Any], options: dict[str, Any]) -> int | None:
        """The seat count: not asked when the options fix it (Mandala's modes)."""
        low, high = seat_range(game, options)
        if low == high:
            self.write(f"Seats: {low}.")
            return low
        answer = await self.ask(f"Seats ({low}-{high}) [{low}]:")
        try:
            return int(answer) if answer else low
        except ValueError:
            self.write(f"Not a number: {answer!r}.")
            return None

    async def quick_create(self, words: list[str]) -> RoomMirror | None:
        """``create GAME [SEATS] [name=value ...] [private]``; the seat count follows the options
        where they fix it, and a seat count only one choice of an option allows picks it."""
        games = {g["id"]: g for g in await self._games()}
        game = games.get(words[0])
        if game is None:
            self.write(f"No game {words[0]!r}; games: {', '.join(games)}.")
            return None
        rest = words[1:]
        seats: int | None = None
        if rest and rest[0].isdigit():
            seats = int(rest.pop(0))
        known = {o["name"]: o for o in game.get("options", [])}
        options: dict[str, Any] = {}
        private = False
        for word in rest:
            if word == "private":
                private = True
                continue
            key, _, value = word.partition("=")
            if key not in known:
                self.write(f"No option {key!r} for {game['id']}.")
                return None
            try:
                options[key] = parse_value(value, known[key])
            except ValueError as exc:
                self.write(f"Invalid value for {key}: {exc}.")
                return None
        seats, note = fit_seats(game, seats, options)
        if note:
            self.write(note)
        return await self._create(game["id"], seats, options, private)

    async def quick_play(self, words: list[str]) -> RoomMirror | None:
        """``play GAME [N or MIN-MAX] [bots=SECONDS]``: a seat at an open table of the game with
        a seat count in the range (any the game allows by default), or a new one; with bots,
        its empty seats go to the server's bots that long after it opened."""
        games = {g["id"]: g for g in await self._games()}
        game = games.get(words[0]) if words else None
        if game is None:
            self.write("Usage: play GAME [SEATS or MIN-MAX] [bots=SECONDS]; games: "
                       + ", ".join(games) + ".")
            return None
        low, high = game["min_seats"], game["max_seats"]
        bots: int | None = None
        for word in words[1:]:
            if word.startswith("bots="):
                wait = word[5:]  # seconds, or a duration as people type it (1m, 90s)
                try:
                    bots = int(wait) if wait.isdigit() else parse_duration(wait) // 1000
                except ValueError as exc:
                    self.write(f"Invalid bots wait: {exc}.")
                    return None
            elif re.fullmatch(r"\d+(-\d+)?", word):
                first, _, last = word.partition("-")
                low, high = int(first), int(last or first)
            else:
                self.write(f"Not understood: {word!r} (a seat count such as 3 or 3-5, or bots=30).")
                return None
        self.write(f"Looking for a {game['title']} table with {low}-{high} seats…")
        mirror = await self.client.seek(game["id"], (low, high), bots_after=bots)
        self._remember(mirror.room)
        seats = len(mirror.view["seats"])
        self.write(f"Seated at room {mirror.room} ({seats} seats); the game starts when it is "
                   "full" + (", or with bots after the wait." if bots is not None else "."))
        return mirror

    async def _create(self, game: str, seats: int, options: dict[str, Any],
                      private: bool) -> RoomMirror:
        mirror = await self.client.create(game, seats, options=options, private=private)
        self._remember(mirror.room)
        code = mirror.view.get("code")
        self.write(f"Created room {mirror.room}" + (f" (join code {code})" if code else "") + ".")
        return mirror

    async def join(self, target: str, watch: bool = False) -> RoomMirror:
        """Join (or with ``watch`` only watch) by room id, or by join code when no room has
        that id."""
        try:
            mirror = await self.client.join(target, watch=watch)
        except ServerError as exc:
            if exc.code != "no_such_room":
                raise
            mirror = await self.client.join(code=target, watch=watch)  # the server reads any case
        if mirror.seat is not None:
            self._remember(mirror.room)
        return mirror

    async def rejoin(self) -> RoomMirror | None:
        if not self.my_rooms:
            self.write("You hold no seats.")
            return None
        listing = "\n".join(f"  {n}) {room}" for n, room in enumerate(self.my_rooms, 1))
        answer = await self.ask(f"Your rooms:\n{listing}\nWhich (number or room id)?")
        for n, room in enumerate(self.my_rooms, 1):
            if answer in (str(n), room):
                try:
                    return await self.client.join(room)
                except ServerError as exc:
                    if exc.code == "no_such_room":
                        self.my_rooms.remove(room)
                    raise
        self.write(f"No room {answer!r}.")
        return None

    def _remember(self, room: str) -> None:
        if room not in self.my_rooms:
            self.my_rooms.append(room)

    # -- in a room -----------------------------------------------------------------------------

    async def in_room(self, mirror: RoomMirror) -> None:
        """Show the room and take commands until ``leave`` (back to the menu) or ``quit``."""
        await self._games()
        await self._stop_lobby()
        while True:
            screen = self.screen = RoomScreen(self, mirror)
            watcher = asyncio.create_task(screen.watch())
            try:
                next_room = await screen.commands()
            finally:
                self.screen = None
                await screen.stop()
                # Python 3.11's wait_for (inside mirror.wait) can swallow a cancellation, so
                # the watcher is asked to end rather than cancelled.
                await watcher
            if next_room is None:
                return
            mirror = next_room


class RoomScreen:
    """One room on screen: redraws on changes, and reads commands."""

    def __init__(self, ui: Terminal, mirror: RoomMirror) -> None:
        self.ui = ui
        self.client = ui.client
        self.mirror = mirror
        self.write = ui.write
        self.drawn: tuple[int, tuple[bool, ...], int] | None = None
        self.events_seen = len(mirror.events)
        self.shown_moves: list[dict[str, Any]] = []
        self.shown_version = -1
        self.template: dict[str, Any] | None = None
        self.stopped = False

    def _key(self, mirror: RoomMirror) -> tuple[int, tuple[bool, ...], int]:
        return (mirror.version, tuple(mirror.presence), mirror.watching)

    async def watch(self) -> None:
        """Draw now and after every change, until :meth:`stop`."""
        self.draw()
        while True:
            try:
                await self.mirror.wait(lambda m: self.stopped or self._key(m) != self.drawn,
                                       timeout=3600)
            except TimeoutError:
                continue
            if self.stopped:
                return
            self.draw()

    async def stop(self) -> None:
        self.stopped = True
        async with self.mirror.changed:
            self.mirror.changed.notify_all()

    # -- drawing -------------------------------------------------------------------------------

    def draw(self) -> None:
        mirror = self.mirror
        self.drawn = self._key(mirror)
        view = mirror.view
        new_events = mirror.events[self.events_seen:]
        self.events_seen = len(mirror.events)
        lines = [f"  · {_event_line(e, view)}" for e in new_events]
        lines.append(self.board(view, mirror.presence))
        self.shown_moves = list(view.get("moves") or [])
        self.shown_version = mirror.version
        self.write("\n".join(lines))

    def board(self, view: dict[str, Any], presence: list[bool]) -> str:
        game = view.get("game", "?")
        status = view.get("status", "?")
        lines = [f"== {self.ui.title(game)} · room {view.get('room')} · {status} "
                 f"· v{self.mirror.version} =="]
        if view.get("code"):
            lines.append(f"Join code: {view['code']}")
        me = view.get("you")
        to_act = view.get("to_act") or []
        lines.append("Seats:")
        left = _left_seats(view)
        for n, seat in enumerate(view.get("seats", [])):
            lines.append("  " + _seat_line(n, seat, me, presence, to_act, status, left))
        lines.append(_audience_line(me, self.mirror.watching))
        state = view.get("state")
        if state is not None:
            lines.append(_render(game, state, me))
        if status == "waiting":
            empty = [n for n, s in enumerate(view.get("seats", [])) if not _taken(s)]
            hint = "Waiting for players."
            if empty:
                shown = ", ".join(str(n + 1) for n in empty)
                hint += f" Empty seats: {shown} ('bot N' fills one)."
            if me is not None and not view["seats"][me].get("ready"):
                hint += " Type 'ready' when you are."
            lines.append(hint)
        elif status == "playing":
            names = ", ".join(_seat_name(view, n) for n in to_act) or "nobody"
            lines.append(f"To act: {names}" + _countdown(view.get("deadline")))
            clock = _clock_line(view, getattr(self.client, "clock_offset", 0.0))
            if clock:
                lines.append(clock)
        elif status == "finished":
            lines.append(_outcome_line(game, view))
            rematch = view.get("rematch")
            if rematch:
                lines.append(f"Rematch room {rematch} is open: type 'rematch' to join it.")
            elif me is not None:
                lines.append("Type 'rematch' to play again, or 'leave'.")
        moves = view.get("moves") or []
        if moves:
            lines.append("Your move — enter a number:" if me is not None and me in to_act
                         else "Not your turn; you may still — enter a number:")
            for n, move in enumerate(moves, 1):
                lines.append(f"  {n}) {_move_label(game, move, state)}")
        return "\n".join(lines)

    # -- commands ------------------------------------------------------------------------------

    async def commands(self) -> RoomMirror | None:
        """Read and run commands. Returns the next room to show (after a rematch), or None to go
        back to the menu; raises :class:`Quit` to exit."""
        while True:
            line = await self.ui.read()
            if line is None:
                raise Quit
            line = line.strip()
            if line and not self.client.online:
                self.write(f"Not connected: {line!r} is sent once the connection is back.")
            try:
                result = await self.command(line)
            except ServerError as exc:
                self.write(f"Refused: {exc.reason} ({exc.code})")
                if self.shown_moves:
                    self.write("Your moves are still the ones listed above.")
                continue
            except ConnectionLost as exc:
                self.write(f"Connection lost: {exc}; {line!r} was not sent.")
                continue
            except TimeoutError:
                self.write(f"Still not connected: {line!r} was not sent.")
                continue
            if not isinstance(result, _Stay):
                return result

    async def command(self, line: str) -> RoomMirror | None | _Stay:
        """Run one command: :data:`STAY` in this room, a room to move to, or None for the
        menu."""
        room = self.mirror.room
        if self.template is not None and line.startswith("{"):
            template, self.template = self.template, None
            await self._send_template(template, line)
            return STAY
        self.template = None
        word, _, rest = line.partition(" ")
        word = word.lower()
        rest = rest.strip()
        if not line:
            self.draw()
        elif word.isdigit():
            await self.pick(int(word), rest)
        elif word == "bot":
            seats = len(self.mirror.view.get("seats", []))
            if not rest.isdigit() or not 1 <= int(rest) <= seats:
                self.write(f"Usage: bot SEAT-NUMBER (1 to {seats})")
            else:
                await self.client.add_bot(room, int(rest) - 1)  # people count seats from 1
        elif word == "ready":
            await self.client.ready(room)
        elif word == "unready":
            await self.client.ready(room, False)
        elif word == "start":
            await self.client.start(room)
        elif word in ("chat", "say"):
            if rest:
                await self.client.chat(room, rest)
        elif word == "name":
            if not rest:
                self.write("Usage: name NEW-NAME")
            else:
                self.write(f"You are now called {await self.client.rename(rest)}.")
        elif word == "decks":
            state = self.mirror.view.get("state")
            text = _decks_text(self.mirror.view.get("game", ""), state) if state else None
            self.write(text or "This game has no ready-made decks to list here.")
        elif word == "resign":
            await self.client.resign(room)
        elif word == "rematch":
            new_room = await self.client.rematch(room)
            self.write(f"Rematch: moving to room {new_room}.")
            mirror = await self.client.join(new_room)
            self.ui._remember(new_room)
            return mirror
        elif word in ("leave", "back", "menu"):
            await self.client.leave(room)
            if self.mirror.view.get("status") == "playing":
                self.write("Left the room; your seat is kept: rejoin it from the menu ('mine').")
            return None
        elif word in ("quit", "exit"):
            raise Quit
        elif word in ("help", "?"):
            self.write(ROOM_HELP)
        else:
            self.write(f"Unknown command {line!r}; type 'help'.")
        return STAY

    async def pick(self, number: int, rest: str) -> None:
        moves = self.shown_moves
        if not moves:
            self.write("You have no move to make now.")
            return
        if not 1 <= number <= len(moves):
            self.write(f"Pick a move from 1 to {len(moves)}.")
            return
        move = moves[number - 1]
        if move.get("template"):
            if rest:
                await self._send_template(move, rest)
                return
            self.template = move
            shown = {k: v for k, v in move.items() if k != "template"}
            self.write(f"Enter the move as JSON, based on {json.dumps(shown)} "
                       "(the board above says what may be filled in):")
            return
        await self._move(move)

    async def _send_template(self, template: dict[str, Any], text: str) -> None:
        try:
            filled = json.loads(text)
        except json.JSONDecodeError as exc:
            self.write(f"Not valid JSON: {exc}.")
            return
        if not isinstance(filled, dict):
            self.write("The move must be a JSON object.")
            return
        move = {k: v for k, v in template.items() if k != "template"}
        move.update(filled)
        await self._move(move)

    async def _move(self, move: dict[str, Any]) -> None:
        shown = self.shown_moves
        self.shown_moves = []   # one move per drawn board: the next board lists the next ones
        try:
            await self.client.move(self.mirror.room, move, version=self.shown_version)
        except ServerError:
            # Refused: nothing changed unless the room moved on (then it is redrawn anyway),
            # so the listed moves are still the ones to pick from.
            if self.mirror.version == self.shown_version:
                self.shown_moves = shown
            raise


# -- formatting helpers -------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _option_value(option: dict[str, Any], value: Any) -> str:
    """A value as typed, with what it means where the game says (``0 = the rules' (...)``,
    ``0 = seat 1``); a duration as ``1m30s``."""
    if option.get("unit") == "ms" and isinstance(value, int) and not isinstance(value, bool):
        return show_duration(value)
    meaning = (option.get("value_labels") or {}).get(str(value))
    shown = _show(value)
    return f"{shown} = {meaning}" if meaning and meaning != shown else shown


def _describe_option(option: dict[str, Any]) -> str:
    name = option["name"]
    label = option.get("label") or name
    parts = [f"{label}" + (f" ({name})" if label != name else "")]
    parts.append(f" (default {_option_value(option, option.get('default'))}")
    if "choices" in option:
        parts.append("; one of " + ", ".join(_option_value(option, c) for c in option["choices"]))
    if option.get("unit") == "ms":
        parts.append(f"; {show_duration(option.get('min', 0))}..{show_duration(option['max'])}"
                     if "max" in option else "")
        parts.append("; a duration such as 90s, 1m30s, 1d")
    elif "min" in option or "max" in option:
        parts.append(f"; {option.get('min', '')}..{option.get('max', '')}")
    return "".join(parts) + f"): {option.get('help', '')}"


def option_applies(option: dict[str, Any], game: dict[str, Any], chosen: dict[str, Any]) -> bool:
    """Whether ``option`` changes anything under the options ``chosen`` so far (the others at
    their defaults): its ``when`` names the choices of other options it needs."""
    defaults = {o["name"]: o.get("default") for o in game.get("options", [])}
    return all(str(chosen.get(name, defaults.get(name))) in [str(c) for c in choices]
               for name, choices in (option.get("when") or {}).items())


def seat_range(game: dict[str, Any], options: dict[str, Any]) -> tuple[int, int]:
    """The seat counts ``game`` (a ``games`` entry) takes with ``options``; an option left out
    takes its default (PROTOCOL.md section 4, ``games``)."""
    low, high = int(game["min_seats"]), int(game["max_seats"])
    defaults = {o["name"]: o.get("default") for o in game.get("options", [])}
    for name, by_choice in (game.get("seats_by_option") or {}).items():
        chosen = _show_choice(options.get(name, defaults.get(name)))
        if chosen in by_choice:
            low, high = (max(low, by_choice[chosen][0]), min(high, by_choice[chosen][1]))
    return low, high


def _show_choice(value: Any) -> str:
    """A choice as ``seats_by_option`` keys it (str)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fit_seats(game: dict[str, Any], seats: int | None,
              options: dict[str, Any]) -> tuple[int, str]:
    """The seat count to create with, and a note for the user when it is not what was typed.

    No count: the least the options allow. A count the options (given or default) do not allow:
    an option the user left out is set to the one choice that allows it, if there is one
    (``create mandala 1`` is solo); otherwise a count the options fix wins over the typed one
    (``create mandala 2 mode=solo`` makes one seat)."""
    low, high = seat_range(game, options)
    if seats is None:
        return low, ""
    if low <= seats <= high:
        return seats, ""
    for name, by_choice in (game.get("seats_by_option") or {}).items():
        if name in options:
            continue
        fitting = [c for c, (a, b) in by_choice.items() if a <= seats <= b]
        option = next((o for o in game.get("options", []) if o["name"] == name), None)
        if len(fitting) == 1 and option is not None:
            value = next(c for c in option.get("choices", []) if _show_choice(c) == fitting[0])
            options[name] = value
            if seat_range(game, options)[0] <= seats <= seat_range(game, options)[1]:
                return seats, f"{seats} seat(s): {name}={_show(value)}."
            del options[name]
    fixed = low if low == high else min(max(seats, low), high)
    return fixed, f"{game['id']} with these options takes {low}-{high} seats: using {fixed}."


def _taken(seat: dict[str, Any]) -> bool:
    return bool(seat.get("player") or seat.get("bot"))


def _seat_name(view: dict[str, Any], n: int) -> str:
    seats = view.get("seats", [])
    name = seats[n].get("name") if 0 <= n < len(seats) else None
    mine = " (you)" if n == view.get("you") else ""
    return f"{render.seat_label(n)} {name or '-'}{mine}"


def _seat_line(n: int, seat: dict[str, Any], me: int | None, presence: list[bool],
               to_act: list[int], status: str, left: list[int] | tuple[()] = ()) -> str:
    if not _taken(seat):
        return f"{n + 1}  (empty)"
    marks = []
    online = presence[n] if n < len(presence) else None
    if seat.get("bot"):
        marks.append("bot")   # always there (presence may predate the bot taking the seat)
    elif online is not None:
        marks.append("online" if online else "away")
    if status == "waiting":
        marks.append("ready" if seat.get("ready") else "not ready")
    stand_in = seat.get("stand_in")
    if stand_in:
        why = "its clock ran out" if stand_in == "timeout" else "away"
        marks.append(f"the server's bot stands in ({why}); acting again takes the seat back")
    if n in left:
        marks.append("left the game")
    if n in to_act:
        marks.append("to act")
    you = " (you)" if n == me else ""
    return f"{n + 1}  {seat.get('name') or '-'}{you}  [{', '.join(marks)}]"


def _render(game: str, state: Any, seat: int | None) -> str:
    """The game's renderer, or the generic outline if it has none; if it fails to import or
    raises on this view, a one-line error above the outline, and the cause in the log."""
    if not isinstance(state, dict):
        return render.generic(state)
    try:
        return render.render(game, state, seat)
    except Exception as exc:  # a renderer out of step with its game must not end the session
        log.exception("renderer_failed game=%s", game)
        return f"(The {game} board cannot be drawn: {_short(exc)}; its raw outline follows.)\n" \
            + render.generic(state)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:120]


def _move_label(game: str, move: dict[str, Any], state: Any = None) -> str:
    if move.get("template"):
        shown = {k: v for k, v in move.items() if k != "template"}
        return f"{move.get('type', 'move')}: enter JSON (template {json.dumps(shown)})"
    try:
        return render.move_label(game, move, state if isinstance(state, dict) else None)
    except Exception:
        log.exception("move_label_failed game=%s", game)
        return json.dumps(move)


def _decks_text(game: str, state: Any) -> str | None:
    try:
        return render.decks_text(game, state) if isinstance(state, dict) else None
    except Exception as exc:
        log.exception("decks_text_failed game=%s", game)
        return f"(The decks cannot be listed: {_short(exc)}.)"


def _audience_line(me: int | None, watching: int) -> str:
    """Who is watching: a spectator is told they are one; players how many people watch."""
    others = f"{watching} {'person watches' if watching == 1 else 'people watch'}"
    if me is None:
        more = watching - 1
        extra = f" ({more} other{'s' if more != 1 else ''} too)" if more > 0 else ""
        return f"You are watching this room as a spectator{extra}: you see what everyone may."
    return f"Spectators: {others} this room." if watching else "No spectators."


def _left_seats(view: dict[str, Any]) -> list[int]:
    """Seats that left the game: the outcome's ``left``, or while a game goes on without them,
    a game view's own ``left`` list (Mantis)."""
    outcome = view.get("outcome")
    if isinstance(outcome, dict) and isinstance(outcome.get("left"), list):
        return [s for s in outcome["left"] if isinstance(s, int)]
    state = view.get("state")
    if isinstance(state, dict) and isinstance(state.get("left"), list):
        return [s for s in state["left"] if isinstance(s, int)]
    return []


def _clock_text(seconds: float) -> str:
    whole = int(max(0.0, seconds) + 0.999)  # 0.2 s left shows as 0:01, not 0:00
    hours, rest = divmod(whole, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:{'02' if hours else ''}d}:{rest % 60:02d}"


def _clock_line(view: dict[str, Any], offset: float, now: float | None = None) -> str:
    """The room's clocks as a countdown line: each seat's time left now (running ones counted
    down from the server's measurement at ``at``, with the server's clock ``offset`` seconds
    ahead of ours), the running ones marked. Empty when the room has no clock."""
    clock = view.get("clock")
    if not isinstance(clock, dict):
        return ""
    kind = clock.get("kind")
    limit = _clock_text(float(clock.get("clock_ms") or 0) / 1000)
    head = f"Clock: {limit} {'per turn' if kind == 'turn' else 'each'}"
    if kind == "fischer":
        head += f" +{float(clock.get('increment_ms') or 0) / 1000:g}s a move"
    head += f", on timeout: {clock.get('on_timeout')}"
    remaining, at = clock.get("remaining_ms"), clock.get("at")
    if not isinstance(remaining, list) or not isinstance(at, int | float):
        return head
    now = time.time() if now is None else now
    running = clock.get("running") or []
    parts = []
    for n, ms in enumerate(remaining):
        left = float(ms) / 1000
        if n in running:
            left -= now + offset - at
        parts.append(f"{_seat_name(view, n)} {_clock_text(left)}" + (" ⏳" if n in running else ""))
    return f"{head} · " + " · ".join(parts)


def _countdown(deadline: Any) -> str:
    if not isinstance(deadline, int | float):
        return ""
    left = max(0.0, deadline - time.time())
    return f" (next step in {left:.0f}s)"


def _outcome_line(game: str, view: dict[str, Any]) -> str:
    """The end banner: the game's own reading of its outcome where it has one (Mandala solo:
    an empty ``winners`` is Master Yoga's win), else read from ``winners``."""
    outcome = view.get("outcome") or {}
    state = view.get("state")
    try:
        own = render.outcome_text(game, state) if isinstance(state, dict) else None
    except Exception:
        log.exception("outcome_text_failed game=%s", game)
        own = None
    if own:
        return f"*** Game over: {own} ***"
    winners = outcome.get("winners") or []
    if winners:
        who = ", ".join(_seat_name(view, w) for w in winners)
        head = f"{who} {'wins' if len(winners) == 1 else 'win'}"
    else:
        head = "a draw, nobody wins"
    scores = outcome.get("scores")
    tail = f" · scores {', '.join(map(str, scores))}" if scores else ""
    reason = outcome.get("reason")
    return f"*** Game over: {head}{tail}" + (f" ({reason})" if reason else "") + " ***"


def _event_line(event: dict[str, Any], view: dict[str, Any]) -> str:
    kind = event.get("type", "event")
    seat = event.get("seat")
    who = _seat_name(view, seat) if isinstance(seat, int) else ""
    if kind == "joined":
        return f"{event.get('name')} sat at {_seat_label(seat)}"
    if kind == "left" and "reason" in event:
        why = "resigned" if event["reason"] == "resignation" else "ran out of time"
        return f"{who} {why} and left the game"
    if kind == "left":
        return f"{event.get('name')} left {_seat_label(seat)}"
    if kind == "stand_in":
        why = "ran out of time" if event.get("reason") == "timeout" else "is away"
        return f"{who} {why}: the server's bot plays for them until they act again"
    if kind == "took_back":
        return f"{who} plays for themselves again"
    if kind == "renamed":
        return f"{_seat_label(seat)} is now called {event.get('name')}"
    if kind == "ready":
        return f"{who} is {'ready' if event.get('ready') else 'not ready'}"
    if kind == "bot_added":
        return f"a bot took {_seat_label(seat)}"
    if kind == "started":
        return "the game starts"
    if kind == "rematch":
        return f"rematch room {event.get('room')} opened"
    own = _game_event_line(event, view)
    if own:
        return own
    details = ", ".join(f"{k}={_show(v)}" for k, v in event.items()
                        if k not in ("type", "seat") and v is not None)
    return " ".join(part for part in (who + ":" if who else "", kind, details) if part)


def _seat_label(seat: Any) -> str:
    return render.seat_label(seat) if isinstance(seat, int) else f"seat {seat}"


def _game_event_line(event: dict[str, Any], view: dict[str, Any]) -> str | None:
    """The game's own words for one of its events, where its renderer has them."""
    state = view.get("state")
    if not isinstance(state, dict):
        return None
    try:
        return render.describe(str(view.get("game", "")), event, state)
    except Exception:
        log.exception("describe_failed game=%s", view.get("game"))
        return None


# -- entry point --------------------------------------------------------------------------------


async def play(url: str, *, name: str | None, token_file: Path, read: ReadLine,
               write: Write) -> int:
    """Connect (reusing the saved token), run the UI, disconnect. Returns an exit code.
    Problems worth a developer's look (a renderer that fails) are logged to ``terminal.log``
    beside the token file, unless logging is set up already."""
    if not logging.getLogger().handlers:
        with contextlib.suppress(OSError):
            token_file.parent.mkdir(parents=True, exist_ok=True)
            logging.basicConfig(filename=token_file.parent / "terminal.log", level=logging.INFO,
                                format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        client = await connect_with_token_file(url, name, token_file, write)
    except (TimeoutError, OSError, ConnectionLost, ServerError) as exc:
        write(f"Cannot connect to {url}: {exc}")
        return 1
    try:
        return await Terminal(client, read, write).run()
    finally:
        await client.close()
