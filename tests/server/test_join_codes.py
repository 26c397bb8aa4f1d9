"""Private rooms cannot be found by guessing: long codes of a look-alike-free alphabet, read
whatever their case; wrong codes counted per player and per address with a growing back-off;
and nobody without the code can tell a private room from one that does not exist."""

from __future__ import annotations

import asyncio
import inspect
import re
import types
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, cast

import pytest
import redis.asyncio as aioredis

from playhall import app
from playhall.rooms.ids import new_room_id
from playhall.store.code_tries import CodeTries
from playhall.store.codes import CODE_ALPHABET, new_code, normalise_code
from playhall.store.redis_store import Store
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


async def test_tries_back_off_are_given_back_and_forgotten(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    tries = CodeTries(client, f"t{uuid.uuid4().hex[:8]}:", free=3, first=2.0, longest=60.0)
    keys = ["player:p", "address:a"]
    try:
        now, backoffs = 1_000_000, []
        for _ in range(10):  # each try as soon as it may be made
            taken = await tries.take(keys, now)
            assert taken.wait == 0.0
            backoffs.append(taken.backoff)
            now += round(taken.backoff * 1000)
        assert backoffs == [0.0, 0.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
        # While waiting, a try is refused and counts for nothing; the address's wait holds
        # for another player of it too, not for another address.
        assert (await tries.take(keys, now - 1500)).wait == 1.5
        assert (await tries.take(["player:q", "address:a"], now - 1500)).wait == 1.5
        assert (await tries.take(["player:q", "address:b"], now - 1500)).wait == 0.0
        # A try given back (not a wrong code): counted again as if it had not been made.
        taken = await tries.take(keys, now)
        assert taken.tries == 11
        await tries.give_back(keys, taken)
        again = await tries.take(keys, now)
        assert (again.wait, again.tries) == (0.0, 11)
        # Quiet for `longest` after its wait ended, a key is forgotten: it expires then.
        left = await client.pttl(f"{tries.prefix}tries:address:{{a}}")
        assert 119_000 < left <= 120_000
    finally:
        await client.aclose()


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


async def _guess_at_once(urls: list[str], room: str) -> list[ServerError]:
    """One wrong code from each of many connections (players) of one address, all at once."""
    clients = [await Client.connect(url) for url in urls]
    try:
        async def guess(n: int, client: Client) -> ServerError:
            fields = {"code": new_code()} if n % 2 else {"room": room, "code": new_code()}
            return await _error(client, "join", **fields)

        return list(await asyncio.gather(*(guess(n, c) for n, c in enumerate(clients))))
    finally:
        for client in clients:
            await client.close()


def _looked_up(refusals: list[ServerError]) -> int:
    """How many guesses were looked up; every other one refused with the wait to keep."""
    waited = [r for r in refusals if r.code == "too_many_tries"]
    assert all(r.reply["retry_after"] > 0 for r in waited)
    looked = [r for r in refusals if r.code != "too_many_tries"]
    assert {r.code for r in looked} <= {"bad_code", "no_such_room"}
    return len(looked)


async def test_concurrent_guesses_are_counted_before_they_are_looked_up(
    server: app.Running, url: str
) -> None:
    host = await Client.connect(url)
    try:
        room = (await host.request("create", game="mantis", seats=2, private=True))["room"]
        assert _looked_up(await _guess_at_once([url] * 40, room)) == 3  # code_tries
    finally:
        await host.close()


async def test_two_processes_on_one_redis_allow_together_what_one_allows(redis_url: str) -> None:
    shared = server_config(redis_url, code_tries=3, rate=1e6, burst=100_000)
    first = await app.start(shared)
    second = await app.start(replace(shared, instance=shared.instance + "-2"))
    try:
        urls = [f"ws://127.0.0.1:{running.port}/" for running in (first, second)] * 20
        assert _looked_up(await _guess_at_once(urls, new_room_id())) == 3
    finally:
        await first.drain()
        await second.drain()


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
        assert view["version"] == 2
    finally:
        await host.close()
        await outsider.close()


class StoreCalls:
    """The store's methods called while requests are answered (by a connection's task, a room
    loading, a room's actor), in order: background work (lease renewal, sweeps) left out."""

    ANSWERING = frozenset({"Endpoint._serve", "RoomManager._load", "Room._run"})

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for family in (store.rooms, store.lobby, store.players, store.expiry):
            for name, _ in inspect.getmembers(type(family), inspect.iscoroutinefunction):
                if not name.startswith("_"):
                    method = getattr(family, name)
                    try:
                        monkeypatch.setattr(family, name, self._recorded(name, method))
                    except AttributeError:  # a class compiled by mypyc has read-only methods
                        pytest.skip(
                            "the compiled build's store classes cannot be patched; the pure "
                            "build's run of the suite (the README's test command) checks this"
                        )

    def _recorded(
        self, name: str, method: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def recorded(*args: Any, **kwargs: Any) -> Any:
            task = asyncio.current_task()
            if task is not None:
                # The server's tasks run coroutines (typeshed's get_coro allows a generator).
                coro = cast("types.CoroutineType[Any, Any, Any]", task.get_coro())
                if coro.__qualname__ in self.ANSWERING:
                    self.calls.append(name)
            return await method(*args, **kwargs)

        return recorded


async def test_a_private_room_in_memory_costs_an_outsider_what_an_unknown_id_costs(
    server: app.Running, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, outsider = await Client.connect(url), await Client.connect(url)
    try:
        private = (await host.request("create", game="mantis", seats=2, private=True))["room"]
        assert private in server.rooms.rooms  # held in memory
        store = StoreCalls(server.endpoint.store, monkeypatch)
        absent = new_room_id()
        asks: list[tuple[str, dict[str, Any]]] = [
            ("join", {}),
            ("join", {"code": new_code()}),
            ("sync", {}),
            ("chat", {"text": "anyone?"}),
            ("move", {"version": 1, "mid": 1, "move": {"type": "score"}}),
        ]
        for kind, fields in asks:
            made = {}
            for room in (private, absent):
                store.calls.clear()
                assert (await _error(outsider, kind, room=room, **fields)).code == "no_such_room"
                made[room] = list(store.calls)
            # The same Redis round trip on both ways, and nothing else.
            assert made[private] == made[absent] == ["room_exists"], (kind, made)
    finally:
        await host.close()
        await outsider.close()
