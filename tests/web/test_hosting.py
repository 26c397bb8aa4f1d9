"""Reaching the table and the rules, in Chromium: the page behind the shipped nginx config
under /play/ (its websocket there too), the share link a friend can open (or a word on why
they cannot), and each game's rules page one click from the lobby and the room."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..server.nginx import configure
from .conftest import PHONE, NewPage, StartWebServer, WebServer
from .pagekit import create_room, open_lobby, screenshot

if TYPE_CHECKING:
    from playwright.async_api import Page

OPEN = '[data-testid="conn-status"][data-state="open"]'


async def test_the_page_behind_nginx_under_play_connects_and_shares_its_address(
    new_page: NewPage, web_server: WebServer, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    nginx = configure(tmp_path / "nginx", web_server.port)
    await nginx.start()
    try:
        page = await new_page(base_url=nginx.base, ignore_https_errors=True)
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        response = await page.goto(nginx.base)
        assert response is not None and response.status == 200
        await expect(page.locator(OPEN)).to_be_visible()
        await expect(page.locator('[data-testid="lobby"]')).to_be_visible()
        assert sockets == [nginx.ws_url]
        # The lobby's rules link resolves under the prefix too.
        rules = page.locator('[data-testid="create-form"] [data-testid="rules-link"]')
        href = await rules.evaluate("a => a.href")
        assert href.startswith(f"{nginx.base}rules/")
        # A private room's link is the page's address through the proxy, /play/ kept.
        await create_room(page, "mantis", 2, private=True)
        link = await page.locator('[data-testid="share-link"]').input_value()
        assert link.startswith(f"{nginx.base}#room=") and "&code=" in link
    finally:
        nginx.stop()


async def test_a_loopback_link_says_a_friend_cannot_open_it(
    page: Page, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    await open_lobby(page)
    await create_room(page, "mantis", 2, private=True)
    link = await page.locator('[data-testid="share-link"]').input_value()
    assert link.startswith("http://127.0.0.1:")
    warning = page.locator('[data-testid="share-warning"]')
    await expect(warning).to_contain_text("a friend on another machine cannot open it")
    await expect(warning).to_contain_text("--host 0.0.0.0")
    await screenshot(page, "share-link-desktop", tmp_path)
    await page.set_viewport_size(PHONE)
    await expect(warning).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the room is {width} px wide on a 390 px phone"
    await screenshot(page, "share-link-phone", tmp_path)


async def test_a_public_url_is_the_share_link_and_needs_no_warning(
    start_web_server: StartWebServer, new_page: NewPage
) -> None:
    server = await start_web_server(["--public-url", "https://club.example/play"])
    page = await new_page(base_url=server.url)
    await open_lobby(page)
    room = await create_room(page, "mantis", 2, private=True)
    link = await page.locator('[data-testid="share-link"]').input_value()
    assert link.startswith(f"https://club.example/play/#room={room}&code=")
    assert await page.locator('[data-testid="share-warning"]').count() == 0


async def test_the_rules_open_from_the_room_and_read_well_on_a_phone(
    page: Page, new_page: NewPage, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    await open_lobby(page)
    lobby_link = page.locator('[data-testid="create-form"] [data-testid="rules-link"]')
    # The lobby's link follows the game chosen in the create form.
    await page.select_option("#create-game", "mandala")
    await expect(lobby_link).to_have_text("Rules of Mandala")
    await expect(lobby_link).to_have_attribute("href", "rules/mandala")
    await create_room(page, "mantis", 2)
    async with page.context.expect_page() as opened:
        await page.locator('[data-testid="room"] [data-testid="rules-link"]').click()
    rules = await opened.value
    await rules.wait_for_load_state()
    assert rules.url.endswith("/rules/mantis")
    await expect(rules.locator("h1")).to_have_text("Mantis")
    await expect(rules).to_have_title("Mantis · Playhall")
    await expect(rules.get_by_role("heading", name="Rulings followed")).to_be_visible()
    # The room stayed where it was.
    await expect(page.locator('[data-testid="room"]')).to_be_visible()
    await screenshot(rules, "rules-desktop", tmp_path)
    phone = await new_page(viewport=PHONE)
    await phone.goto("rules/mantis")
    await expect(phone.locator("h1")).to_have_text("Mantis")
    width = await phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the rules page is {width} px wide on a 390 px phone"
    await screenshot(phone, "rules-phone", tmp_path)


@pytest.mark.parametrize("game", ["card_battle", "mandala", "mandragora", "math_card"])
async def test_every_rules_page_fits_a_phone(new_page: NewPage, game: str) -> None:
    phone = await new_page(viewport=PHONE)
    response = await phone.goto(f"rules/{game}")
    assert response is not None and response.status == 200
    width = await phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"rules/{game} is {width} px wide on a 390 px phone"
