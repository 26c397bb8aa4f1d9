"""The terminal client: a line-based UI over :class:`playhall_client.Client`.

The UI never touches stdin or stdout itself. It takes ``read`` (an async function returning the
next input line, or ``None`` at end of input) and ``write`` (a function printing one block of
text), so tests drive it with scripted lines and read what it wrote. :func:`stdin_reader` gives
a ``read`` over the real stdin that does not block the event loop.

Outside a room it shows a main menu (games, open rooms, create, join, rejoin, quit). Inside a
room it redraws the room on every change of the mirror (board from the game's renderer in
:mod:`playhall_client.render`, seats with presence and ready marks, whose turn, the legal moves
numbered), prints game events and chat lines as they come, and reads commands: a number picks
a legal move, and ``bot N``, ``ready``, ``start``, ``chat TEXT``, ``rematch``, ``leave``,
``quit``, ``help``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from playhall_client import render
from playhall_client.client import Client, ConnectionLost, RoomMirror, ServerError

ReadLine = Callable[[], Awaitable[str | None]]
Write = Callable[[str], None]

DEFAULT_URL = "ws://127.0.0.1:8765/"

MENU = """\
Main menu:
  1) games    list the games
  2) rooms    list open rooms
  3) create   create a room   (or: create GAME SEATS [name=value ...])
  4) join     join a room by room id or join code   (or: join ID-OR-CODE)
  5) mine     rejoin one of my rooms
  6) quit"""

ROOM_HELP = """\
In a room:
  N            play legal move number N (a move marked "enter JSON" then asks for its fields)
  bot N        fill seat N with a server bot
  ready        say you are ready (unready: take it back)
  start        start now (the room's creator; every seat must be filled)
  chat TEXT    say something to the room
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
    if kind == "int":
        return int(text.strip())
    return text.strip()


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

    async def run(self) -> int:
        """The whole session: menu and rooms until ``quit`` or end of input. Returns 0."""
        self._pump = asyncio.create_task(self._pump_pushes())
        try:
            self.write(f"Connected to {self.client.url} as {self.client.name} "
                       f"(player {self.client.player}).")
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
            if kind == "chat":
                screen = self.screen
                where = "" if screen is not None and screen.mirror.room == message.get("room") \
                    else f" in {message.get('room')}"
                self.write(f"[chat{where}] {message.get('name')}: {message.get('text')}")
            elif kind == "notice":
                self.write(f"[server] {message.get('text') or message.get('reason') or message}")

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
            elif choice in ("5", "mine", "rejoin"):
                mirror = await self.rejoin()
                if mirror is not None:
                    await self.in_room(mirror)
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
        await self._games()
        rooms = await self.client.list_rooms()
        if not rooms:
            self.write("No open rooms. Create one!")
            return
        lines = ["Open rooms (join with: join ROOM-ID):"]
        for room in rooms:
            players = ", ".join(p or "-" for p in room.get("players", []))
            lines.append(f"  {room['room']}  {self.title(room['game']):<12} {room['status']:<8} "
                         f"{room['taken']}/{room['seats']} seats  [{players}]")
        self.write("\n".join(lines))

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
        low, high = game["min_seats"], game["max_seats"]
        answer = await self.ask(f"Seats ({low}-{high}) [{low}]:")
        try:
            seats = int(answer) if answer else low
        except ValueError:
            self.write(f"Not a number: {answer!r}.")
            return None
        options: dict[str, Any] = {}
        for option in game.get("options", []):
            while True:
                answer = await self.ask(f"Option {_describe_option(option)}\n"
                                        f"{option['name']} [{_show(option['default'])}]:")
                if not answer:
                    break
                try:
                    options[option["name"]] = parse_value(answer, option)
                    break
                except ValueError as exc:
                    self.write(f"Invalid value: {exc}.")
        answer = await self.ask("Private room, joined by code only (y/N)?")
        private = answer.lower() in ("y", "yes")
        return await self._create(game["id"], seats, options, private)

    async def quick_create(self, words: list[str]) -> RoomMirror | None:
        """``create GAME SEATS [name=value ...] [private]``."""
        games = {g["id"]: g for g in await self._games()}
        game = games.get(words[0])
        if game is None:
            self.write(f"No game {words[0]!r}; games: {', '.join(games)}.")
            return None
        try:
            seats = int(words[1]) if len(words) > 1 else int(game["min_seats"])
        except ValueError:
            self.write(f"Not a seat count: {words[1]!r}.")
            return None
        known = {o["name"]: o for o in game.get("options", [])}
        options: dict[str, Any] = {}
        private = False
        for word in words[2:]:
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
        return await self._create(game["id"], seats, options, private)

    async def _create(self, game: str, seats: int, options: dict[str, Any],
                      private: bool) -> RoomMirror:
        mirror = await self.client.create(game, seats, options=options, private=private)
        self._remember(mirror.room)
        code = mirror.view.get("code")
        self.write(f"Created room {mirror.room}" + (f" (join code {code})" if code else "") + ".")
        return mirror

    async def join(self, target: str) -> RoomMirror:
        """Join by room id, or by join code when no room has that id."""
        try:
            mirror = await self.client.join(target)
        except ServerError as exc:
            if exc.code != "no_such_room":
                raise
            mirror = await self.client.join(code=target)  # the server reads any case
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
        self.drawn: tuple[int, tuple[bool, ...]] | None = None
        self.events_seen = len(mirror.events)
        self.shown_moves: list[dict[str, Any]] = []
        self.shown_version = -1
        self.template: dict[str, Any] | None = None
        self.stopped = False

    def _key(self, mirror: RoomMirror) -> tuple[int, tuple[bool, ...]]:
        return (mirror.version, tuple(mirror.presence))

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
        for n, seat in enumerate(view.get("seats", [])):
            lines.append("  " + _seat_line(n, seat, me, presence, to_act, status))
        state = view.get("state")
        if state is not None:
            lines.append(_render(game, state, me))
        if status == "waiting":
            empty = [n for n, s in enumerate(view.get("seats", [])) if not _taken(s)]
            hint = "Waiting for players."
            if empty:
                hint += f" Empty seats: {', '.join(map(str, empty))} ('bot N' fills one)."
            if me is not None and not view["seats"][me].get("ready"):
                hint += " Type 'ready' when you are."
            lines.append(hint)
        elif status == "playing":
            names = ", ".join(_seat_name(view, n) for n in to_act) or "nobody"
            lines.append(f"To act: {names}" + _countdown(view.get("deadline")))
        elif status == "finished":
            lines.append(_outcome_line(view))
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
                lines.append(f"  {n}) {_move_label(game, move)}")
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
            try:
                result = await self.command(line)
            except ServerError as exc:
                self.write(f"Refused: {exc.reason} ({exc.code})")
                continue
            except ConnectionLost as exc:
                self.write(f"Connection lost: {exc}")
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
            if not rest.isdigit():
                self.write("Usage: bot SEAT-NUMBER")
            else:
                await self.client.add_bot(room, int(rest))
        elif word == "ready":
            await self.client.ready(room)
        elif word == "unready":
            await self.client.ready(room, False)
        elif word == "start":
            await self.client.start(room)
        elif word in ("chat", "say"):
            if rest:
                await self.client.chat(room, rest)
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
        self.shown_moves = []   # one move per drawn board: the next board lists the next ones
        await self.client.move(self.mirror.room, move, version=self.shown_version)


# -- formatting helpers -------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _describe_option(option: dict[str, Any]) -> str:
    parts = [f"{option['name']} (default {_show(option.get('default'))}"]
    if "choices" in option:
        parts.append("; one of " + ", ".join(_show(c) for c in option["choices"]))
    if "min" in option or "max" in option:
        parts.append(f"; {option.get('min', '')}..{option.get('max', '')}")
    return "".join(parts) + f"): {option.get('help', '')}"


def _taken(seat: dict[str, Any]) -> bool:
    return bool(seat.get("player") or seat.get("bot"))


def _seat_name(view: dict[str, Any], n: int) -> str:
    seats = view.get("seats", [])
    name = seats[n].get("name") if 0 <= n < len(seats) else None
    mine = " (you)" if n == view.get("you") else ""
    return f"seat {n} {name or '-'}{mine}"


def _seat_line(n: int, seat: dict[str, Any], me: int | None, presence: list[bool],
               to_act: list[int], status: str) -> str:
    if not _taken(seat):
        return f"{n}  (empty)"
    marks = []
    online = presence[n] if n < len(presence) else None
    if seat.get("bot"):
        marks.append("bot")   # always there (presence may predate the bot taking the seat)
    elif online is not None:
        marks.append("online" if online else "away")
    if status == "waiting":
        marks.append("ready" if seat.get("ready") else "not ready")
    if n in to_act:
        marks.append("to act")
    you = " (you)" if n == me else ""
    return f"{n}  {seat.get('name') or '-'}{you}  [{', '.join(marks)}]"


def _render(game: str, state: Any, seat: int | None) -> str:
    """The game's renderer, or the generic outline if it has none or fails on this view."""
    if not isinstance(state, dict):
        return render.generic(state)
    try:
        return render.render(game, state, seat)
    except Exception:  # a renderer out of step with its game must not end the session
        return render.generic(state)


def _move_label(game: str, move: dict[str, Any]) -> str:
    if move.get("template"):
        shown = {k: v for k, v in move.items() if k != "template"}
        return f"{move.get('type', 'move')}: enter JSON (template {json.dumps(shown)})"
    try:
        return render.move_label(game, move)
    except Exception:
        return json.dumps(move)


def _countdown(deadline: Any) -> str:
    if not isinstance(deadline, int | float):
        return ""
    left = max(0.0, deadline - time.time())
    return f" (next step in {left:.0f}s)"


def _outcome_line(view: dict[str, Any]) -> str:
    outcome = view.get("outcome") or {}
    winners = outcome.get("winners") or []
    if winners:
        who = ", ".join(_seat_name(view, w) for w in winners)
        head = f"{who} {'wins' if len(winners) == 1 else 'win'}"
    else:
        head = "nobody wins"
    scores = outcome.get("scores")
    tail = f" · scores {', '.join(map(str, scores))}" if scores else ""
    reason = outcome.get("reason")
    return f"*** Game over: {head}{tail}" + (f" ({reason})" if reason else "") + " ***"


def _event_line(event: dict[str, Any], view: dict[str, Any]) -> str:
    kind = event.get("type", "event")
    seat = event.get("seat")
    who = _seat_name(view, seat) if isinstance(seat, int) else ""
    if kind == "joined":
        return f"{event.get('name')} sat at seat {seat}"
    if kind == "left":
        return f"{event.get('name')} left seat {seat}"
    if kind == "ready":
        return f"{who} is {'ready' if event.get('ready') else 'not ready'}"
    if kind == "bot_added":
        return f"a bot took seat {seat}"
    if kind == "started":
        return "the game starts"
    if kind == "rematch":
        return f"rematch room {event.get('room')} opened"
    details = ", ".join(f"{k}={_show(v)}" for k, v in event.items()
                        if k not in ("type", "seat") and v is not None)
    return " ".join(part for part in (who + ":" if who else "", kind, details) if part)


# -- entry point --------------------------------------------------------------------------------


async def play(url: str, *, name: str | None, token_file: Path, read: ReadLine,
               write: Write) -> int:
    """Connect (reusing the saved token), run the UI, disconnect. Returns an exit code."""
    try:
        client = await connect_with_token_file(url, name, token_file, write)
    except (TimeoutError, OSError, ConnectionLost, ServerError) as exc:
        write(f"Cannot connect to {url}: {exc}")
        return 1
    try:
        return await Terminal(client, read, write).run()
    finally:
        await client.close()
