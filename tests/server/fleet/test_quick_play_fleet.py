"""Quick play over a fleet: seekers on different processes are seated at one table, whichever
process holds it, and its game starts when the last seat is taken; a table whose wait is
over gets its bots from any process's sweep."""

from __future__ import annotations

from playhall_client import Client

from .conftest import Fleet


async def test_seekers_on_three_processes_share_one_table_that_starts(fleet: Fleet) -> None:
    clients = [await Client.connect(fleet.url(i), name=f"q{i}") for i in range(3)]
    try:
        mirrors = [await c.seek("mantis", (3, 3)) for c in clients]
        assert len({m.room for m in mirrors}) == 1
        for mirror in mirrors:
            await mirror.wait(lambda m: m.view["status"] == "playing")
        # Started, so out of quick play: each may seek again (a new table).
        again = await clients[1].seek("mantis", (3, 3))
        assert again.room != mirrors[0].room
    finally:
        for client in clients:
            await client.close()


async def test_a_table_whose_wait_is_over_gets_its_bots_wherever_it_is_held(
    fleet: Fleet,
) -> None:
    opener = await Client.connect(fleet.url(2), name="alone")
    try:
        mirror = await opener.seek("mantis", (2, 2), bots_after=1)
        await mirror.wait(lambda m: m.view["status"] == "playing", 20)
        assert any(s["bot"] for s in mirror.view["seats"])
    finally:
        await opener.close()
