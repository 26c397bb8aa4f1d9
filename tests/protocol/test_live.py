"""The spec's message shapes checked against a real server over a real websocket: every request
once, with the fields its reply has, the pushes it causes, and the refusals PROTOCOL.md lists.
Frames are read and written raw, so nothing here leans on the Python client."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from playhall_protocol import decode, encode, errors

VIEW_FIELDS = {
    "room", "game", "status", "options", "private", "rated", "code", "creator", "seats", "you",
    "to_act", "moves", "state", "outcome", "deadline", "clock", "rematch", "rematch_of", "fair",
}  # fmt: skip
SUMMARY_FIELDS = {
    "room", "game", "title", "status", "seats", "taken", "players", "options", "created",
    "commitment",
}  # fmt: skip


class Wire:
    """One raw connection: requests with ids, replies matched by ``re``, pushes kept."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0
        self.pushes: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, url: str) -> Wire:
        return cls(await connect(url, compression=None))

    async def read(self, timeout: float = 10) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        assert isinstance(frame, bytes), "the server sends binary frames only"
        return decode(frame)

    async def send_raw(self, frame: bytes | str) -> dict[str, Any]:
        await self.ws.send(frame)
        while True:
            message = await self.read()
            if "re" in message:
                return message
            self.pushes.append(message)

    async def ask(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.ws.send(encode({"t": kind, "id": self.next_id, **fields}))
        while True:
            message = await self.read()
            if message.get("re") == self.next_id and message["t"] in ("ok", "error"):
                return message
            assert "re" not in message, message
            self.pushes.append(message)

    async def ok(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        reply = await self.ask(kind, **fields)
        assert reply["t"] == "ok", reply
        return reply

    async def refused(self, code: str, kind: str, /, **fields: Any) -> dict[str, Any]:
        reply = await self.ask(kind, **fields)
        assert reply["t"] == "error", reply
        assert reply["code"] == code, reply
        assert isinstance(reply["reason"], str) and reply["reason"]
        return reply

    async def push(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        for index, message in enumerate(self.pushes):
            if message["t"] == kind:
                return self.pushes.pop(index)
        while True:
            message = await self.read(timeout)
            if message["t"] == kind:
                return message
            self.pushes.append(message)

    def taken(self, kind: str) -> list[dict[str, Any]]:
        found = [m for m in self.pushes if m["t"] == kind]
        self.pushes = [m for m in self.pushes if m["t"] != kind]
        return found


def keys(message: dict[str, Any]) -> set[str]:
    return set(message) - {"t", "re"}


async def test_handshake(url: str) -> None:
    wire = await Wire.open(url)
    try:
        await wire.refused(errors.NOT_HELLO, "ping")
        await wire.refused(errors.UNSUPPORTED_VERSION, "hello", protocol=[99])
        await wire.refused(errors.BAD_TOKEN, "hello", protocol=1, token="nobody.nothing")
        hello = await wire.ok("hello", protocol=[1, 99], name="  ann  ")
        assert keys(hello) == {"player", "name", "protocol", "server", "rooms", "limits", "token"}
        assert hello["protocol"] == 1 and hello["name"] == "ann" and hello["rooms"] == []
        assert set(hello["limits"]) == {"max_frame", "rate", "burst"}
        assert type(hello["limits"]["rate"]) is float and type(hello["limits"]["burst"]) is int
        assert hello["token"].startswith(hello["player"] + ".")
        again = await Wire.open(url)
        back = await again.ok("hello", protocol=1, token=hello["token"])
        assert keys(back) == {"player", "name", "protocol", "server", "rooms", "limits"}
        assert (back["player"], back["name"]) == (hello["player"], "ann")
        await again.ws.close()
        assert keys(await wire.ok("ping")) == {"time"}
    finally:
        await wire.ws.close()


async def test_bad_frames_get_replies(url: str) -> None:
    wire = await Wire.open(url)
    try:
        reply = await wire.send_raw("not binary")
        assert (reply["t"], reply["code"], reply["re"]) == ("error", errors.BAD_FRAME, None)
        reply = await wire.send_raw(msgpack.packb([1, 2]))
        assert (reply["code"], reply["re"]) == (errors.BAD_FRAME, None)
        reply = await wire.send_raw(msgpack.packb({"t": "hello", "id": 4, "protocol": 1}) + b"\0")
        assert reply["code"] == errors.BAD_FRAME
        reply = await wire.send_raw(msgpack.packb({"t": "hello", "id": True, "protocol": 1}))
        assert (reply["code"], reply["re"]) == (errors.BAD_MESSAGE, None)
        reply = await wire.send_raw(msgpack.packb({"t": "nope", "id": 5}))
        assert (reply["code"], reply["re"]) == (errors.UNKNOWN_TYPE, 5)
        await wire.refused(errors.BAD_MESSAGE, "hello", protocol=1, colour="red")
        await wire.ok("hello", protocol=1)
        await wire.refused(errors.BAD_MESSAGE, "join")  # neither room nor code
    finally:
        await wire.ws.close()


async def test_lobby_requests(url: str) -> None:
    wire = await Wire.open(url)
    try:
        await wire.ok("hello", protocol=1)
        games = (await wire.ok("games"))["games"]
        assert {g["id"] for g in games} >= {"mantis", "mandragora", "mandala"}
        for game in games:
            assert set(game) == {
                "id",
                "title",
                "min_seats",
                "max_seats",
                "options",
                "seats_by_option",
            }
            for option in game["options"]:
                assert {"name", "default", "kind", "help", "label"} <= set(option)
                assert set(option) <= {
                    "name", "default", "kind", "help", "label", "choices", "min", "max",
                    "unit", "when", "value_labels",
                }
                assert option["kind"] in ("bool", "int", "str")
        assert keys(await wire.ok("rooms", game="mantis")) == {"rooms", "next"}
        assert keys(await wire.ok("lobby.watch", game="mantis")) == {"rooms", "next"}
        created = await wire.ok("create", game="mantis", seats=3)
        change = await wire.push("lobby")
        assert keys(change) == {"rooms"} and set(change["rooms"][0]) == SUMMARY_FIELDS
        listed = (await wire.ok("rooms", game="mantis"))["rooms"]
        assert created["room"] in [s["room"] for s in listed]
        second = await wire.ok("create", game="mantis", seats=2)
        await wire.push("lobby")
        first_page = await wire.ok("rooms", game="mantis", limit=1)
        assert [s["room"] for s in first_page["rooms"]] == [second["room"]]  # newest first
        assert isinstance(first_page["next"], str)
        rest = await wire.ok("rooms", game="mantis", limit=1, after=first_page["next"])
        assert [s["room"] for s in rest["rooms"]] == [created["room"]] and rest["next"] is None
        assert len((await wire.ok("rooms", limit=0))["rooms"]) == 1  # 0 counts as 1
        assert len((await wire.ok("rooms", limit=2**53 - 1))["rooms"]) == 2  # at most a page
        await wire.ok("leave", room=second["room"])
        await wire.push("lobby")
        await wire.ok("leave", room=created["room"])
        gone = await wire.push("lobby")
        assert gone == {"t": "lobby", "removed": [created["room"]]}
        assert keys(await wire.ok("lobby.unwatch")) == set()
    finally:
        await wire.ws.close()


async def test_room_requests_and_pushes(url: str) -> None:
    ann, bob = await Wire.open(url), await Wire.open(url)
    try:
        await ann.ok("hello", protocol=1, name="ann")
        await bob.ok("hello", protocol=1, name="bob")
        await ann.refused(errors.NO_SUCH_GAME, "create", game="chess", seats=2)
        await ann.refused(errors.BAD_OPTION, "create", game="mantis", seats=2, options={"x": 1})
        await ann.refused(errors.BAD_SEATS, "create", game="mantis", seats=9)
        created = await ann.ok("create", game="mantis", seats=2, options={"target": 15})
        assert keys(created) == {"room", "code", "seat", "version"}
        assert (created["code"], created["seat"], created["version"]) == (None, 0, 1)
        room = created["room"]
        snapshot = await ann.push("snapshot")
        assert keys(snapshot) == {"room", "version", "view", "presence", "events"}
        assert set(snapshot["view"]) == VIEW_FIELDS and snapshot["version"] == 1
        assert snapshot["view"]["you"] == 0 and snapshot["view"]["state"] is None

        await bob.refused(errors.NO_SUCH_ROOM, "join", room="no-such-room")
        await bob.refused(errors.NO_SUCH_SEAT, "join", room=room, seat=5)
        await bob.refused(errors.SEAT_TAKEN, "join", room=room, seat=0)
        joined = await bob.ok("join", room=room)
        assert keys(joined) == {"room", "seat", "version", "chat"}
        assert (joined["seat"], joined["version"]) == (1, 2)
        update = await ann.push("update")
        assert keys(update) == {"room", "from", "to", "diff", "events"}
        assert (update["from"], update["to"]) == (1, 2)
        assert update["events"] == [{"type": "joined", "seat": 1, "name": "bob"}]
        assert (await ann.push("presence"))["presence"] == [True, False]  # from the create
        presence = await ann.push("presence")
        assert presence == {"t": "presence", "room": room, "presence": [True, True], "watching": 0,
                            "watchers": [], "stand_in_at": [None, None]}

        assert keys(await ann.ok("chat", room=room, text=" hi ")) == set()
        line = await bob.push("chat")
        assert keys(line) == {"room", "player", "name", "seat", "text", "at"}
        assert (line["text"], line["seat"]) == ("hi", 0)
        await ann.refused(errors.BAD_MESSAGE, "chat", room=room, text="   ")

        await bob.refused(errors.NOT_CREATOR, "start", room=room)
        await ann.refused(errors.WRONG_STATUS, "move", room=room, version=2, mid=1, move={})
        ready = await ann.ok("ready", room=room)
        assert ready == {"t": "ok", "re": ready["re"], "room": room, "status": "waiting"}
        started = await bob.ok("ready", room=room, ready=True)
        assert started["status"] == "playing"
        await bob.refused(errors.WRONG_STATUS, "bot", room=room, seat=1)

        for wire in (ann, bob):
            while True:
                update = await wire.push("update")
                if update["to"] == 4:
                    break
            assert {"type": "started"} in update["events"]
        view = (await ann.ok("sync", room=room))["version"]
        snapshot = await ann.push("snapshot")
        assert snapshot["version"] == view == 4
        mover = snapshot["view"]["to_act"][0]
        wires = (ann, bob)
        other = wires[1 - mover]
        refusal = await other.refused(
            errors.NOT_YOUR_TURN, "move", room=room, version=4, mid="a", move={"type": "score"}
        )
        assert refusal["version"] == 4
        refusal = await wires[mover].refused(
            errors.STALE, "move", room=room, version=3, mid="b", move={"type": "score"}
        )
        assert refusal["version"] == 4
        moved = await wires[mover].ok("move", room=room, version=4, mid="c", move={"type": "score"})
        assert keys(moved) == {"room", "version"} and moved["version"] == 5
        again = await wires[mover].ok(
            "move", room=room, version=1, mid="c", move={"type": "nonsense"}
        )
        assert keys(again) == {"room", "version"} and again["version"] == 5

        synced = await other.ok("sync", room=room, version=4)
        assert keys(synced) == {"room", "seat", "version", "caught_up"}
        assert synced["caught_up"] == "diffs"
        await wires[mover].refused(errors.WRONG_STATUS, "rematch", room=room)
        left = await other.ok("leave", room=room)
        assert keys(left) == {"room"}
    finally:
        await ann.ws.close()
        await bob.ws.close()


async def test_private_rooms_and_bots(url: str) -> None:
    ann, bob = await Wire.open(url), await Wire.open(url)
    try:
        await ann.ok("hello", protocol=1)
        await bob.ok("hello", protocol=1)
        created = await ann.ok("create", game="mantis", seats=3, private=True)
        code, room = created["code"], created["room"]
        assert isinstance(code, str) and len(code) == 17 and code.count("-") == 2
        # Without the code a private room is no room at all.
        await bob.refused(errors.NO_SUCH_ROOM, "join", room=room)
        await bob.refused(errors.BAD_CODE, "join", code="ZZZZZZ")
        await bob.refused(errors.NO_SUCH_ROOM, "sync", room=room)
        await bob.refused(errors.NO_SUCH_ROOM, "chat", room=room, text="hello?")
        await bob.refused(errors.NO_SUCH_ROOM, "bot", room=room, seat=2)
        watching = await bob.ok("join", code=code.lower(), watch=True)  # any case
        assert (watching["room"], watching["seat"]) == (room, None)
        view = (await bob.push("snapshot"))["view"]
        assert (view["you"], view["code"], view["moves"]) == (None, None, [])
        await ann.refused(errors.NOT_READY, "start", room=room)
        bot = await ann.ok("bot", room=room, seat=2)
        assert keys(bot) == {"room", "seat"}
        await ann.refused(errors.SEAT_TAKEN, "bot", room=room, seat=2)
        await ann.refused(errors.NO_SUCH_SEAT, "bot", room=room, seat=3)
        seated = await bob.ok("join", room=room, code=code, seat=1)
        assert seated["seat"] == 1
        started = await ann.ok("start", room=room)
        assert keys(started) == {"room", "status"} and started["status"] == "playing"
    finally:
        await ann.ws.close()
        await bob.ws.close()


async def test_size_and_rate_limits(url: str) -> None:
    wire = await Wire.open(url)
    try:
        hello = await wire.ok("hello", protocol=1)
        too_big = encode(
            {"t": "chat", "id": 2, "room": "r", "text": "x" * hello["limits"]["max_frame"]}
        )
        await wire.ws.send(too_big)
        try:
            while True:
                await wire.read()
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1009
    finally:
        await wire.ws.close()

    wire = await Wire.open(url)
    try:
        burst = (await wire.ok("hello", protocol=1))["limits"]["burst"]
        count = burst + burst // 2
        for rid in range(100, 100 + count):
            await wire.ws.send(encode({"t": "ping", "id": rid}))
        replies = [await wire.read() for _ in range(count)]
        assert sorted(r["re"] for r in replies) == list(range(100, 100 + count))
        limited = [r for r in replies if r["t"] == "error"]
        assert limited and {r["code"] for r in limited} == {errors.RATE_LIMITED}
        assert len(limited) < count // 2
    finally:
        await wire.ws.close()
