"""The browser's replay of a finished room: opened from the outcome, it steps forward and back
(buttons and arrow keys) through the frames the server replayed from the room's record, drawn
by the game's renderer, as a spectator, as one seat, or every seat side by side."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.async_api import Page, expect

from .conftest import NewPage
from .pagekit import (
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_view,
    play_to_outcome,
    screenshots_both_widths,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

STEP = '[data-testid="replay-step"]'


async def _frames(page: Page, viewer: str) -> list[dict[str, object]]:
    """The frames the replay screen holds for ``viewer`` ("spectator" or a seat), as JSON."""
    text = await page.evaluate(
        "(viewer) => window.playhall.request('replay', viewer === 'spectator' ? "
        "{room: window.playhallPage.screen.room} : {room: window.playhallPage.screen.room, "
        "seat: Number(viewer)}).then((r) => JSON.stringify(r.frames))",
        viewer,
    )
    return list(json.loads(text))


async def test_a_finished_game_replays_step_by_step_as_any_seat_saw_it(
    new_page: NewPage, tmp_path: Path
) -> None:
    page = await new_page()
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 2, {"target": 3})
    await fill_with_bots_and_start(page, 2)
    await play_to_outcome(page)
    final = await page_view(page)
    await page.get_by_test_id("replay-link").click()
    await expect(page.locator(STEP)).to_have_text(f"step 0 of {len(await _frames(page, '0')) - 1}")
    frames = await _frames(page, "spectator")
    last = len(frames) - 1
    assert last >= 2
    boards = page.get_by_test_id("replay-board")
    await expect(boards).to_have_count(1)
    await expect(boards.first).to_contain_text("as a spectator")
    await expect(page.get_by_test_id("replay-what")).to_have_text("the game is set up")
    await page.get_by_test_id("replay-next").click()
    await expect(page.locator(STEP)).to_have_text(f"step 1 of {last}")
    await page.get_by_test_id("replay-back").click()
    await page.get_by_test_id("replay-back").click()  # nothing before the setup
    await expect(page.locator(STEP)).to_have_text(f"step 0 of {last}")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    await expect(page.locator(STEP)).to_have_text(f"step 2 of {last}")
    await page.keyboard.press("ArrowLeft")
    await expect(page.locator(STEP)).to_have_text(f"step 1 of {last}")
    await expect(page.get_by_test_id("replay-events").locator("li").first).to_be_visible()
    # As alice (seat 1): her view at each step, and at the end the view she saw live.
    await page.get_by_test_id("replay-viewer").select_option("0")
    await expect(boards.first).to_contain_text("as alice")
    await page.get_by_test_id("replay-last").click()
    await expect(page.locator(STEP)).to_have_text(f"step {last} of {last}")
    await expect(page.get_by_test_id("outcome")).to_be_visible()
    mine = await _frames(page, "0")
    assert mine[-1]["view"]["state"] == final["state"]  # type: ignore[index]
    # Every seat: both boards side by side, at the same step.
    await page.get_by_test_id("replay-viewer").select_option("all")
    await expect(boards).to_have_count(2)
    await expect(boards.nth(1)).to_contain_text("as Bot 1")
    await page.get_by_test_id("replay-first").click()
    await page.get_by_test_id("replay-next").click()
    await expect(page.locator(STEP)).to_have_text(f"step 1 of {last}")
    await screenshots_both_widths(page, "replay", tmp_path)
    await page.get_by_role("link", name="Back to the room").click()
    await page.get_by_test_id("room").wait_for()
