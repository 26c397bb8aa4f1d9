"""A game night in the browser: a friend who opens a private link is asked their name, renames
in the room (the host sees it), leaving before the start says it gives the seat away, the game
log comes back from the server after a reload, "Your games" lists the game at once with the
opponent and whose turn it is; while the tab is hidden, the title, a beep and a notification
say it is your turn; an away opponent's stand-in is counted down; the watchers are named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from playhall_client.client import Client

from .conftest import NewPage, WebServer
from .pagekit import (
    at_version,
    click_offered,
    create_room,
    open_lobby,
    page_version,
    page_view,
    screenshot,
    seat,
    wait_status,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

if TYPE_CHECKING:
    from playwright.async_api import Page


async def log_lines(page: Page) -> list[str]:
    return [t.strip() for t in await page.locator('[data-testid="log"] li').all_inner_texts()]


async def both_widths(page: Page, name: str, tmp_path: Path) -> None:
    """Screenshots at 1280 and 390 px; the page never scrolls sideways on the phone."""
    size = page.viewport_size
    await page.evaluate("window.scrollTo(0, 0)")
    await screenshot(page, f"{name}-desktop", tmp_path)
    await page.set_viewport_size({"width": 390, "height": 844})
    await screenshot(page, f"{name}-phone", tmp_path)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{name}: the page is {width} px wide on a 390 px phone"
    if size:
        await page.set_viewport_size(size)


async def test_a_friend_by_link_names_renames_and_finds_the_game_again(
    new_page: NewPage, tmp_path: Path
) -> None:
    alice, bob = await new_page(), await new_page()
    await open_lobby(alice, "alice")
    await create_room(alice, "mantis", 2, private=True)
    link = await alice.locator('[data-testid="share-link"]').input_value()

    # Bob arrives by the link: asked his name before he sits down.
    await bob.goto(link)
    await bob.locator('[data-testid="ask-name"]').wait_for()
    await both_widths(bob, "gamenight-name", tmp_path)
    await bob.fill("#arrival-name", "bob")
    await bob.get_by_role("button", name="Go to the table").click()
    await seat(alice, 1).get_by_text("bob").wait_for()
    assert await bob.evaluate("localStorage.getItem('playhall.name')") == "bob"

    # He renames in the room: his seat shows it on Alice's page, and her log says so.
    await bob.get_by_role("button", name="Change name").click()
    await bob.fill("#room-name", "Bobby")
    await bob.get_by_role("button", name="Save name").click()
    await seat(alice, 1).get_by_text("Bobby").wait_for()
    await alice.locator('[data-testid="log"]').get_by_text("seat 2 is now called Bobby").wait_for()
    await bob.locator('[data-testid="my-name"]').get_by_text("Bobby").wait_for()
    await both_widths(bob, "gamenight-rename", tmp_path)

    # Before the start, leaving says what it does.
    await bob.get_by_role("button", name="Leave room…").click()
    await bob.locator('[data-testid="leave-confirm"]').get_by_text("gives up your seat").wait_for()
    await both_widths(bob, "gamenight-leave", tmp_path)
    await bob.get_by_role("button", name="Stay").click()

    for player in (alice, bob):
        await player.get_by_role("button", name="Ready", exact=True).click()
    for player in (alice, bob):
        await wait_status(player, ("playing",))
    for _ in range(3):
        view = await page_view(alice)
        version = await page_version(alice)
        await at_version(bob, view["room"], version)
        if view["status"] != "playing":
            break
        await click_offered((alice, bob)[view["to_act"][0]])
        await at_version(alice, view["room"], version + 1)
    room = (await page_view(alice))["room"]
    await at_version(bob, room, await page_version(alice))
    await bob.wait_for_function(
        "n => document.querySelectorAll('[data-testid=log] li').length >= n",
        arg=len(await log_lines(alice)) - 1,
    )
    before = await log_lines(bob)
    assert "the game starts" in before

    # A reload: the log comes back from the server, the same lines, no name asked again.
    await bob.reload()
    await bob.locator('[data-testid="room"]').wait_for()
    await bob.wait_for_function(
        "n => document.querySelectorAll('[data-testid=log] li').length >= n", arg=len(before)
    )
    assert await log_lines(bob) == before
    assert await bob.locator('[data-testid="ask-name"]').count() == 0

    # Alice goes to the lobby keeping her seat: her game is listed at once, with Bobby, the
    # status and whose turn it is.
    await alice.get_by_role("button", name="Lobby (keep my seat)").click()
    row = alice.locator(f'[data-testid="my-rooms"] [data-room="{room}"]')
    await row.wait_for()
    view = await page_view(bob)
    turn = "your turn" if view["to_act"] == [0] else "Bobby's turn"
    await row.get_by_text(turn).wait_for()
    await row.get_by_text("with Bobby").wait_for()
    await row.get_by_text("private").wait_for()
    await both_widths(alice, "gamenight-lobby", tmp_path)
    await row.get_by_role("button", name="Resume").click()
    await alice.locator(f'[data-testid="room"][data-room="{room}"]').wait_for()
    assert (await page_view(alice))["you"] == 0


async def test_your_turn_in_a_hidden_tab_an_away_opponent_and_the_watchers(
    new_page: NewPage,
    web_server: WebServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    alice = await new_page()
    await alice.context.grant_permissions(["notifications"], origin=web_server.url.rstrip("/"))
    await open_lobby(alice, "alice")
    room = await create_room(alice, "mantis", 2)
    bob = await Client.connect(web_server.ws_url, name="bob")
    carol = await Client.connect(web_server.ws_url, name="carol")
    try:
        mirror = await bob.join(room)
        await bob.ready(room)
        await alice.get_by_role("button", name="Ready", exact=True).click()
        await mirror.wait(lambda m: m.view["status"] == "playing")
        if mirror.view["to_act"] == [0]:  # Alice first: she moves, so Bob's move is next
            await click_offered(alice)
            await mirror.wait(lambda m: m.view["to_act"] == [1])
        # Alice ticks both alerts, then her tab goes to the background.
        await alice.check("#turn-sound")
        await alice.check("#turn-notify")
        await alice.evaluate(
            "Object.defineProperty(document, 'hidden', {configurable: true, get: () => true})"
        )
        assert not (await alice.title()).startswith("▶ Your turn")
        await bob.move(room, mirror.view["moves"][0])
        await alice.wait_for_function("() => document.title.startsWith('▶ Your turn')")
        alerts = await alice.evaluate("window.playhallPage.screen.alerts")
        assert alerts == ["sound", "notification"]
        await alice.evaluate("delete document.hidden")

        # Carol watches: Alice's page names her.
        await carol.join(room, watch=True)
        await alice.locator('[data-testid="watchers"]').get_by_text("Watching: carol").wait_for()

        # Alice moves; Bob's connection goes while the game waits for him: a countdown.
        await click_offered(alice)
        await alice.wait_for_function("() => !document.title.startsWith('▶ Your turn')")
        await mirror.wait(lambda m: m.view["to_act"] == [1])
        await bob.close()
        due = seat(alice, 1).locator('[data-testid="stand-in-due"]')
        await due.wait_for()
        assert re.fullmatch(r"away: bot plays for them in 0[01]:\d\d", await due.inner_text())
        await both_widths(alice, "gamenight-away", tmp_path)
    finally:
        await bob.close()
        await carol.close()
