""""Play now" in the browser: two players, each in a browser context of their own, press it in
the lobby and are seated at one table, whose game starts once both are there; after it, the
lobby's standings show each their record."""

from __future__ import annotations

from pathlib import Path

from .conftest import NewPage
from .pagekit import open_lobby, page_view, screenshot, seat, wait_status


async def test_play_now_seats_two_browsers_at_one_table(new_page: NewPage, tmp_path: Path) -> None:
    alice, bob = await new_page(), await new_page()
    for page, name in ((alice, "alice"), (bob, "bob")):
        await open_lobby(page, name)
        panel = page.locator('[data-testid="play-now"]')
        await panel.wait_for()
        await page.select_option("#quick-game", "mantis")
        await page.select_option("#quick-high", "2")  # 2 to 2 players
        assert await page.locator("#quick-low").input_value() == "2"
    await screenshot(alice, "play-now-lobby", tmp_path)
    await bob.set_viewport_size({"width": 390, "height": 844})
    await bob.locator('[data-testid="play-now"]').scroll_into_view_if_needed()
    await screenshot(bob, "play-now-lobby-phone", tmp_path)
    width = await bob.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the lobby is {width} px wide on a 390 px phone"

    await alice.get_by_role("button", name="Play now").click()
    await seat(alice, 0).get_by_text("alice").wait_for()
    await wait_status(alice, ("waiting",))
    await screenshot(alice, "play-now-waiting", tmp_path)
    await bob.get_by_role("button", name="Play now").click()
    for page in (alice, bob):
        await wait_status(page, ("playing",))
    view_a, view_b = await page_view(alice), await page_view(bob)
    assert view_a["room"] == view_b["room"]
    assert [s["name"] for s in view_a["seats"]] == ["alice", "bob"]
    assert (view_a["you"], view_b["you"]) == (0, 1)
    await seat(bob, 0).get_by_text("alice").wait_for()
    await bob.locator("h2").get_by_text("· rated").wait_for()  # a public table of people
    await screenshot(bob, "play-now-playing", tmp_path)

    # Bob resigns: back in the lobby each sees their record, and the leaderboard has nobody
    # established yet (one game is provisional).
    await bob.get_by_role("button", name="Resign…").click()
    await bob.get_by_role("button", name="Yes, resign").click()
    for page in (alice, bob):
        await wait_status(page, ("finished",))
        await page.get_by_role("button", name="Leave room").click()
        await page.locator('[data-testid="lobby"]').wait_for()
    record = alice.locator('[data-testid="profile"]')
    await record.get_by_text("1 won · 0 lost · 0 drawn").wait_for()
    await record.get_by_text("vs bob").wait_for()
    await bob.locator('[data-testid="profile"]').get_by_text("0 won · 1 lost").wait_for()
    board = alice.locator('[data-testid="leaderboard"]')
    await board.get_by_text("no established ratings yet").wait_for()
    await alice.locator('[data-testid="standings"]').scroll_into_view_if_needed()
    await screenshot(alice, "standings", tmp_path)
