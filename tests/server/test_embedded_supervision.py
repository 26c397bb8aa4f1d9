"""The embedded Redis is the server's own child: when it dies, the server starts it again on
the same data directory and append-only file, says so in its log and in ``/healthz`` while
it does, and play goes on with nothing lost. (The server runs as a process of its own with
no Redis address, as ``playhall serve`` does on a fresh machine.)"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

from playhall_client import Client, ServerError

from .conftest import free_port
from .process import ServerProcess


async def healthz(port: int) -> str:
    """The status line and body of ``GET /healthz``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    response = (await reader.read(4096)).decode()
    writer.close()
    return response.split("\r\n", 1)[0] + " " + response.rsplit("\r\n", 1)[-1].strip()


def redis_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None


async def test_a_killed_embedded_redis_is_started_again(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    server = ServerProcess(port, "", "ph:", "embedded", ["--data-dir", str(data_dir)])
    await server.start()
    alice = await Client.connect(server.url, name="alice")
    try:
        room = await alice.create("mantis", 2)
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room)
        await room.wait(lambda m: m.view["status"] == "playing")
        first_pid = redis_pid(data_dir)
        assert first_pid is not None
        os.kill(first_pid, signal.SIGKILL)
        answers = set()
        async with asyncio.timeout(30):  # until a new Redis runs and /healthz is back to ok
            while True:
                answer = await healthz(port)
                answers.add(answer)
                pid = redis_pid(data_dir)
                if pid not in (None, first_pid) and answer == "HTTP/1.1 200 OK ok":
                    break
                await asyncio.sleep(0.01)  # watching the restart
        assert "HTTP/1.1 503 Service Unavailable embedded redis restarting" in answers, answers
        # Same data: the room is as it was, and play goes on (a request may meet a connection
        # that has not noticed the restart yet: store_failed, retried as a client does).
        async with asyncio.timeout(20):
            while True:
                try:
                    synced = await alice.request("sync", room=room.room, retry=False)
                    break
                except ServerError as exc:
                    assert exc.code == "store_failed", exc
                    await asyncio.sleep(0.1)
        assert synced["version"] >= 3  # created with alice seated, bot, ready (then the moves)
        await room.wait(lambda m: m.my_turn or m.view["status"] == "finished")
        if room.my_turn:
            version = room.version
            moved = await alice.move(room.room, room.view["moves"][0])
            assert moved["version"] == version + 1
    finally:
        await alice.close()
        server.terminate()
    events = [
        json.loads(line)["event"] for line in server.stderr().splitlines() if line.startswith("{")
    ]
    assert "embedded_redis_died" in events and "embedded_redis_restarted" in events, events
