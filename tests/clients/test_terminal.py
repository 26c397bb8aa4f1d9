"""The terminal client against a real server over real websockets, driven by scripted lines.

Synchronisation is on the client's output: the script waits until the text it expects has been
written, then types the next line.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from playhall.catalog import all_games, get_game
from playhall.rooms.views import game_entry
from playhall_client import Client
from playhall_client.terminal import (
    RoomScreen,
    Terminal,
    _clock_line,
    _event_line,
    _left_seats,
    _move_label,
    _seat_line,
    option_applies,
    parse_duration,
    parse_value,
    play,
)
from tests.server.conftest import redis_url, server, url  # noqa: F401

TIMEOUT = 30.0


class Console:
    """Scripted input lines and captured output, with waits on what was written."""

    def __init__(self) -> None:
        self.text = ""
        self.pos = 0
        self._written = asyncio.Event()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()

    def write(self, text: str) -> None:
        self.text += text + "\n"
        self._written.set()

    async def read(self) -> str | None:
        return await self._lines.get()

    def type(self, *lines: str | None) -> None:
        for line in lines:
            self._lines.put_nowait(line)

    async def expect(self, *needles: str, timeout: float = TIMEOUT) -> str:
        """Wait until one of ``needles`` is written after the last match; return which one."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            hits = [(at, n) for n in needles if (at := self.text.find(n, self.pos)) >= 0]
            if hits:
                at, needle = min(hits)
                self.pos = at + len(needle)
                return needle
            self._written.clear()
            try:
                await asyncio.wait_for(self._written.wait(), end - loop.time())
            except TimeoutError:
                raise AssertionError(f"none of {needles} in output:\n{self.text[-3000:]}") from None

    async def expect_all(self, *needles: str) -> None:
        """Wait until every one of ``needles`` is written after the last match, in any order
        (what one request's reply and the pushes it causes print may come either way round)."""
        start = end = self.pos
        for needle in needles:
            self.pos = start
            await self.expect(needle)
            end = max(end, self.pos)
        self.pos = end


def run_play(console: Console, url: str, token_file: Path,  # noqa: F811
             name: str = "alice") -> asyncio.Task[int]:
    return asyncio.create_task(play(url, name=name, token_file=token_file, read=console.read,
                                    write=console.write))


def asked_at_defaults(game: dict[str, Any]) -> list[dict[str, Any]]:
    """The options the create menu asks when each is left at its default (Enter)."""
    return [o for o in game["options"] if option_applies(o, game, {})]


def player_id(text: str) -> str:
    found = re.search(r"\(player (\w+)\)", text)
    assert found, text
    return found.group(1)


