"""``playhall admin`` sent to one process of two on the same Redis acts on what the other
holds: its rooms are listed with it as their owner, an address refused through one is refused
by the other, and a room held by the other is ended and muted through the room's handle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from playhall_client import Client, ServerError
from playhall_protocol import errors

from .helpers import started_table
from .process import ServerProcess, free_port
from .test_admin import Served, started_with_admin


@pytest.fixture
async def two(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Served, Served]]:
    prefix = f"adm2{tmp_path.name[-6:]}:"
    served = []
    try:
        for name in ("proc-a", "proc-b"):
            server = ServerProcess(
                free_port(), redis_url, prefix, name,
                ["--admin-listen", "127.0.0.1:0", "--admin-token", "s3cret-admin-token",
                 "--log-level", "info"],
                log_path=tmp_path / f"{name}.log",
            )
            served.append(await started_with_admin(server))
        yield served[0], served[1]
    finally:
        for one in served:
            one.server.terminate()


async def test_rooms_held_by_the_other_process_are_listed_with_their_owner(
    two: tuple[Served, Served],
) -> None:
    a, b = two
    table = await started_table(a.server.url)
    try:
        status, listed, _ = await b.admin("rooms")
        assert status == 0
        assert [(r["room"], r["owner"]) for r in listed["rooms"]] == [(table.room, "proc-a")]
    finally:
        await table.close()


async def test_an_address_refused_through_one_process_is_refused_by_the_other(
    two: tuple[Served, Served],
) -> None:
    a, b = two
    assert (await b.admin("refuse", "127.0.0.1", "1h"))[0] == 0
    with pytest.raises(ServerError) as hello:
        await Client.connect(a.server.url)
    assert hello.value.code == errors.ADDRESS_REFUSED
    assert [line["address"] for line in a.lines("address_refused")] == ["127.0.0.1"]
    assert [line["operator"] for line in b.lines("admin_action")] == ["ops-alice"]


async def test_a_room_held_by_the_other_process_is_ended_and_muted_through_it(
    two: tuple[Served, Served],
) -> None:
    a, b = two
    table = await started_table(a.server.url)
    try:
        status, muted, err = await b.admin("mute", table.room, table.clients[0].player)
        assert status == 0, err
        with pytest.raises(ServerError) as chat:
            await table.clients[0].chat(table.room, "hi")
        assert chat.value.code == errors.MUTED
        status, _, err = await b.admin("end", table.room)
        assert status == 0, err
        for mirror in table.mirrors:
            await mirror.wait(lambda m: m.view["status"] == "finished")
            assert mirror.view["outcome"]["reason"] == "closed_by_operator"
    finally:
        await table.close()
