"""Private rooms cannot be found by guessing: long codes of a look-alike-free alphabet, read
whatever their case; wrong codes counted per player and per address with a growing back-off;
and nobody without the code can tell a private room from one that does not exist."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from playhall import app
from playhall.net.guesses import GuessLimiter
from playhall.rooms.codes import CODE_ALPHABET, new_code, normalise_code
from playhall.rooms.ids import new_room_id
from playhall_client import Client, ServerError

from .conftest import server_config

CODE = re.compile(f"[{CODE_ALPHABET}]{{5}}-[{CODE_ALPHABET}]{{5}}-[{CODE_ALPHABET}]{{5}}")


def test_codes_have_no_look_alikes_and_any_case_reads() -> None:
    assert not set("01OIL") & set(CODE_ALPHABET) and len(CODE_ALPHABET) == 31
    codes = {new_code() for _ in range(2000)}
    assert len(codes) == 2000 and all(CODE.fullmatch(c) for c in codes)
    code = next(iter(codes))
    for typed in (code, code.lower(), code.replace("-", ""), " ".join(code.lower().split("-"))):
        assert normalise_code(typed) == code
    assert normalise_code("3fa9c2") == "3FA9C2"  # a code of a room made before this form


def test_back_off_grows_and_is_forgotten() -> None:
    now = [0.0]
    limiter = GuessLimiter(free=3, first=2.0, longest=60.0, capacity=100, clock=lambda: now[0])
    keys = ["player:p", "address:a"]
    waits = [limiter.wrong(keys)[1] for _ in range(10)]
    assert waits == [0.0, 0.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert limiter.wait(keys) == 60.0 and limiter.wait(["address:a"]) == 60.0
    assert limiter.wait(["player:other"]) == 0.0
    now[0] = 59.0
    assert limiter.wait(keys) == 1.0
    now[0] = 60.0
    assert limiter.wait(keys) == 0.0
    assert limiter.wrong(keys) == (11, 60.0)  # not quiet for `longest` yet: still counted
    now[0] = 121.0
    assert limiter.wait(keys) == 0.0
    assert limiter.wrong(keys) == (12, 60.0)
    now[0] = 181.0 + 60.0  # quiet for `longest` after the wait: still counted
    assert limiter.wrong(keys) == (13, 60.0)
    now[0] = 301.0 + 60.5  # quiet for longer than that: forgotten
    assert limiter.wrong(keys) == (1, 0.0)
    for n in range(500):  # a table of at most `capacity` keys
        limiter.wrong([f"address:{n}"])
    assert len(limiter) == 100


@pytest.fixture
async def server(redis_url: str) -> AsyncIterator[app.Running]:
    config = server_config(redis_url, code_tries=3, rate=1e6, burst=100_000)
    running = await app.start(config)
    yield running
    await running.drain()


@pytest.fixture
def url(server: app.Running) -> str:
    return f"ws://127.0.0.1:{server.port}/"


async def _error(client: Client, kind: str, **fields: Any) -> ServerError:
    with pytest.raises(ServerError) as refused:
        await client.request(kind, **fields)
    return refused.value


async def test_a_code_typed_in_lower_case_joins(url: str) -> None:
    host, guest = await Client.connect(url), await Client.connect(url)
    try:
        reply = await host.request("create", game="mantis", seats=2, private=True)
        assert CODE.fullmatch(reply["code"]), reply
        typed = " ".join(reply["code"].lower().split("-"))
        joined = await guest.request("join", code=typed)
        assert (joined["room"], joined["seat"]) == (reply["room"], 1)
    finally:
        await host.close()
        await guest.close()


async def test_wrong_codes_back_off_per_player_and_address(url: str) -> None:
    host, guesser = await Client.connect(url), await Client.connect(url)
    try:
        created = await host.request("create", game="mantis", seats=2, private=True)
        answers = []
        for n in range(20):
            guess = new_code() if n % 2 else "AAAAA-AAAAA-AAAA" + "ABCDEFGHJKMNPQRSTUVW"[n]
            fields = {"code": guess} if n % 3 else {"room": created["room"], "code": guess}
            answers.append((await _error(guesser, "join", **fields)).code)
        # Three tries, then every further one refused unseen: 20 tries, at most 3 guesses.
        assert answers[3:] == ["too_many_tries"] * 17
        assert set(answers[:3]) <= {"bad_code", "no_such_room"}
        # While backing off, even the right code is refused, and the wait is given.
        refused = await _error(guesser, "join", code=created["code"])
        assert refused.code == "too_many_tries"
        assert refused.reply.get("retry_after", 0) > 0
        # Another player from the same address backs off too.
        other = await Client.connect(url)
        assert (await _error(other, "join", code=created["code"])).code == "too_many_tries"
        await other.close()
    finally:
        await host.close()
        await guesser.close()


async def test_a_private_room_looks_like_no_room_to_outsiders(url: str) -> None:
    host, outsider = await Client.connect(url), await Client.connect(url)
    try:
        private = (await host.request("create", game="mantis", seats=3, private=True))["room"]
        await host.request("bot", room=private, seat=2)
        absent = new_room_id()
        asks: list[tuple[str, dict[str, Any]]] = [
            ("join", {}),
            ("join", {"watch": True}),
            ("join", {"seat": 1}),
            ("sync", {}),
            ("sync", {"version": 1}),
            ("start", {}),
            ("ready", {}),
            ("bot", {"seat": 1}),
            ("leave", {}),
            ("chat", {"text": "anyone?"}),
            ("move", {"version": 3, "mid": 1, "move": {"type": "score"}}),
            ("rematch", {}),
        ]
        for kind, fields in asks:
            for room in (private, absent):
                refused = await _error(outsider, kind, room=room, **fields)
                assert refused.code == "no_such_room", (kind, room, refused.code)
                assert refused.reason == f"no room {room!r}"
        # The same with a wrong code (two tries: under the back-off).
        for room in (private, absent):
            refused = await _error(outsider, "join", room=room, code=new_code())
            assert (refused.code, refused.reason) == ("no_such_room", f"no room {room!r}")
        # The room did not change: still waiting at the version the bot made.
        view = (await host.request("sync", room=private))
        assert view["version"] == 3
    finally:
        await host.close()
        await outsider.close()