async def test_terminal_plays_a_whole_mantis_game_against_a_server_bot(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    console = Console()
    mantis = get_game("mantis")
    assert mantis is not None
    # Enter keeps each option's default: the game's own, then the clock's (every game's); the
    # clock's settings are not asked when there is no clock (their `when`).
    defaults = [""] * len(asked_at_defaults(game_entry(mantis)))
    console.type("create", "mantis", "2", *defaults, "n")
    task = run_play(console, url, tmp_path / "token")
    await console.expect("Created room")
    # Seats are numbered from 1 for people: the empty one is seat 2 (the wire's seat 1).
    await console.expect("Waiting for players. Empty seats: 2")
    console.type("bot 2")
    await console.expect("a bot took seat 2")
    console.type("chat good luck")
    await console.expect("[chat] alice: good luck")
    console.type("ready")
    await console.expect("the game starts")
    moves = 0
    while True:
        seen = await console.expect("Your move — enter a number:", "*** Game over")
        if seen == "*** Game over":
            break
        console.type("1")
        moves += 1
    console.type("leave", "quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0
    out = console.text
    assert moves > 0
    assert "Mantis — first to 15 points" in out           # the game's own board renderer
    assert "tank" in out and "Seats:" in out
    assert "1) Score: flip the top card for your own tank" in out
    final = out[out.rindex("*** Game over"):]
    assert re.match(r"\*\*\* Game over: seat [12] .+ wins · scores \d+, \d+ \(\w+\)",
                    final), final
    assert "Refused" not in out
    assert out.rstrip().endswith("Bye.")
    # Its "ready" contributed 16 random bytes to the deal: the finished room's record says so.
    room = re.search(r"Created room (\w+)", out)
    assert room is not None
    reader = await Client.connect(url, name="reader")
    try:
        record = await reader.record(room.group(1))
    finally:
        await reader.close()
    mine, bots = record["fair"]["contributions"]
    assert len(bytes.fromhex(mine)) == 16 and bots is None


async def test_every_game_starts_and_draws_in_the_terminal(url: str, tmp_path: Path) -> None:  # noqa: F811
    console = Console()
    task = run_play(console, url, tmp_path / "token")
    for game in all_games().values():
        seats, _ = game.seat_range(game.normalize_options({}))  # the default mode's smallest
        console.type(f"create {game.id} {seats}")
        await console.expect(f"== {game.title} · room")
        if seats > 1:  # a solo room starts as its seat is taken; others once bots fill them
            console.type(*(f"bot {seat}" for seat in range(2, seats + 1)), "ready")
            await console.expect("the game starts")
        await console.expect(f"== {game.title} · room")
        await console.expect("To act:", "*** Game over")
        console.type("leave")
        await console.expect("Main menu:")
    console.type("quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0
    assert "Refused" not in console.text


async def test_token_file_gives_the_same_player_and_its_rooms_back(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    token_file = tmp_path / "config" / "token"
    first = Console()
    first.type("create mantis 3", None)            # quick create, then end of input
    assert await asyncio.wait_for(run_play(first, url, token_file), TIMEOUT) == 0
    room = re.search(r"Created room (\S+)\.", first.text)
    assert room, first.text
    assert token_file.exists()
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600

    second = Console()
    task = run_play(second, url, token_file)
    await second.expect("You have 1 room(s)")
    second.type("mine")
    await second.expect(f"1) {room.group(1)}")
    second.type("1")
    await second.expect(f"room {room.group(1)} · waiting")
    await second.expect("1  alice (you)")
    second.type("quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0
    assert player_id(second.text) == player_id(first.text)

    other = Console()
    other.type("quit")
    assert await run_play(other, url, tmp_path / "elsewhere") == 0
    assert player_id(other.text) != player_id(first.text)


async def test_a_refused_token_starts_a_new_identity(url: str, tmp_path: Path) -> None:  # noqa: F811
    token_file = tmp_path / "token"
    token_file.write_text("0123456789ab.not-the-secret\n")
    console = Console()
    console.type("quit")
    assert await run_play(console, url, token_file) == 0
    assert "was refused" in console.text
    saved = token_file.read_text().strip()
    assert saved.startswith(player_id(console.text) + ".")


async def test_join_by_code_ready_start_and_refusals(url: str, tmp_path: Path) -> None:  # noqa: F811
    host = await Client.connect(url, name="host")
    try:
        mirror = await host.create("mantis", 2, private=True)
        code = mirror.view["code"]
        console = Console()
        console.type(f"join {code.lower()}")
        task = run_play(console, url, tmp_path / "token", name="guest")
        await console.expect(f"room {mirror.room} · waiting")
        await console.expect("2  guest (you)")
        console.type("start")                       # only the creator may start
        await console.expect("Refused:")
        await console.expect("(not_creator)")
        console.type("5")                           # no moves before the game
        await console.expect("You have no move to make now.")
        console.type("frobnicate")
        await console.expect("Unknown command 'frobnicate'")
        console.type("name  Gwen ")                 # a rename shows on the seat at once
        await console.expect_all(
            "seat 2 is now called Gwen", "2  Gwen (you)", "You are now called Gwen."
        )
        await mirror.wait(lambda m: m.view["seats"][1]["name"] == "Gwen")
        await host.ready(mirror.room)
        console.type("ready")
        await console.expect("the game starts")
        await console.expect("== Mantis")
        console.type("quit")
        assert await asyncio.wait_for(task, TIMEOUT) == 0
    finally:
        await host.close()


async def test_play_command_reads_stdin_in_a_real_process(url: str, tmp_path: Path) -> None:  # noqa: F811
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "playhall.cli", "play", "--url", url, "--name", "piper",
        "--token-file", str(tmp_path / "token"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
    out, _ = await asyncio.wait_for(proc.communicate(b"games\nrooms\n"), TIMEOUT)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "as piper" in text
    assert "mantis" in text and "Mantis" in text
    assert text.rstrip().endswith("Bye.")
    assert (tmp_path / "token").exists()


# -- without a server: templates and option values ---------------------------------------------


class FakeClient:
    """Just enough of :class:`Client` for a room screen: records the moves it is asked for."""

    def __init__(self) -> None:
        self.welcome: dict[str, Any] = {"rooms": []}
        self.url = "ws://test/"
        self.name = "t"
        self.player = "p"
        self.sent: list[tuple[dict[str, Any], int | None]] = []

    async def move(self, room: str, move: dict[str, Any], *, version: int | None = None) -> None:
        self.sent.append((move, version))


async def test_a_template_move_asks_for_json_and_sends_it_filled() -> None:
    from playhall_client.client import RoomMirror

    template = {"type": "submit_deck", "template": True, "cards": [], "deck_type": ""}
    mirror = RoomMirror("r1", version=7, view={
        "room": "r1", "game": "nogame", "status": "playing", "seats": [], "you": 0,
        "to_act": [0], "moves": [{"type": "pick_deck", "deck": 1}, template], "state": {"x": 1}})
    console = Console()
    fake = FakeClient()
    screen = RoomScreen(Terminal(fake, console.read, console.write), mirror)  # type: ignore[arg-type]
    screen.draw()
    assert "2) submit_deck: enter JSON" in console.text
    assert "1) type=pick_deck deck=1" in console.text   # the generic move label
    await screen.command("2")
    assert "Enter the move as JSON" in console.text
    await screen.command('{"cards": [1, 2], "deck_type": "custom"}')
    assert fake.sent == [({"type": "submit_deck", "cards": [1, 2], "deck_type": "custom"}, 7)]
    screen.draw()
    await screen.command('2 {"cards": [3]}')        # the same, on one line
    assert fake.sent[-1] == ({"type": "submit_deck", "cards": [3], "deck_type": ""}, 7)
    screen.draw()
    await screen.command("2")
    await screen.command("{not json")
    assert "Not valid JSON" in console.text
    assert len(fake.sent) == 2


def test_option_values_follow_the_option_kind() -> None:
    assert parse_value("yes", {"kind": "bool"}) is True
    assert parse_value("n", {"kind": "bool"}) is False
    assert parse_value(" 12 ", {"kind": "int"}) == 12
    assert parse_value("A", {"kind": "str"}) == "A"
    assert _move_label("nogame", {"type": "x", "template": True}).startswith("x: enter JSON")


# -- what players and spectators are told -------------------------------------------------------


def screen_for(view: dict[str, Any], *, version: int = 1, watching: int = 0,
               fake: FakeClient | None = None) -> tuple[RoomScreen, Console]:
    from playhall_client.client import RoomMirror

    mirror = RoomMirror(view["room"], version=version, view=view, watching=watching)
    console = Console()
    terminal = Terminal(fake or FakeClient(), console.read, console.write)  # type: ignore[arg-type]
    return RoomScreen(terminal, mirror), console


def room_view(**fields: Any) -> dict[str, Any]:
    view = {"room": "r1", "game": "nogame", "status": "playing", "outcome": None,
            "seats": [{"player": "p", "name": "alice", "bot": False, "ready": True},
                      {"player": None, "name": "Bot 1", "bot": True, "ready": True}],
            "you": 0, "to_act": [0], "moves": [{"type": "a"}, {"type": "b"}], "state": {"x": 1}}
    view.update(fields)
    return view


class RefusingClient(FakeClient):
    """Refuses the next move with the given code (as the server would), then sends them."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse: str | None = None

    async def move(self, room: str, move: dict[str, Any], *, version: int | None = None) -> None:
        from playhall_client import ServerError

        if self.refuse is not None:
            code, self.refuse = self.refuse, None
            raise ServerError({"t": "error", "code": code, "reason": "no", "version": version})
        await super().move(room, move, version=version)


async def test_after_a_refused_move_the_listed_moves_still_count() -> None:
    from playhall_client import ServerError

    fake = RefusingClient()
    screen, console = screen_for(room_view(), version=4, fake=fake)
    screen.draw()
    fake.refuse = "illegal_move"
    try:
        await screen.command("2")
    except ServerError as exc:
        assert exc.code == "illegal_move"
    else:
        raise AssertionError("the refusal was swallowed")
    await screen.command("1")                      # still the player's turn: the list stands
    assert "You have no move to make now." not in console.text
    assert fake.sent == [({"type": "a"}, 4)]


def test_a_spectator_is_told_so_and_players_are_told_who_watches() -> None:
    screen, console = screen_for(room_view(you=None, moves=[]), watching=2)
    screen.draw()
    assert "You are watching this room as a spectator (1 other too)" in console.text
    screen, console = screen_for(room_view(), watching=1)
    screen.draw()
    assert "Spectators: 1 person watches this room." in console.text
    screen, console = screen_for(room_view())
    screen.draw()
    assert "No spectators." in console.text


def test_the_mandala_solo_banner_names_master_yoga_as_the_winner() -> None:
    mandala = get_game("mandala")
    assert mandala is not None
    state = mandala.setup(1, mandala.normalize_options({"mode": "solo"}), 3)
    state["phase"], state["end"], state["resolution"] = "over", "final_mandala", None
    outcome = mandala.outcome(state)
    assert outcome is not None and outcome.winners == []      # a tie at 0 is Yoga's win
    view = room_view(game="mandala", status="finished", to_act=[], moves=[],
                     seats=[{"player": "p", "name": "alice", "bot": False, "ready": True}],
                     outcome={"winners": [], "scores": list(outcome.scores),
                              "reason": outcome.reason},
                     state=mandala.view(state, 0))
    screen, console = screen_for(view)
    screen.draw()
    banner = console.text[console.text.index("*** Game over"):]
    assert banner.startswith("*** Game over: Master Yoga won (final_mandala); scores: ")
    assert "nobody" not in banner
    # A game without its own reading: an empty winners list is a draw.
    screen, console = screen_for(room_view(status="finished", to_act=[], moves=[], outcome={
        "winners": [], "scores": [3, 3], "reason": "tie"}))
    screen.draw()
    assert "*** Game over: a draw, nobody wins · scores 3, 3 (tie) ***" in console.text


def test_a_failing_renderer_shows_an_error_line_and_the_outline_and_logs_why(
        monkeypatch: Any, caplog: Any) -> None:
    from playhall_client.render import mantis

    def broken(view: dict[str, Any], seat: int | None) -> str:
        raise KeyError("tanks")

    monkeypatch.setattr(mantis, "render", broken)
    screen, console = screen_for(room_view(game="mantis", state={"turn": 0, "tanks": []}))
    with caplog.at_level("ERROR", logger="playhall_client.terminal"):
        screen.draw()
    assert "(The mantis board cannot be drawn: KeyError: 'tanks'; its raw outline follows.)" \
        in console.text
    assert "turn: 0" in console.text                           # the generic outline
    assert any(r.exc_info and r.exc_info[0] is KeyError for r in caplog.records)


def test_a_renderer_that_cannot_be_imported_says_so(monkeypatch: Any) -> None:
    import importlib

    from playhall_client import render

    real = importlib.import_module

    def importing(name: str) -> Any:
        if name == "playhall_client.render.mantis":  # the module is there, a dependency is not
            raise ModuleNotFoundError("No module named 'colourlib'", name="colourlib")
        return real(name)

    monkeypatch.setattr(render.importlib, "import_module", importing)
    screen, console = screen_for(room_view(game="mantis", state={"turn": 0}))
    screen.draw()
    assert "(The mantis board cannot be drawn: RendererError" in console.text
    assert render._module("nogame") is None                   # no renderer at all is fine


def test_math_card_moves_are_labelled_with_card_names_and_decks_listed() -> None:
    from playhall_client.render import math_card as labels

    game = get_game("math_card")
    assert game is not None
    state = game.setup(2, {}, 1)
    view = game.view(state, 0)
    view["lanes"][0][0] = {"card": "000006", "owner": 0}
    view["areas"]["right"] = [{"card": "000009", "owner": 1}]
    calc = {"type": "function_calc", "card": "100001", "input": [0, 0], "output": ["right", 0]}
    assert labels.move_label(calc, view) == \
        "calculate with Doubling: Number Three (lane 0 slot 0) -> SIX (right area #1)"
    assert labels.move_label({"type": "choose", "card": "000004"}, view) == "choose Number Zero"
    assert "000006" not in labels.move_label({"type": "set_value", "card": "000006", "lane": 1},
                                             view)
    text = labels.decks_text(view)
    assert text is not None and text.startswith("Ready-made decks:")
    for name, cards in view["ready_decks"].items():
        assert f"  {name} ({len(cards)} cards): " in text
    assert "Number Zero" in text


def test_seat_counts_follow_the_options_that_fix_them() -> None:
    from playhall_client.terminal import fit_seats, seat_range

    mandala = get_game("mandala")
    assert mandala is not None
    described = mandala.describe()
    assert seat_range(described, {}) == (2, 2)                  # the default mode: standard
    assert fit_seats(described, None, {}) == (2, "")
    options: dict[str, Any] = {}
    seats, note = fit_seats(described, 1, options)              # create mandala 1
    assert (seats, options) == (1, {"mode": "solo"}) and "mode=solo" in note
    options = {"mode": "solo"}
    seats, note = fit_seats(described, 2, options)              # create mandala 2 mode=solo
    assert (seats, options) == (1, {"mode": "solo"}) and "using 1" in note
    mantis = get_game("mantis")
    assert mantis is not None
    assert fit_seats(mantis.describe(), 5, {}) == (5, "")


async def test_mandala_rooms_are_created_with_the_seats_of_their_mode(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    console = Console()
    task = run_play(console, url, tmp_path / "token")
    for line, seats in (("create mandala", 2), ("create mandala 1", 1),
                        ("create mandala 2 mode=solo", 1)):
        console.type(line)
        await console.expect("Created room")
        await console.expect("Seats:")
        console.type("leave")
        await console.expect("Main menu:")
        assert seats == 1 or "2  (empty)" in console.text
    mandala = get_game("mandala")
    assert mandala is not None
    # The menu, every default: a two-player Mandala is not asked Master Yoga's settings, and a
    # room without a clock not the clock's (the spectator delay applies to every room).
    asked = asked_at_defaults(game_entry(mandala))
    assert [o["name"] for o in asked] == ["mode", "clock", "spectator_delay"]
    console.type("create", "mandala", *[""] * len(asked), "n")
    await console.expect("Seats: 2.")
    await console.expect("Created room")
    console.type("quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0
    assert "Refused" not in console.text


async def test_the_lobby_is_followed_live(url: str, tmp_path: Path) -> None:  # noqa: F811
    console = Console()
    task = run_play(console, url, tmp_path / "token")
    console.type("rooms")
    await console.expect("Open rooms", "No open rooms")
    other = await Client.connect(url, name="bob")
    try:
        mirror = await other.create("mantis", 3)
        await console.expect(f"[lobby] new: {mirror.room}")
        await other.leave(mirror.room)                          # nobody left: it is unlisted
        await console.expect(f"[lobby] gone: {mirror.room}")
    finally:
        await other.close()
    console.type("quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0


async def test_a_dropped_connection_is_announced_and_its_return_too(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    client = await Client.connect(url, name="dropped")
    console = Console()
    task = asyncio.create_task(Terminal(client, console.read, console.write).run())
    try:
        console.type("create mantis 2")
        await console.expect("Created room")
        assert client._ws is not None
        await client._ws.close(1012)                           # as a restarting server does
        await console.expect("Connection lost — reconnecting…")
        await console.expect("Connection back")
        await console.expect("== Mantis")                      # redrawn once back
        assert console.text.count("Connection lost") == 1
        console.type("quit")
        assert await asyncio.wait_for(task, TIMEOUT) == 0
    finally:
        await client.close()


async def test_a_refused_reconnect_is_said_once_per_outage(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    client = await Client.connect(url, name="patient")
    console = Console()
    terminal = Terminal(client, console.read, console.write)
    try:
        refused = {"t": "connection", "state": "retrying", "code": "store_failed",
                   "reason": "Redis is unreachable; retry shortly"}
        for notice in ({"t": "connection", "state": "lost"}, refused, refused, refused,
                       {"t": "connection", "state": "back"}, {"t": "connection", "state": "lost"},
                       refused):
            terminal._connection(notice)
        assert console.text.count("cannot take us back yet (Redis is unreachable") == 2
        assert console.text.count("Connection lost") == 2
    finally:
        await client.close()


async def test_players_see_a_spectator_arrive(url: str, tmp_path: Path) -> None:  # noqa: F811
    console = Console()
    task = run_play(console, url, tmp_path / "token")
    console.type("create mantis 2")
    created = await console.expect("No spectators.")
    assert created
    room = re.search(r"Created room (\S+)\.", console.text)
    assert room, console.text
    watcher = await Client.connect(url, name="watcher")
    try:
        await watcher.join(room.group(1), watch=True)
        await console.expect("Spectators: 1 person watches this room.")   # redrawn for it
    finally:
        await watcher.close()
    console.type("quit")
    assert await asyncio.wait_for(task, TIMEOUT) == 0


# -- clocks, stand-ins and leaving --------------------------------------------------------------


def _clock_view(**clock: Any) -> dict[str, Any]:
    seats = [{"player": "a", "name": "ann", "bot": False, "ready": True, "stand_in": None},
             {"player": "b", "name": "bob", "bot": False, "ready": True, "stand_in": "timeout"}]
    return {"seats": seats, "you": 0, "clock": {
        "kind": "fischer", "clock_ms": 120_000, "increment_ms": 5_000, "on_timeout": "bot",
        "at": 1000.0, "remaining_ms": [90_000, 30_000], "running": [0], **clock}}


def test_the_clock_line_counts_a_running_clock_down_by_the_server_s_time() -> None:
    view = _clock_view()
    # 10 s after the server measured, on a machine whose clock is 2 s behind the server's.
    line = _clock_line(view, offset=2.0, now=1008.0)
    assert line.startswith("Clock: 2:00 each +5s a move, on timeout: bot")
    assert "seat 1 ann (you) 1:20 ⏳" in line  # 90 s - 10 s, running; seats counted from 1
    assert "seat 2 bob 0:30" in line and "bob 0:30 ⏳" not in line  # stopped: as measured
    assert "1:20" not in _clock_line(view, offset=0.0, now=1008.0)
    assert _clock_line(view, 0.0, now=5000.0).count("0:00") == 1  # never below zero
    assert _clock_line({"clock": None}, 0.0) == ""


def test_a_stand_in_and_a_seat_that_left_are_marked() -> None:
    view = _clock_view()
    line = _seat_line(1, view["seats"][1], 0, [True, False], [1], "playing")
    assert "bot stands in (its clock ran out)" in line and "to act" in line
    assert "left the game" in _seat_line(1, view["seats"][1], 0, [True, True], [], "playing", [1])
    assert _left_seats({"outcome": {"left": [2]}}) == [2]
    assert _left_seats({"outcome": None, "state": {"left": [0, 3]}}) == [0, 3]


def test_leaving_and_stand_in_events_read_as_sentences() -> None:
    view = _clock_view()
    assert _event_line({"type": "left", "seat": 1, "reason": "timeout"}, view) == (
        "seat 2 bob ran out of time and left the game")
    assert "resigned" in _event_line({"type": "left", "seat": 1, "reason": "resignation"}, view)
    assert "bot plays for them" in _event_line(
        {"type": "stand_in", "seat": 1, "reason": "away"}, view)
    assert _event_line({"type": "took_back", "seat": 1}, view) == (
        "seat 2 bob plays for themselves again")


def test_mandala_events_read_as_sentences_with_players_numbered_as_seats() -> None:
    mandala = get_game("mandala")
    assert mandala is not None
    state = mandala.setup(2, mandala.normalize_options({}), 5)
    view = {"game": "mandala", "seats": [{"name": "ann"}, {"name": "bob"}], "you": 0,
            "state": mandala.view(state, 0)}
    line = _event_line({"type": "mountain", "player": 1, "colour": "red", "mandala": 0}, view)
    # "Player 2" is seat 2: the game's names and the terminal's seats count alike.
    assert line == "Player 2 played red to the left mountain"
    assert _event_line({"type": "draw", "player": 0, "count": 2}, view) == (
        "Player 1 (you) drew 2")
    assert _event_line({"type": "drawn", "cards": ["red", "blue"]}, view) == (
        "you drew red, blue")
    assert "=" not in _event_line({"type": "yoga_draw", "colour": "red", "to": "mountain",
                                   "mandala": 1}, view)


def test_options_that_do_not_apply_are_not_asked_and_durations_read_as_people_type() -> None:
    mandala = game_entry(get_game("mandala"))  # type: ignore[arg-type]
    options = {o["name"]: o for o in mandala["options"]}
    assert not option_applies(options["yoga"], mandala, {})
    assert option_applies(options["yoga"], mandala, {"mode": "solo"})
    assert not option_applies(options["clock_ms"], mandala, {})
    assert option_applies(options["clock_ms"], mandala, {"clock": "turn"})
    assert not option_applies(options["increment_ms"], mandala, {"clock": "turn"})
    assert parse_duration("1m30s") == 90_000 and parse_duration("3 min") == 180_000
    assert parse_duration("1d") == 86_400_000 and parse_duration("0.8s") == 800
    assert parse_duration("120000") == 120_000  # a bare number is the wire's milliseconds
    for bad in ("soon", "3x", "1m junk"):
        try:
            parse_duration(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was read as a duration")


async def test_play_seats_two_terminals_at_one_table_and_me_shows_the_result(
        url: str, tmp_path: Path) -> None:  # noqa: F811
    first, second = Console(), Console()
    first.type("play mantis 2")
    one = run_play(first, url, tmp_path / "token1", name="ann")
    await first.expect("Seated at room")
    room = re.search(r"Seated at room (\w+) \(2 seats\)", first.text)
    assert room, first.text
    second.type("play mantis 2-3")
    two = run_play(second, url, tmp_path / "token2", name="bob")
    await second.expect(f"Seated at room {room.group(1)} (2 seats)")
    for console in (first, second):
        await console.expect("the game starts")
    first.type("resign")
    await first.expect("*** Game over")
    await second.expect("*** Game over")
    first.type("leave")
    await first.expect("Main menu")
    # A game's results are written just after its end (docs/operations.md, "Which reads lag
    # a change"): `me` asked at once may come before them, and is asked again until they show.
    for _ in range(50):
        first.type("me")
        await first.expect("ann (player")
        seen = await first.expect("Mantis: 0 won, 1 lost, 0 drawn · rating", "No finished games")
        if seen.startswith("Mantis"):
            break
        await first.expect("Choose:")
    await first.expect("Recent games:")
    await first.expect("Mantis vs bob: lost (resignation)")
    first.type("top mantis")
    await first.expect("Mantis leaderboard:")
    await first.expect("No established ratings yet.")  # one game each: both provisional
    first.type("play nosuchgame")
    await first.expect("Usage: play GAME")
    first.type("quit")
    second.type("leave", "quit")
    assert await asyncio.wait_for(one, TIMEOUT) == 0
    assert await asyncio.wait_for(two, TIMEOUT) == 0
