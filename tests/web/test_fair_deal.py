"""The browser's part in a fair deal: its "Ready" sends 16 random bytes, which the finished
room reveals as the seat's contribution and which, with the revealed secret, checks out against
the commitment the page showed before the game."""

from __future__ import annotations

from playhall_client.fair import verify_deal

from .conftest import NewPage
from .pagekit import (
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_view,
    play_to_outcome,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)


async def test_ready_contributes_sixteen_random_bytes_that_the_end_reveals(
    new_page: NewPage,
) -> None:
    page = await new_page()
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 2, {"target": 3})
    before = (await page_view(page))["fair"]
    assert before["secret"] is None and len(before["commitment"]) == 64
    await fill_with_bots_and_start(page, 2)
    await play_to_outcome(page)
    view = await page_view(page)
    fair = view["fair"]
    assert fair["commitment"] == before["commitment"]
    mine, bots = fair["contributions"]
    assert len(bytes.fromhex(mine)) == 16 and bots is None
    verify_deal(view, seen_commitment=before["commitment"], own=bytes.fromhex(mine))
