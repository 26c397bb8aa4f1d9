"""A game plugin in the browser: examples/fog_tictactoe, installed into the server as
tests/plugins.py installs it, ships no renderer, so the page draws it with the generic renderer
(app/room/generic.js) and a person plays it there to its outcome against the server's bot, by
clicking the board's cells."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.plugins import example_plugin

from .conftest import PageErrors, StartWebServer, WebServer
from .pagekit import (
    OUTCOME,
    at_version,
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_version,
    page_view,
    room_id,
    screenshots_both_widths,
)

if TYPE_CHECKING:
    from playwright.async_api import Page

#: The board's cells that are moves now.
CELLS = '[data-testid="board"] .generic-grid [data-move]:not([disabled])'


@pytest.fixture
async def web_server(start_web_server: StartWebServer, tmp_path: Path) -> WebServer:
    """The server the page opens, with the example plugin on its path."""
    return await start_web_server(
        ["--bot-delay", "0.02"], plugins=example_plugin(tmp_path / "plugin")
    )


async def test_the_example_plugin_is_played_with_the_generic_renderer(
    page: Page, page_errors: PageErrors, tmp_path: Path
) -> None:
    page_errors.allow(r"status of 404")  # app/games/fog_tictactoe.js: the plugin ships none
    await open_lobby(page, "ada")
    await create_room(page, "fog_tictactoe", 2, {"fuse_ms": 200})
    await fill_with_bots_and_start(page, 2)
    await page.locator('[data-testid="generic"]').wait_for()
    shot = False
    for _ in range(20):  # at most 5 turns of ours, and the blasts'
        await page.wait_for_selector(f"{CELLS}, {OUTCOME}")
        if await page.locator(OUTCOME).count():
            break
        view = await page_view(page)
        # The page holds what this seat may see: its own mine, never the other's unblown one.
        assert isinstance(view["state"]["my_mine"], int)
        assert set(view["state"]["mines"]) <= {"0", "1"}
        cells = await page.locator(CELLS).count()
        assert cells == len(view["moves"])  # every offered move is a cell of the board
        if not shot:
            await screenshots_both_widths(page, "plugin-generic", tmp_path)
            shot = True
        before = await page_version(page)
        await page.locator(CELLS).first.click()
        await at_version(page, await room_id(page), before + 1)  # the move came back
    else:
        raise AssertionError("no outcome after 20 turns")
    outcome = (await page_view(page))["outcome"]
    assert outcome["reason"] in {"three_in_a_row", "board_full"}
    assert page_errors.unexpected() == []
