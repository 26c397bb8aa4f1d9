"""The page through reloads, a server killed and restarted, refused moves, and what it may hold:
never more than its seat's view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playhall_client.client import Client

from .conftest import NewPage, StartWebServer, WebServer
from .pagekit import (
    MIRROR,
    OFFERED,
    as_json,
    at_version,
    click_offered,
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_version,
    page_view,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

if TYPE_CHECKING:
    from playwright.async_api import Page


async def my_turn(page: Page) -> None:
    await page.wait_for_function(
        f"() => {{ const m = {MIRROR}; return Boolean(m && m.view && m.view.status === 'playing'"
        " && m.view.to_act.includes(m.view.you)); }"
    )
    await page.locator(OFFERED).first.wait_for()


async def play_turns(page: Page, turns: int) -> None:
    """Play ``turns`` of our turns by clicking, then wait until it is our turn again."""
    for _ in range(turns):
        await my_turn(page)
        await click_offered(page)
    await my_turn(page)


async def seat_view(server: WebServer, page: Page, room: str) -> dict[str, Any]:
    """The view the server gives the page's player (same token) once it is at the page's version."""
    token = await page.evaluate("localStorage.getItem('playhall.token')")
    client = await Client.connect(server.ws_url, token=token)
    try:
        mirror = await client.join(room)
        version = await page_version(page)
        await mirror.wait(lambda m: m.version >= version)
        assert mirror.version == version, "the game moved on while comparing"
        return dict(as_json(mirror.view))
    finally:
        await client.close()


async def test_reload_and_resume_keep_the_seat_and_view(page: Page) -> None:
    await open_lobby(page, "alice")
    room = await create_room(page, "mantis", 2, {"target": 40})
    await fill_with_bots_and_start(page, 2)
    await play_turns(page, 2)
    before = await page_view(page)
    await page.reload()
    await page.locator('[data-testid="room"]').wait_for()
    await at_version(page, room, await page_version(page))
    after = await page_view(page)
    assert after == before
    assert await page.locator(OFFERED).count() > 0
    # The lobby lists the room in "Your games" (my_rooms), back into the same seat.
    await page.locator('[data-testid="to-lobby"]').click()
    row = page.locator(f'[data-testid="my-rooms"] [data-room="{room}"]')
    await row.get_by_role("button", name="Resume").click()
    await page.locator('[data-testid="room"]').wait_for()
    assert (await page_view(page))["you"] == before["you"]


async def test_kill_9_and_restart_the_page_carries_on(
    page: Page,
    web_server: WebServer,  # noqa: F811
    page_errors: Any,
) -> None:
    # While the server is down the browser logs its failed websocket attempts.
    page_errors.allow(r"WebSocket connection to .* failed")
    await open_lobby(page, "alice")
    room = await create_room(page, "mantis", 2, {"target": 40})
    await fill_with_bots_and_start(page, 2)
    await play_turns(page, 1)
    before = await page_view(page)
    version = await page_version(page)

    web_server.kill()
    await page.locator('[data-testid="conn-status"][data-state="reconnecting"]').wait_for()
    await page.get_by_text("reconnecting…").first.wait_for()
    assert await page.locator(OFFERED).count() == 0, "moves stay disabled during the drop"
    await web_server.restart()
    await page.locator('[data-testid="conn-status"][data-state="open"]').wait_for()
    await at_version(page, room, version)
    assert await page_view(page) == before
    # The game goes on from the same state.
    await my_turn(page)
    await click_offered(page)
    await at_version(page, room, version + 1)


async def test_refused_moves_show_a_message_and_the_page_keeps_working(
    start_web_server: StartWebServer, new_page: NewPage
) -> None:
    # Bots that take their time leave a window where it is not our turn.
    server = await start_web_server(["--bot-delay", "1.0"])
    page = await new_page(base_url=server.url)
    await open_lobby(page, "alice")
    room = await create_room(page, "mantis", 3, {"target": 40})
    await fill_with_bots_and_start(page, 3)
    await my_turn(page)
    your_turn = page.locator('[data-testid="your-turn"]')
    await your_turn.wait_for()
    me = (await page_view(page))["you"]
    messages = page.locator('[data-testid="message"]')
    # A steal from oneself is never offered; sent anyway through the page, it is refused.
    await page.evaluate(f"window.playhallPage.screen.play({{type: 'steal', target: {me}}})")
    await messages.filter(has_text="not allowed").wait_for()
    version = await page_version(page)
    await click_offered(page)
    await at_version(page, room, version + 1)
    # Out of turn: the bots are to move now.
    await your_turn.wait_for(state="detached")
    await page.evaluate("window.playhallPage.screen.play({type: 'score'})")
    await messages.filter(has_text="not your turn").wait_for()
    await my_turn(page)
    await click_offered(page)
    await at_version(page, room, version + 4)


async def test_the_page_holds_only_what_its_seat_may_see(
    page: Page,
    web_server: WebServer,  # noqa: F811
) -> None:
    await open_lobby(page, "alice")
    room = await create_room(page, "mandala", 2, {"mode": "standard"})
    await fill_with_bots_and_start(page, 2)
    await play_turns(page, 3)
    view = await page_view(page)
    assert view == await seat_view(web_server, page, room)
    me = view["you"]
    other = view["state"]["players"][1 - me]
    assert "hand" not in other and "cup" not in other
    # The DOM: a hand panel for this seat only, no cup contents for the other player.
    assert await page.locator(".hand .hand-row").count() == sum(
        1 for n in view["state"]["players"][me]["hand"].values() if n
    )
    assert await page.locator(f'.mandala-player[data-player="{1 - me}"] .cup').count() == 0


async def test_a_hidden_deck_stays_hidden(page: Page, web_server: WebServer) -> None:  # noqa: F811
    await open_lobby(page, "alice")
    room = await create_room(page, "card_battle", 2)
    await fill_with_bots_and_start(page, 2)
    # The bot has chosen its deck; ours is not in yet: the bot's deck is not in the page at all.
    await page.get_by_text("deck in (hidden)").wait_for()
    view = await page_view(page)
    assert view == await seat_view(web_server, page, room)
    other = view["state"]["players"][1 - view["you"]]
    assert other["submitted"] and other["deck"] is None
    row = await page.locator(f'.cb-player[data-seat="{1 - view["you"]}"]').inner_text()
    assert "deck in (hidden)" in row
    assert not any(kind in row for kind in view["state"]["rules"]["deck_types"])
