"""The web client in a real browser against a real server: the page loads from ``/``, connects
and shows the lobby, without a single script error; and it comes back by itself after the
server is killed and restarted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conftest import PHONE, NewPage, PageErrors, WebServer

if TYPE_CHECKING:
    from playwright.async_api import Page

OPEN = '[data-testid="conn-status"][data-state="open"]'
RECONNECTING = '[data-testid="conn-status"][data-state="reconnecting"]'


async def test_the_page_loads_connects_and_shows_the_lobby(page: Page) -> None:
    from playwright.async_api import expect

    response = await page.goto("/")
    assert response is not None and response.status == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    await expect(page.locator(OPEN)).to_be_visible()
    await expect(page.locator('[data-testid="lobby"]')).to_be_visible()
    await expect(page.locator('[data-testid="room-list"]')).to_be_attached()
    # The page's connection said hello and holds a player token.
    player = await page.evaluate("() => window.playhall.player")
    token = await page.evaluate("() => window.playhall.token")
    assert isinstance(player, str) and player
    assert isinstance(token, str) and token.startswith(player)


async def test_the_page_loads_without_script_errors_on_a_phone(
    new_page: NewPage, page_errors: PageErrors
) -> None:
    """Every module loads and runs: no uncaught exception, no console error, no failed request
    (a missing module would be both). The page_errors fixture fails the test at teardown; this
    checks again here so the failure names this test's reason."""
    from playwright.async_api import expect

    phone = await new_page(viewport=PHONE)
    failed: list[str] = []
    phone.on("requestfailed", lambda request: failed.append(request.url))
    statuses: list[tuple[int, str]] = []
    phone.on("response", lambda response: statuses.append((response.status, response.url)))
    await phone.goto("/")
    await expect(phone.locator(OPEN)).to_be_visible()
    await expect(phone.locator('[data-testid="lobby"]')).to_be_visible()
    assert failed == []
    assert [s for s in statuses if s[0] >= 400] == []
    assert any(url.endswith("/lib/playhall.js") for _, url in statuses)
    # Each game's renderer is a module of its own, fetched by import() as the server lists it.
    await phone.wait_for_function("() => window.playhallPage.games.length > 0")
    games = await phone.evaluate("() => window.playhallPage.games.map((g) => g.id)")
    for game in games:
        await phone.wait_for_function(
            "id => performance.getEntriesByType('resource')"
            ".some((e) => e.name.endsWith(`/app/games/${id}.js`))",
            arg=game,
        )
    assert [s for s in statuses if s[0] >= 400] == []
    assert page_errors.unexpected() == []


async def test_a_game_without_a_renderer_file_is_drawn_by_the_generic_renderer(
    page: Page, page_errors: PageErrors
) -> None:
    """The page looks for app/games/<id>.js; where there is none (a 404, which the browser
    reports), the game is drawn from its view and moves alone, under the page's CSP: its moves
    as labelled buttons, a square list as a grid whose cells are the moves that name them."""
    from playwright.async_api import expect

    page_errors.allow(r"status of 404")
    await page.goto("/")
    await expect(page.locator(OPEN)).to_be_visible()
    drawn = await page.evaluate(
        """async () => {
            const found = await import("/app/room/renderers.js");
            const renderer = await found.loadRenderer("no_such_game");
            const view = {
                state: { board: [null, 0, 1, "burnt", null, null, null, null, null], turn: 0 },
                moves: [{ type: "mark", cell: 0 }, { type: "mark", cell: 4 }],
                seats: [],
            };
            const board = renderer.render(view, { canMove: true });
            const cells = [...board.querySelectorAll(".generic-grid td")];
            return {
                generic: renderer === found.GENERIC,
                buttons: [...board.querySelectorAll(".actions [data-move]")]
                    .map((b) => b.textContent),
                cells: cells.map((td) => td.textContent),
                playable: cells.map((td, i) => [i, td.querySelector("[data-move]")])
                    .filter(([, b]) => b).map(([i, b]) => [i, JSON.parse(b.dataset.move)]),
                text: board.textContent,
            };
        }"""
    )
    assert drawn["generic"] is True
    assert drawn["buttons"] == ["mark · cell 0", "mark · cell 4"]
    assert drawn["cells"] == ["", "0", "1", "burnt", "", "", "", "", ""]
    assert drawn["playable"] == [[0, {"type": "mark", "cell": 0}], [4, {"type": "mark", "cell": 4}]]
    assert "has no board of its own" in drawn["text"] and "turn" in drawn["text"]


async def test_the_page_reconnects_after_kill_9_and_restart(
    page: Page, web_server: WebServer, page_errors: PageErrors
) -> None:
    from playwright.async_api import expect

    # While the server is down the browser logs each refused websocket attempt.
    page_errors.allow(r"WebSocket connection to .* failed")
    await page.goto("/")
    await expect(page.locator(OPEN)).to_be_visible()
    # The games' modules load after the connection opens: killed under them, the page would
    # (rightly) report their loads reset, which is not what is tested here.
    await page.wait_for_load_state("networkidle")
    player = await page.evaluate("() => window.playhall.player")
    web_server.kill()
    await expect(page.locator(RECONNECTING)).to_be_visible()
    await web_server.restart()
    await expect(page.locator(OPEN)).to_be_visible()
    # The same player again: the token was kept.
    assert await page.evaluate("() => window.playhall.player") == player


async def test_every_number_box_of_the_create_form_shows_its_largest_value_whole(
    new_page: NewPage,
) -> None:
    """A box too narrow for its number shows part of it (120000 read as "12000"): at phone
    width, every game's every number option holds its maximum without scrolling."""
    from playwright.async_api import expect

    phone = await new_page(viewport=PHONE)
    await phone.goto("/")
    await expect(phone.locator(OPEN)).to_be_visible()
    # The game list comes in its own request after the connection opens.
    await phone.wait_for_function(
        "() => document.querySelectorAll('#create-game option').length >= 5"
    )
    games = await phone.eval_on_selector_all(
        "#create-game option", "options => options.map(o => o.value)"
    )
    assert len(games) >= 5
    for game in games:
        await phone.select_option("#create-game", game)
        clipped = await phone.evaluate(
            """() => [...document.querySelectorAll('[data-testid=create-form] input[type=number]')]
                .filter(box => box.max)
                .map(box => { box.value = box.max; return box; })
                .filter(box => box.scrollWidth > box.clientWidth)
                .map(box => `${box.id} ${box.value}`)"""
        )
        assert clipped == [], game
