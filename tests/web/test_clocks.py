"""Clocks, stand-ins and leaving in the page: a seat's clock counts down beside it, the server's
bot stands in for an idle player until a click takes the seat back, and Resign ends a game."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import StartWebServer, WebServer
from .pagekit import (
    MIRROR,
    OUTCOME,
    click_offered,
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_view,
    screenshots_both_widths,
)

if TYPE_CHECKING:
    from playwright.async_api import Page

MY_CLOCK = '.clock[data-clock="0"]'
STAND_IN = '.seat[data-seat="0"] [data-testid="stand-in"]'


@pytest.fixture
async def web_server(start_web_server: StartWebServer) -> WebServer:
    """Bots (and stand-ins) wait 0.8 s before moving, so a seat's moves stay offered for a
    moment while the stand-in plays it."""
    return await start_web_server(["--bot-delay", "0.8"])


async def seconds_shown(page: Page) -> float:
    return float(await page.locator(MY_CLOCK).get_attribute("data-seconds") or "nan")


async def test_clock_counts_down_and_a_stand_in_hands_the_seat_back(
    page: Page, tmp_path: Path
) -> None:
    await open_lobby(page, "alice")
    options = {"clock": "turn", "clock_ms": 1500, "on_timeout": "bot"}
    await create_room(page, "mantis", 2, {"target": 30, **options})
    await fill_with_bots_and_start(page, 2)
    # Alice's turn comes with her clock running beside her seat, as mm:ss with a cue in text.
    await page.locator(f"{MY_CLOCK}.running").wait_for()
    first = await seconds_shown(page)
    assert 0 < first <= 1.5
    assert (await page.locator(MY_CLOCK).inner_text()).startswith(("⏳ 00:0", "⚠ low 00:0"))
    await page.wait_for_function(
        "([sel, first]) => Number(document.querySelector(sel).dataset.seconds) < first",
        arg=[MY_CLOCK, first],
    )
    # Idle: the clock runs out and the server's bot stands in, with the reason and a hint.
    badge = page.locator(STAND_IN)
    await badge.wait_for(timeout=10_000)
    assert await badge.inner_text() == "stand-in (timeout)"
    hint = page.locator('[data-testid="stand-in-hint"]')
    assert "any move takes your seat back" in await hint.inner_text()
    view = await page_view(page)
    assert view["seats"][0]["stand_in"] == "timeout"
    # The create form offered the clock options (filled in above) and the room took them.
    assert view["clock"]["kind"] == "turn" and view["clock"]["on_timeout"] == "bot"
    await screenshots_both_widths(page, "clocks", tmp_path)
    # Any move takes the seat back (even one the stand-in beat by a moment).
    while await badge.count():
        assert await click_offered(page), "the game ended before the seat was taken back"
    await page.wait_for_function(f"() => !{MIRROR}.view.seats[0].stand_in")
    assert await hint.count() == 0
    assert "plays for themselves again" in await page.locator('[data-testid="log"]').inner_text()


async def test_resign_ends_a_two_player_game(page: Page) -> None:
    await open_lobby(page, "bob")
    await create_room(page, "mantis", 2)
    await fill_with_bots_and_start(page, 2)
    await page.get_by_role("button", name="Resign…").click()
    # A confirm step: keeping on playing changes nothing.
    await page.get_by_role("button", name="Keep playing").click()
    assert (await page_view(page))["status"] == "playing"
    await page.get_by_role("button", name="Resign…").click()
    await page.get_by_role("button", name="Yes, resign").click()
    outcome = page.locator(OUTCOME)
    await outcome.wait_for()
    text = await outcome.inner_text()
    assert "resignation" in text and "Left the game: bob (you)" in text
    view = await page_view(page)
    assert view["outcome"]["reason"] == "resignation" and view["outcome"]["left"] == [0]
    gone = page.locator('.seat[data-seat="0"] [data-testid="left-game"]')
    assert await gone.inner_text() == "left the game"
    log = await page.locator('[data-testid="log"]').inner_text()
    assert "bob (you) left the game (resigned)" in log
    assert await page.get_by_role("button", name="Resign…").count() == 0
