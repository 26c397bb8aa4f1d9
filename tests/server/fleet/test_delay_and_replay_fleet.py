"""The spectator delay and replays over three processes: a spectator on another process than
the room's gets, byte for byte, the delayed frames a spectator on the owner gets; and the
``replay`` request asked of any process gives the owner's frames."""

from __future__ import annotations

import copy
from typing import Any

from playhall_client import Client
from playhall_protocol import apply_diff

from ..helpers import play_to_the_end
from .conftest import Fleet, recording
from .test_forwarding import assert_no_gap, room_frames, updates_by_version


async def test_a_remote_spectator_is_delayed_as_one_on_the_owner(fleet: Fleet) -> None:
    alice = await Client.connect(fleet.url(0), name="alice")  # process 0 holds the room
    mirror = await alice.create("mantis", 2, options={"spectator_delay": 2})
    room = mirror.room
    await alice.add_bot(room, 1)
    remote = await recording(fleet.url(1), name="watcher")
    await remote.client.join(room, watch=True)
    local = await recording(fleet.url(0), token=remote.client.token)
    await local.client.join(room, watch=True)
    asker = await Client.connect(fleet.url(2), name="asker")
    try:
        await alice.ready(room)
        await play_to_the_end(alice, mirror)
        final = mirror.version
        for r in (remote, local):
            await r.client.rooms[room].wait(lambda m: m.version == final)
            assert assert_no_gap(r, room) == final
        theirs, ours = updates_by_version(remote, room), updates_by_version(local, room)
        shared = sorted(set(theirs) & set(ours))
        assert len(shared) >= 5
        for version in shared:
            assert theirs[version] == ours[version], f"version {version} differs"
        # Delayed: the view it held before the end was the table two versions before that.
        view: dict[str, Any] = {}
        held = {}
        for message, _ in room_frames(remote, room):
            view = copy.deepcopy(message["view"]) if message["t"] == "snapshot" else apply_diff(
                view, message["diff"]
            )
            held[message.get("version", message.get("to"))] = copy.deepcopy(view)
        spectators = await alice.replay(room)
        then = [f for f in spectators if (f["step"] or {}).get("version", 0) <= final - 3]
        assert held[final - 1]["state"] == then[-1]["view"]["state"]
        assert held[final - 1]["state"] != spectators[-2]["view"]["state"]
        finished = remote.client.rooms[room].view
        assert finished["status"] == "finished" and finished["state"] == mirror.view["state"]
        # Asked of process 2, answered by the owner: the same frames as asked of it.
        assert await asker.replay(room, 0) == await alice.replay(room, 0)
        assert (await asker.replay(room))[-1]["view"]["state"] == mirror.view["state"]
    finally:
        for client in (alice, remote.client, local.client, asker):
            await client.close()
