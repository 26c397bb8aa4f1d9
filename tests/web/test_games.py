"""Each game played to its outcome screen in the page against server bots, by clicking only
the moves the board offers; screenshots of each at desktop and phone width on the way."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

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
    room_id,
    screenshots_both_widths,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

if TYPE_CHECKING:
    from playwright.async_api import Page


async def check_outcome(page: Page) -> None:
    view = await page_view(page)
    assert view["status"] == "finished"
    outcome = page.locator(OUTCOME)
    text = await outcome.inner_text()
    assert "Game over" in text
    for i, score in enumerate(view["outcome"]["scores"]):
        row = outcome.locator("tr").nth(i)
        assert str(score) in await row.inner_text()
    winners = outcome.locator("tr.winner")
    if not view["outcome"]["winners"] and view["state"].get("mode") == "solo":
        # Mandala solo: an empty `winners` is Master Yoga's win (he has no seat), marked on his row.
        assert await winners.count() == 1
        assert "Master Yoga" in await winners.inner_text()
        assert "★ winner" in await winners.inner_text()
    else:
        assert await winners.count() == len(view["outcome"]["winners"])


def shoot_after(
    page: Page, name: str, tmp_path: Path, at: int = 4
) -> Callable[[int], Awaitable[None]]:
    """A play_to_outcome callback taking both screenshots after the ``at``-th click."""

    async def on_click(clicks: int) -> None:
        if clicks == at:
            # A board at rest, offering moves (or over), not one mid-animation or mid-request.
            await page.wait_for_selector(f"{OFFERED}, {OUTCOME}")
            await screenshots_both_widths(page, name, tmp_path)

    return on_click


async def test_mantis_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    await create_room(page, "mantis", 3, {"target": 10})
    await fill_with_bots_and_start(page, 3)
    # Tanks are stacks labelled with a letter; the top card's back is shown.
    await page.locator(".mantis .stack .chip").first.wait_for()
    assert await page.locator(".mantis-pile .back-card .chip").count() == 3
    clicks = await play_to_outcome(page, on_click=shoot_after(page, "mantis", tmp_path, 1))
    assert clicks >= 1
    await check_outcome(page)
    # A rematch: a new room with the same game and seating; the bots are ready, we are not.
    old = await room_id(page)
    await page.get_by_role("button", name="Rematch").click()
    await page.wait_for_function("old => window.playhallPage.screen.room !== old", arg=old)
    rematch = await page_view(page)
    assert rematch["status"] == "waiting" and rematch["rematch_of"] == old
    assert [s["bot"] for s in rematch["seats"]] == [False, True, True]
    await page.get_by_role("button", name="Ready", exact=True).click()
    await page.locator(OFFERED).first.wait_for()


async def test_a_game_played_from_the_keyboard(page: Page) -> None:
    await open_lobby(page, "alice")
    room = await create_room(page, "mantis", 2, {"target": 40})
    await fill_with_bots_and_start(page, 2)
    await page.locator(OFFERED).first.wait_for()
    version = await page_version(page)
    # Tab through the page until a move has the focus; it shows a focus ring; Enter plays it.
    for _ in range(40):
        await page.keyboard.press("Tab")
        if await page.evaluate("Boolean(document.activeElement.dataset.move)"):
            break
    else:
        raise AssertionError("no move reachable with Tab")
    outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    await page.keyboard.press("Enter")
    await at_version(page, room, version + 1)
    # The board is redrawn after each move; the focus comes back to a move on our next turn,
    # so Enter plays again without reaching for Tab.
    await page.wait_for_function(
        "() => Boolean(document.activeElement.dataset.move) && !document.activeElement.disabled"
    )
    played = await page_version(page)
    await page.keyboard.press("Enter")
    await at_version(page, room, played + 1)


async def test_mandragora_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    await create_room(page, "mandragora", 2, {"pattern": "A", "first": "0"})
    await fill_with_bots_and_start(page, 2)
    assert await page.locator(".mg-board .area").count() == 10
    # The first sowing is replayed piece by piece: the board shows intermediate frames.
    await page.locator(".mg-board button.playable:enabled").first.click()
    await page.wait_for_selector('[data-testid="board"][data-frame="animating"] .area.landing')
    clicks = await play_to_outcome(page, on_click=shoot_after(page, "mandragora", tmp_path))
    assert clicks >= 1
    await check_outcome(page)


async def test_mandala_standard_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    await create_room(page, "mandala", 2, {"mode": "standard"})
    await fill_with_bots_and_start(page, 2)
    await page.locator(".mandala .hand-row").first.wait_for()
    # A count button says what it counts ("2 cards"), and its title the whole move.
    counts = page.locator(".mandala .group:is([data-kind=field], [data-kind=discard]) button.move")
    # The bot may move first (the deal decides): the count buttons come with our first turn.
    await counts.first.wait_for()
    assert await counts.count() > 0
    for text in await counts.all_inner_texts():
        assert re.fullmatch(r"\d+ cards?", text), text
    assert re.fullmatch(r"play \d+ \w+ cards? to your (left|right) field|discard .*",
                        str(await counts.first.get_attribute("title")))
    await play_to_outcome(page, on_click=shoot_after(page, "mandala", tmp_path, 6))
    await check_outcome(page)
    # At the end every cup is shown (scores are counted openly).
    assert await page.locator(".mandala-player .cup").count() == 2


async def test_mandala_solo_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    # A one-seat room starts as soon as it is created.
    await create_room(page, "mandala", 1, {"mode": "solo", "yoga_delay_ms": 400})
    seen_countdown = False

    async def on_click(clicks: int) -> None:
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        nonlocal seen_countdown
        if seen_countdown:
            return
        # Master Yoga's step is pending after most of the player's actions: a countdown to it.
        try:
            await page.wait_for_selector(".countdown .secs", timeout=2_000)
        except PlaywrightTimeout:
            return  # the action opened a resolution: the player picks first
        seen_countdown = True
        await screenshots_both_widths(page, "mandala-solo", tmp_path)

    await play_to_outcome(page, limit_s=150, on_click=on_click)
    assert seen_countdown
    await check_outcome(page)


async def test_card_battle_composed_deck_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    await create_room(page, "card_battle", 2, {"turn_delay_ms": 300})
    await fill_with_bots_and_start(page, 2)
    # Compose a deck from the template: change a card and the deck type, then submit.
    await page.get_by_text("Compose your own deck").click()
    slots = page.locator(".deck-slots select")
    assert await slots.count() == 20
    await slots.nth(0).select_option("knight")
    await page.locator(".composer select").nth(20).select_option("angry")
    await page.get_by_role("button", name="Submit this deck").click()
    # Both decks are public once in; the battle then runs itself, turn by turn.
    await page.wait_for_function(
        "() => { const v = window.playhall.rooms.get(window.playhallPage.screen.room).view;"
        " return v.state.phase !== 'deck'; }"
    )
    view = await page_view(page)
    mine = view["state"]["players"][view["you"]]["deck"]
    assert mine["cards"][0] == "knight" and mine["deck_type"] == "angry"
    await page.wait_for_selector('[data-testid="board"][data-frame="animating"]')
    await screenshots_both_widths(page, "card-battle", tmp_path)
    await page.locator(OUTCOME).wait_for(timeout=60_000)
    await check_outcome(page)


async def test_math_card_to_the_outcome(page: Page, tmp_path: Path) -> None:
    await open_lobby(page, "alice")
    await create_room(page, "math_card", 2)
    await fill_with_bots_and_start(page, 2)
    # Deck choice first: the ready-made decks are offered as buttons.
    await page.get_by_role("button", name="deck “counting”").wait_for()
    await play_to_outcome(page, on_click=shoot_after(page, "math-card", tmp_path, 5))
    await check_outcome(page)
