"""The browser's replay of a finished room: opened from the outcome, it steps forward and back
(buttons and arrow keys) through the frames the server replayed from the room's record, drawn
by the game's renderer, as a spectator, as one seat, or every seat side by side. And a room
with a spectator delay, set in the create form: a spectator's page shows the table two versions
behind the player's, and the end at once."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.async_api import Page, expect

from .conftest import NewPage
from .pagekit import (
    MIRROR,
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
    # Alice's table at her turn, then again two versions later (her move, the bot's): the
    # spectator's page shows then the table of the first.
    await alice.wait_for_selector(OFFERED)
    before, seen_then = await page_version(alice), (await page_view(alice))["state"]
    await alice.locator(OFFERED).first.click()
    await alice.wait_for_function(f"{MIRROR}.version >= {before + 2}")
    live = await page_view(alice)
    await at_version(watcher, room, before + 2)
    watched = await page_view(watcher)
    assert watched["you"] is None and watched["state"] == seen_then != live["state"]
    await play_to_outcome(alice)
    final = await page_view(alice)
    await watcher.locator(OUTCOME).wait_for()  # flushed: the end is shown at once
    assert (await page_view(watcher))["state"] == final["state"]
