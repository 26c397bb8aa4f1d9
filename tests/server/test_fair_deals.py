"""Fair deals over a real server: the commitment from the first frame a room shows, the secret
in no frame that any viewer (seats, a spectator, the lobby) gets before the game is over, the
reveal at the end, and the revealed material checked by the client library."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import playhall_client.client as client_module
from playhall.catalog import get_game
from playhall_client import Client
from playhall_client.fair import NotVerified, verify_deal
from playhall_protocol import decode, fairness
from tests.server.helpers import next_push, play_to_the_end
from tests.server.test_play_mantis import play_until_over


def _ends(message: dict[str, Any]) -> bool:
    """Whether a frame announces or shows the end of the game (where the reveal belongs)."""
    if message.get("t") == "update":
        return any(e.get("type") == "game_over" for e in message.get("events", []))
    if message.get("t") == "snapshot":
        return message["view"].get("status") == "finished"
    return False


async def test_the_secret_is_in_no_frame_before_the_end_and_then_verifies(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames: list[bytes] = []

    def recording_decode(frame: bytes) -> Any:
        frames.append(frame)
        return decode(frame)

    # Every frame every client of this test receives passes through here, undecoded.
    monkeypatch.setattr(client_module, "decode", recording_decode)
    alice = await Client.connect(url, name="alice")
    bob = await Client.connect(url, name="bob")
    carol = await Client.connect(url, name="carol")  # watches
    dave = await Client.connect(url, name="dave")  # watches the lobby
    try:
        await dave.watch_lobby("mantis")
        room_a = await alice.create("mantis", 2, options={"target": 3})
        room_id = room_a.room
        commitment = room_a.view["fair"]["commitment"]
        assert len(bytes.fromhex(commitment)) == 32
        assert room_a.view["fair"]["secret"] is None
        listed = [s for s in await bob.list_rooms("mantis") if s["room"] == room_id]
        assert listed and listed[0]["commitment"] == commitment
        pushed = await next_push(dave, "lobby")
        assert [s["commitment"] for s in pushed["rooms"] if s["room"] == room_id] == [commitment]
        room_b = await bob.join(room_id)
        room_c = await carol.join(room_id, watch=True)
        assert room_b.view["fair"]["commitment"] == room_c.view["fair"]["commitment"] == commitment
        await alice.ready(room_id)  # 16 random bytes by default
        await bob.ready(room_id, contribute=False)
        await room_a.wait(lambda m: m.view["status"] == "playing")
        dealt = copy.deepcopy(room_a.view["state"])  # the mirror changes in place
        await play_until_over([(alice, room_a), (bob, room_b)])
        for mirror in (room_a, room_b, room_c):
            await mirror.wait(lambda m: m.view["status"] == "finished")
        fair = room_a.view["fair"]
        secret = bytes.fromhex(fair["secret"])
        assert room_b.view["fair"] == room_c.view["fair"] == fair
        assert fair["contributions"] == [room_a.entropy.hex() if room_a.entropy else None, None]
        assert room_a.entropy is not None and len(room_a.entropy) == 16 and room_b.entropy is None
        # A late viewer's snapshot reveals it too.
        await bob.sync(room_id)
        key = room_a.verify_deal()
        assert key == room_b.verify_deal() == fairness.room_key(
            secret, room_id, [room_a.entropy, None]
        )
        # The key reproduces the deal Alice was shown.
        game = get_game("mantis")
        assert game is not None
        state = game.setup(2, game.normalize_options({"target": 3}), key)
        assert game.view(state, 0) == dealt
    finally:
        for client in (alice, bob, carol, dave):
            await client.close()

    hex_secret = secret.hex().encode()
    revealing = [f for f in frames if secret in f or hex_secret in f]
    assert revealing, "the search would not find the secret: it proves nothing"
    for frame in revealing:
        assert _ends(decode(frame)), f"the secret in a frame before the end: {decode(frame)}"
    before = [f for f in frames if not _ends(decode(f))]
    assert len(before) > 10 and not any(secret in f or hex_secret in f for f in before)


async def test_a_tampered_reveal_does_not_verify(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2, options={"target": 3})
        await alice.add_bot(room.room, 1)
        await alice.ready(room.room, entropy=b"my own sixteen b")
        await play_to_the_end(alice, room)
        view = room.view
        assert room.verify_deal() == fairness.room_key(
            bytes.fromhex(view["fair"]["secret"]), room.room, [b"my own sixteen b", None]
        )
        fair = view["fair"]
        flipped = ("0" if fair["secret"][0] != "0" else "1") + fair["secret"][1:]
        for changed, why in [
            ({**view, "fair": {**fair, "secret": flipped}}, "commitment"),
            ({**view, "fair": {**fair, "contributions": [None, None]}}, "contribution"),
            ({**view, "fair": {**fair, "secret": None}}, "not over"),
            ({**view, "fair": {**fair, "secret": "zz"}}, "hex"),
        ]:
            with pytest.raises(NotVerified, match=why):
                verify_deal(changed, seen_commitment=room.commitment, own=room.entropy)
        with pytest.raises(NotVerified, match="commitment at the end"):
            verify_deal(view, seen_commitment="00" * 32, own=room.entropy)
    finally:
        await alice.close()


async def test_a_contribution_of_the_wrong_kind_or_size_is_refused(url: str) -> None:
    alice = await Client.connect(url, name="alice")
    try:
        room = await alice.create("mantis", 2)
        version = room.version
        for entropy, reason in [(b"x" * 65, "longer than 64"), ("text", "must be binary")]:
            with pytest.raises(Exception, match=reason) as caught:
                await alice.request("ready", room=room.room, ready=True, entropy=entropy)
            assert getattr(caught.value, "code", None) == "bad_message"
        await alice.sync(room.room)
        assert room.version == version and not room.view["seats"][0]["ready"]
    finally:
        await alice.close()
