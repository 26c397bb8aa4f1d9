"""Client-side bots playing whole games over real websockets against a real server."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest

from playhall_client import Client
from playhall_client.bots import RandomBot, playable, run_bot
from tests.server.conftest import redis_url, server, url  # noqa: F401

TIMEOUT = 60.0


async def test_two_client_bots_play_a_whole_mantis_game_and_a_rematch(url: str) -> None:  # noqa: F811
    alice = await Client.connect(url, name="bot-a")
    bob = await Client.connect(url, name="bot-b")
    try:
        room_a = await alice.create("mantis", 2)
        room_b = await bob.join(room_a.room)
        bot_a, bot_b = RandomBot(alice, seed=1), RandomBot(bob, seed=2)
        outcomes = await asyncio.wait_for(
            asyncio.gather(bot_a.play_games(room_a, 2), bot_b.play_games(room_b, 2)), TIMEOUT)
        first, second = outcomes
        assert len(first) == 2 and first == second       # both saw the same two endings
        for outcome in first:
            assert outcome["winners"] and outcome["reason"]
        assert bot_a.moves_made > 0 and bot_b.moves_made > 0
        assert room_a.view["status"] == "finished" and room_a.view["rematch"]
        # The rematch room is a new room with the same players in the same seats.
        rematch = alice.rooms[room_a.view["rematch"]]
        assert rematch.view["status"] == "finished"
        assert [s["player"] for s in rematch.view["seats"]] == [alice.player, bob.player]
    finally:
        await alice.close()
        await bob.close()


async def test_run_bot_creates_and_another_joins_by_room_id(url: str) -> None:  # noqa: F811
    created: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    lines: list[str] = []

    def log_a(line: str) -> None:
        lines.append(line)
        if line.startswith("created room ") and not created.done():
            created.set_result(line.split()[2])

    host = asyncio.create_task(run_bot(url, create="mantis", seats=2, name="host", seed=3,
                                       log=log_a))
    room = await asyncio.wait_for(created, TIMEOUT)
    guest = await asyncio.wait_for(run_bot(url, room=room, name="guest", seed=4,
                                           log=lines.append), TIMEOUT)
    hosted = await asyncio.wait_for(host, TIMEOUT)
    assert guest == hosted and len(guest) == 1 and guest[0]["winners"]
    # The guest takes the wire's seat 1, "seat 2" as people count.
    assert any(line.startswith(f"joined room {room} at seat 2") for line in lines)


@pytest.mark.parametrize(("game", "options"), [
    ("card_battle", {"turn_delay_ms": 0}),   # deck choice offers a template the bot skips
    ("math_card", {}),                        # deck building, with a template and resigning
    ("mandragora", {}),
])
async def test_a_bot_finishes_games_with_templates_against_a_server_bot(
        url: str, game: str, options: dict[str, Any]) -> None:  # noqa: F811
    outcomes = await asyncio.wait_for(
        run_bot(url, create=game, seats=2, options=options, fill=True, seed=6, log=print),
        TIMEOUT)
    assert len(outcomes) == 1 and outcomes[0]["reason"]


async def test_bot_command_fills_seats_with_server_bots(url: str) -> None:  # noqa: F811
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "playhall.cli", "bot", "--url", url, "--create", "mantis",
        "--seats", "3", "--fill", "--games", "2", "--seed", "5",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, env=env)
    out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    text = out.decode()
    assert proc.returncode == 0, text
    assert text.count("game over") == 2
    assert "rematch in" in text
    assert "played 2 game(s)" in text


def test_templates_are_not_playable_and_resigning_is_a_last_resort() -> None:
    moves: list[dict[str, Any]] = [{"type": "pick_deck", "deck": 0},
                                   {"type": "submit_deck", "template": True},
                                   {"type": "resign"}]
    assert playable(moves) == [{"type": "pick_deck", "deck": 0}]
    assert playable(moves[1:]) == [{"type": "resign"}]
