"""What the browser game tests do with the page: open the lobby, create a room, seat bots, play
by clicking the moves the board offers, read the page's own view, and take screenshots.

Everything goes through the page as a person would use it (its buttons and forms); reading
``window.playhall`` (the page's connection) is only for checking what the page holds.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import StartWebServer, WebServer

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

#: Clickable moves on the board: every button the renderers make from the view's ``moves``.
OFFERED = '[data-testid="board"] [data-move]:not([disabled])'
OUTCOME = '[data-testid="outcome"]'
#: Where the screenshots go when ``PLAYHALL_SCREENSHOTS`` names a directory (docs/screenshots
#: in the repo); without it the tests still take them, into the test's temporary directory.
SCREENSHOTS_ENV = "PLAYHALL_SCREENSHOTS"
#: The room options every game accepts for its clock (the create form sets them by hand).
CLOCK_OPTIONS = frozenset({"clock", "clock_ms", "increment_ms", "on_timeout"})
#: The page's mirror of the room it shows (JavaScript).
MIRROR = "window.playhall.rooms.get(window.playhallPage.screen.room)"


@pytest.fixture
async def web_server(start_web_server: StartWebServer) -> WebServer:
    """The server for the game tests: bots answer at once (the games are played for their
    screens, not their pace). Test modules import this to replace the default one."""
    return await start_web_server(["--bot-delay", "0.02"])


async def open_lobby(page: Page, name: str | None = None) -> None:
    await page.goto("/")
    await page.wait_for_selector('[data-testid="conn-status"][data-state="open"]')
    await page.wait_for_selector('[data-testid="lobby"]')
    if name:
        await page.fill("#name", name)
        await page.get_by_role("button", name="Save name").click()
        await page.wait_for_selector(f'[data-testid="conn-status"]:has-text("connected as {name}")')


async def create_room(
    page: Page,
    game: str,
    seats: int,
    options: dict[str, Any] | None = None,
    *,
    private: bool = False,
) -> str:
    """Fill in the lobby's create form and return the new room's id. Clock options set the
    clock by hand; a duration (``*_ms``) is typed in seconds (and 0 minutes)."""
    await page.select_option("#create-game", game)
    if CLOCK_OPTIONS & set(options or {}):
        await page.select_option("#create-clock", "custom")
    for name, value in (options or {}).items():
        field = page.locator(f"#opt-{name}")
        if await field.evaluate("e => e.tagName") == "SELECT":
            await field.select_option(str(value))
            continue
        if name.endswith("_ms"):
            minutes = page.locator(f"#opt-{name}-min")
            if await minutes.count():
                await minutes.fill("0")
            value = value / 1000
        await field.fill(str(value))
        await field.dispatch_event("change")
    if await page.locator("select#create-seats").count():
        await page.select_option("#create-seats", str(seats))
    if private:
        await page.check("#create-private")
    await page.click('[data-testid="create"]')
    room = page.locator('[data-testid="room"]')
    await room.wait_for()
    return str(await room.get_attribute("data-room"))


async def fill_with_bots_and_start(page: Page, seats: int) -> None:
    for seat in range(1, seats):
        await page.get_by_role("button", name=f"Bot in seat {seat + 1}").click()
    if seats > 1:
        await page.get_by_role("button", name="Ready", exact=True).click()
    await wait_status(page, ("playing", "finished"))


async def wait_status(page: Page, statuses: tuple[str, ...]) -> None:
    await page.wait_for_function(
        """statuses => { const s = window.playhallPage.screen;
            const m = s && s.room && window.playhall.rooms.get(s.room);
            return Boolean(m && m.view && statuses.includes(m.view.status)); }""",
        arg=list(statuses),
    )


async def click_offered(page: Page, timeout_ms: int = 15_000) -> bool:
    """Wait for a move to be offered (or the outcome) and click the first one. False at the end."""
    from playwright.async_api import Error as PlaywrightError

    await page.wait_for_selector(f"{OFFERED}, {OUTCOME}", timeout=timeout_ms)
    if await page.locator(OUTCOME).count():
        return False
    try:
        await page.locator(OFFERED).first.click(timeout=2_000)
    except PlaywrightError:  # redrawn between finding and clicking (an update came): look again
        pass
    return True


async def play_to_outcome(page: Page, *, limit_s: float = 90, on_click: Any = None) -> int:
    """Click offered moves until the outcome shows; returns how many clicks it took."""
    deadline = time.monotonic() + limit_s
    clicks = 0
    while await click_offered(page):
        clicks += 1
        if on_click is not None:
            await on_click(clicks)
        assert time.monotonic() < deadline, f"no outcome after {clicks} clicks"
    await page.locator(OUTCOME).wait_for()
    return clicks


def seat(page: Page, index: int) -> Locator:
    """Seat ``index`` as the room page shows it."""
    return page.locator(f'[data-testid="seats"] [data-seat="{index}"]')


async def room_id(page: Page) -> str:
    return str(await page.evaluate("window.playhallPage.screen.room"))


async def page_view(page: Page) -> dict[str, Any]:
    """The page's own copy of the room view (its mirror), as plain JSON data."""
    text = await page.evaluate(f"JSON.stringify({MIRROR}.view)")
    return dict(json.loads(text))


async def page_version(page: Page) -> int:
    return int(await page.evaluate(f"{MIRROR}.version"))


async def at_version(page: Page, room: str, version: int) -> None:
    """Wait until the page's mirror of ``room`` is at ``version`` or later."""
    await page.wait_for_function(
        "([room, version]) => { const m = window.playhall.rooms.get(room);"
        " return Boolean(m && m.view && m.version >= version); }",
        arg=[room, version],
    )


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


async def screenshot(page: Page, name: str, tmp_dir: Path) -> Path:
    """Screenshot of the viewport into $PLAYHALL_SCREENSHOTS (or the test's tmp dir)."""
    target = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_dir)
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{name}.png"
    await page.screenshot(path=str(path))
    return path


async def screenshots_both_widths(page: Page, name: str, tmp_dir: Path) -> None:
    """Desktop (1280x800) and phone (390x844) shots of the page as it is now."""
    size = page.viewport_size
    await page.evaluate("window.scrollTo(0, 0)")
    await screenshot(page, f"{name}-desktop", tmp_dir)
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.evaluate("document.querySelector('[data-testid=board]').scrollIntoView()")
    await screenshot(page, f"{name}-phone", tmp_dir)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{name}: the page is {width} px wide on a 390 px phone"
    if size:
        await page.set_viewport_size(size)
