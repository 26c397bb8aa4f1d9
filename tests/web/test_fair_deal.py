"""The browser's part in a fair deal: its "Ready" sends 16 random bytes, which the finished
room reveals as the seat's contribution and which, with the revealed secret, checks out against
the commitment the page showed before the game; and at the end the page checks the game's
record itself, shows it as verified (or where it is not), and offers the record to download."""

from __future__ import annotations

import json
from pathlib import Path

from playhall.record_check import check_replay
from playhall_client.fair import verify_deal, verify_record

from .conftest import NewPage
from .pagekit import (
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_view,
    play_to_outcome,
    room_id,
    screenshot,
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


async def test_a_finished_game_shows_verified_with_its_record_to_download(
    new_page: NewPage, tmp_path: Path
) -> None:
    """At the end the page fetches the record, checks it with the JavaScript verifier (its own
    contribution and the commitment it saw among the checks), shows "verified" with what was
    checked, and offers the record as JSON, which the Python verifier with the engines passes."""
    page = await new_page()
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 2, {"target": 3})
    await fill_with_bots_and_start(page, 2)
    await play_to_outcome(page)
    panel = page.locator('[data-testid="verification"]')
    await panel.wait_for()
    assert await panel.get_attribute("data-verified") == "yes"
    assert "✓ verified" in await panel.inner_text()
    await panel.locator("summary").click()
    checked = await panel.locator('[data-testid="verification-checked"] li').all_inner_texts()
    assert any("seat 0's the one this client sent" in line for line in checked), checked
    assert any("every hash chained" in line for line in checked), checked
    assert "Only the server's game engines can check" in await panel.inner_text()
    await panel.scroll_into_view_if_needed()
    await screenshot(page, "verified-desktop", tmp_path)
    await page.set_viewport_size({"width": 390, "height": 844})
    await panel.scroll_into_view_if_needed()
    await screenshot(page, "verified-phone", tmp_path)
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    async with page.expect_download() as waiting:
        await page.locator('[data-testid="record-link"]').click()
    download = await waiting.value
    assert download.suggested_filename == f"playhall-{await room_id(page)}.json"
    record = json.loads(Path(await download.path()).read_text())
    report = verify_record(record, replay=check_replay)
    assert report.ok, report.lines()
    assert record["fair"] == (await page_view(page))["fair"]


async def test_a_tampered_record_shows_not_verified_and_where(new_page: NewPage) -> None:
    """The page's verification panel given a record changed at one step (a time) says so, with
    the step and the field, and still offers the record. The step is the game's first move,
    the player's or the bot's (to 3, the bot can win before the player has moved)."""
    page = await new_page()
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 2, {"target": 3})
    await fill_with_bots_and_start(page, 2)
    await play_to_outcome(page)
    await page.locator('[data-testid="verification"][data-verified="yes"]').wait_for()
    room = await room_id(page)
    shown = await page.evaluate(
        """async (room) => {
            const where = new URL("app/room/verified.js", location.href);
            const { createVerification } = await import(where);
            const record = (await window.playhall.request("record", { room })).record;
            const changed = record.steps.findIndex((s) => ["move", "bot_move"].includes(s.kind));
            record.steps[changed].time = record.steps[changed].time + 1;
            const check = createVerification({ room, fetchRecord: async () => record, memo: {} });
            document.body.append(check.el);
            check.draw({ status: "finished", you: 0 });
            const done = () => check.el.querySelector('[data-testid="verification"]');
            while (!done()) await new Promise((r) => setTimeout(r, 20));
            const { kind } = record.steps[changed];
            return { changed, kind, verified: done().dataset.verified, text: done().innerText };
        }""",
        room,
    )
    assert shown["verified"] == "no"
    assert "✗ NOT verified" in shown["text"]
    changed, kind = shown["changed"], shown["kind"]
    assert f"step {changed} (version {changed + 1}, {kind}), hash: " in shown["text"], shown["text"]
