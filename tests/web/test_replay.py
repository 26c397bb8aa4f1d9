"""The browser's replay of a finished room: opened from the outcome, it steps forward and back
(buttons and arrow keys) through the frames the server replayed from the room's record, drawn
by the game's renderer, as a spectator, as one seat, or every seat side by side. And a room
with a spectator delay, set in the create form: a spectator's page shows the table two versions
behind the player's, and the end at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from playhall_client.client import replay_views

from .conftest import NewPage
from .pagekit import (
    OFFERED,
    OUTCOME,
    at_version,
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_version,
    page_view,
    play_to_outcome,
    screenshots_both_widths,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

STEP = '[data-testid="replay-step"]'


async def _frames(page: Page, viewer: str) -> list[dict[str, Any]]:
    """The frames the server replays for ``viewer`` ("spectator" or a seat), views made whole."""
    text = await page.evaluate(
        "(viewer) => window.playhall.request('replay', viewer === 'spectator' ? "
        "{room: window.playhallPage.screen.room} : {room: window.playhallPage.screen.room, "
        "seat: Number(viewer)}).then((r) => JSON.stringify(r.frames))",
        viewer,
    )
    return replay_views(json.loads(text))


async def test_a_finished_game_replays_step_by_step_as_any_seat_saw_it(
    new_page: NewPage, tmp_path: Path
) -> None:
    page = await new_page()
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 2, {"target": 6})  # no one move wins it: 2 steps at least
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
    assert mine[-1]["view"]["state"] == final["state"]
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


async def test_a_spectator_watches_the_game_two_steps_behind_and_sees_the_end_at_once(
    new_page: NewPage,
) -> None:
    alice = await new_page()
    await open_lobby(alice, "alice")
    room = await create_room(alice, "mantis", 2, {"spectator_delay": 2})
    await fill_with_bots_and_start(alice, 2)
    watcher = await new_page()
    await open_lobby(watcher, "watcher")
    await watcher.goto(f"/#room={room}")
    await watcher.get_by_test_id("room").wait_for()
    await expect(watcher.get_by_test_id("room")).to_contain_text(
        "spectators see the game 2 steps behind"
    )
    # At Alice's turn (nothing moves until she does) the spectator's page holds the table as
    # it was two versions before, which the finished room's replay shows afterwards.
    await alice.locator(OFFERED).first.click()
    await alice.wait_for_selector(OFFERED)
    now, live = await page_version(alice), await page_view(alice)
    await at_version(watcher, room, now)
    assert await page_version(watcher) == now
    watched = await page_view(watcher)
    assert watched["you"] is None and watched["state"] != live["state"]
    await play_to_outcome(alice)
    final = await page_view(alice)
    await watcher.locator(OUTCOME).wait_for()  # flushed: the end is shown at once
    assert (await page_view(watcher))["state"] == final["state"]
    replayed = await _frames(alice, "spectator")
    then = [f for f in replayed if (f["step"] or {}).get("version", 0) <= now - 2]
    assert watched["state"] == then[-1]["view"]["state"]
