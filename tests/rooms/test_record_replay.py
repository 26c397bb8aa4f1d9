"""A game record replayed through the engine, without a server: the positions (setup, then one
per game step) reach the recorded outcome; each seat's frames show only what that seat could
see (its own hand, never the other's, before or after the end; the other seat's moves only
through the events it could see; the secret only at the end); a record that does not replay
says where; and the terminal's replay steps forward and back within its ends."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from playhall.catalog import get_game
from playhall.games.contract import Game
from playhall.games.rng import Rng
from playhall.rooms import game_record, table
from playhall.rooms.record import FINISHED, RoomRecord
from playhall.rooms.record_replay import RecordError, frames, positions
from playhall.rooms.replay import step_entry
from playhall_client.replay import Replay
from playhall_protocol import gamerecord

SECRET = bytes(range(32))


def _game(game_id: str) -> Game:
    game = get_game(game_id)
    assert game is not None
    return game


def made_record(game_id: str, options: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    """A two-seat game played to its end at the table (random offered moves, automatic steps
    as they come), logged as a room logs it, and built into its game record."""
    game = _game(game_id)
    log: list[list[bytes]] = []
    record: RoomRecord = table.create(
        game_id, options, 2, "alice", private=False, room_id="r1", secret=SECRET, created=1.0
    ).evolve()
    for player, name in (("alice", "Alice"), ("bob", "Bob")):
        record, _, seat = table.join(record, game, player, name)
        log.append(step_entry(record, "join", seat, player, None, None))
    for player, entropy in (("alice", b"a" * 16), ("bob", b"b" * 16)):
        record = table.ready(record, game, player, True, entropy)[0]
        log.append(step_entry(record, "ready", record.seat_of(player), player, None, None))
    rng = Rng(seed)
    while record.status != FINISHED:
        state = record.state
        assert state is not None
        if game.auto_delay(state) is not None:
            assert record.deadline is not None
            record, events = table.auto_step(record, game, record.deadline)
            log.append(step_entry(record, "auto", None, None, None, None, events))
            continue
        seat = rng.choice(game.to_act(state))
        mover = record.seats[seat].player
        assert mover is not None
        the_move = rng.choice([m for m in game.legal_moves(state, seat)
                               if not m.get("template")])
        mid = f"m{record.version}"
        record, events = table.move(record, game, seat, mover, record.version, mid, the_move)
        log.append(step_entry(record, "move", seat, mover, the_move, mid, events))
    timed = [
        (1.0 + i, {k.decode(): v for k, v in zip(e[::2], e[1::2], strict=True)})
        for i, e in enumerate(log)
    ]
    built = game_record.build(record, game.title, timed)
    jsonschema.validate(built, gamerecord.schema())
    return json.loads(json.dumps(built))  # as a file gives it back


@pytest.fixture(scope="module")
def mandala() -> dict[str, Any]:
    return made_record("mandala", {})


def test_positions_are_the_setup_then_each_game_step_to_the_recorded_outcome(
    mandala: dict[str, Any],
) -> None:
    game = _game("mandala")
    replayed = positions(mandala, game)
    game_steps = [s for s in mandala["steps"] if s["kind"] in ("move", "auto")]
    assert replayed[0].step is None and len(replayed) == 1 + len(game_steps) > 10
    assert [p.step for p in replayed[1:]] == game_steps
    final = game.outcome(replayed[-1].state)
    assert final is not None and final.as_dict() == mandala["outcome"]
    assert all(game.outcome(p.state) is None for p in replayed[:-1])


def test_a_seats_frames_never_show_the_other_seats_hidden_cards(mandala: dict[str, Any]) -> None:
    game = _game("mandala")
    replayed = positions(mandala, game)
    mine, theirs = frames(mandala, game, replayed, 0), frames(mandala, game, replayed, 1)
    assert len(mine) == len(theirs) == len(replayed)
    for position, own, other in zip(replayed, mine, theirs, strict=True):
        # Seat 1 holds a hand at every position; seat 0 sees it, seat 1's frames never do.
        assert own["view"]["state"]["players"][0]["hand"] == position.state["players"][0]["hand"]
        assert "hand" not in other["view"]["state"]["players"][0]
        assert not [e for e in other["events"] if e.get("player") == 0 and e["type"] == "drawn"]
        step = position.step
        if step is not None and step["seat"] == 0:
            assert own["step"]["move"] == step["move"] and other["step"]["move"] is None
    drawn = [e for f in mine for e in f["events"] if e["type"] == "drawn"]
    assert drawn and all(e["player"] == 0 for e in drawn)  # seat 0 saw its own draws
    # The secret (hence the deal) is revealed to nobody before the end.
    assert all(f["view"]["fair"]["secret"] is None for f in mine[:-1] + theirs[:-1])
    assert theirs[-1]["view"]["fair"] == mandala["fair"]
    assert [f["view"]["status"] for f in theirs][-2:] == ["playing", "finished"]
    assert theirs[-1]["view"]["outcome"] == mandala["outcome"]
    spectator = frames(mandala, game, replayed, None)
    assert all(f["step"] is None or f["step"]["move"] is None for f in spectator)
    assert all("hand" not in p for f in spectator for p in f["view"]["state"]["players"])


def test_a_record_that_does_not_replay_says_where(mandala: dict[str, Any]) -> None:
    game = _game("mandala")
    bad = json.loads(json.dumps(mandala))
    moved = [s for s in bad["steps"] if s["kind"] == "move"]
    moved[3]["move"] = {"type": "no such move"}
    with pytest.raises(RecordError, match=f"version {moved[3]['version']}"):
        positions(bad, game)
    other_deal = json.loads(json.dumps(mandala))
    other_deal["fair"]["secret"] = "00" * 32  # another deal: some move no longer fits it
    with pytest.raises(RecordError):
        positions(other_deal, game)
    for field, value in (("fair", None), ("seats", []), ("options", "x"), ("steps", {})):
        with pytest.raises(RecordError):
            positions({**mandala, field: value}, game)


def test_a_record_whose_seats_or_options_do_not_fit_the_game_says_so(
    mandala: dict[str, Any],
) -> None:
    """Checked as a new room's are, before the engine sets the game up (which is not made for
    a table it does not take)."""
    game = _game("mandala")
    for field, value, said in (
        ("seats", mandala["seats"][:1], "record, seats: Mandala is not played by 1"),
        ("seats", mandala["seats"] * 3, "record, seats: Mandala is not played by 6"),
        ("options", {"nonsense": 1}, "record, options: unknown option 'nonsense'"),
    ):
        with pytest.raises(RecordError, match=re.escape(said)):
            positions({**mandala, field: value}, game)


def test_the_replay_steps_forward_and_back_within_its_ends(mandala: dict[str, Any]) -> None:
    game = _game("mandala")
    replayed = positions(mandala, game)
    replay = Replay([("seat 1", frames(mandala, game, replayed, 0))])
    last = len(replayed) - 1
    assert "step 0/" in replay.draw() and "set up" in replay.draw()
    assert replay.key("p") and replay.at == 0  # nothing before the setup
    assert replay.key("") and replay.key("n") and replay.at == 2
    assert replay.key("b") and replay.at == 1
    assert f"step 1/{last}" in replay.draw()
    assert replay.key("e") and replay.at == last and "Game over" in replay.draw()
    assert replay.key("n") and replay.at == last  # nothing after the end
    assert replay.key("3") and replay.at == 3
    assert replay.key("999999") and replay.at == last
    assert replay.key("0") and replay.at == 0
    assert not replay.key("q")


def _playhall(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "playhall.cli", "replay", *args], input=stdin,
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_playhall_replay_shows_a_seat_or_every_seat(
    mandala: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(mandala))
    done = _playhall(str(path), "--seat", "2", stdin="n\nn\np\ne\nq\n")
    assert done.returncode == 0, done.stderr
    shown = [line for line in done.stdout.splitlines() if line.startswith("== ")]
    last = len(positions(mandala, _game("mandala"))) - 1
    assert [re.search(r"step (\d+)/(\d+)", line).groups() for line in shown] == [  # type: ignore[union-attr]
        (str(n), str(last)) for n in (0, 1, 2, 1, last)
    ]
    assert "-- as seat 2 Bob (you) --" in done.stdout and "Game over" in done.stdout
    both = _playhall(str(path), "--all", stdin="n\nn\nq\n")
    assert both.returncode == 0 and "-- as seat 1 Alice (you) --" in both.stdout
    assert "-- as seat 2 Bob (you) --" in both.stdout
    assert " moved ==" not in both.stdout  # every seat: each move is named, whoever made it
    assert " moved ==" in done.stdout  # one seat: the other seat's moves are not
    watcher = _playhall(str(path), stdin="")
    assert watcher.returncode == 0 and "-- as a spectator --" in watcher.stdout


def test_playhall_replay_refuses_what_is_not_a_replayable_record(
    mandala: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(mandala))
    wrong_seat = _playhall(str(path), "--seat", "3")
    assert wrong_seat.returncode == 2 and "--seat is 1 to 2" in wrong_seat.stderr
    (tmp_path / "junk.json").write_text("{not json")
    junk = _playhall(str(tmp_path / "junk.json"))
    assert junk.returncode == 2 and "junk.json" in junk.stderr
    bad = json.loads(json.dumps(mandala))
    next(s for s in bad["steps"] if s["kind"] == "move")["move"] = {"type": "nonsense"}
    path.write_text(json.dumps(bad))
    broken = _playhall(str(path))
    assert broken.returncode == 1 and "does not replay" in broken.stderr
