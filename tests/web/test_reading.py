"""What the page says to people: the create form's clock presets and durations in minutes and
seconds, options with their labels and units only where they apply (in the form, the room's header
and the lobby's list), the join code's hint in the real code's shape, Math card's log and its
choices, and where the keyboard focus lands when a game starts."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from playhall_client import Client

from .conftest import PHONE, NewPage, WebServer, unique_name
from .pagekit import (
    MIRROR,
    OFFERED,
    OUTCOME,
    create_room,
    fill_with_bots_and_start,
    open_lobby,
    page_view,
    screenshot,
    wait_status,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)

if TYPE_CHECKING:
    from playwright.async_api import Page

HEADER = ".room-head h2"
#: A join code as the server makes them (server/playhall/rooms/codes.py): 15 symbols in 3 groups.
CODE = re.compile(r"[2-9A-HJKMNP-Z]{5}-[2-9A-HJKMNP-Z]{5}-[2-9A-HJKMNP-Z]{5}")


async def visible_ids(page: Page) -> set[str]:
    ids = await page.eval_on_selector_all(
        "[data-testid=create-form] [id]", "nodes => nodes.map(n => n.id)"
    )
    return set(ids)


async def test_the_create_form_offers_clock_presets_and_only_the_options_that_apply(
    page: Page, tmp_path: Path
) -> None:
    await open_lobby(page, unique_name())
    await page.select_option("#create-game", "mandala")
    # A two-player Mandala: no solo settings; choices read as people say them.
    ids = await visible_ids(page)
    assert "opt-mode" in ids and not {"opt-yoga", "opt-yoga_delay_ms"} & ids
    assert await page.locator("#opt-mode option:checked").inner_text() == "two players"
    assert await page.locator("label[for=opt-mode]").inner_text() == "mode"
    await page.select_option("#opt-mode", "solo")
    assert {"opt-yoga", "opt-yoga_delay_ms"} <= await visible_ids(page)
    assert await page.locator("label[for=opt-yoga_delay_ms]").inner_text() == "Master Yoga's pause"
    # A pause of at most 10 s is typed in seconds: 800 ms reads 0.8.
    assert await page.locator("#opt-yoga_delay_ms").input_value() == "0.8"
    assert await page.locator("#opt-yoga_delay_ms-min").count() == 0

    # The clock: presets, and no clock settings until a clock is chosen.
    await page.select_option("#create-game", "mantis")
    presets = await page.locator("#create-clock option").all_inner_texts()
    assert presets == [
        "no clock",
        "blitz: 3 min + 2 s a move",
        "rapid: 10 min + 5 s a move",
        "a day per move",
        "set by hand…",
    ]
    assert not {"opt-clock", "opt-clock_ms", "opt-on_timeout"} & await visible_ids(page)
    await page.select_option("#create-clock", "blitz")
    ids = await visible_ids(page)
    assert "opt-on_timeout" in ids and not {"opt-clock", "opt-clock_ms"} & ids
    await page.select_option("#create-clock", "custom")
    assert {"opt-clock", "opt-clock_ms", "opt-clock_ms-min", "opt-increment_ms"} <= set(
        await visible_ids(page)
    )
    # By hand: 1 min 30 s a bank, 4 s a move, in minutes and seconds.
    assert await page.locator("label[for=opt-clock_ms]").inner_text() == "time"
    await page.fill("#opt-clock_ms-min", "1")
    await page.fill("#opt-clock_ms", "30")
    await page.locator("#opt-clock_ms").dispatch_event("change")
    await page.fill("#opt-increment_ms", "4")
    await page.locator("#opt-increment_ms").dispatch_event("change")
    await page.evaluate("window.scrollTo(0, 0)")
    shot = await screenshot(page, "create-form-desktop", tmp_path)
    assert shot.exists()
    await page.set_viewport_size(PHONE)
    await screenshot(page, "create-form-phone", tmp_path)
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await page.click('[data-testid="create"]')
    await page.locator('[data-testid="room"]').wait_for()
    options = (await page_view(page))["options"]
    clock = (options["clock"], options["clock_ms"], options["increment_ms"])
    assert clock == ("fischer", 90_000, 4_000)
    header = await page.locator(HEADER).inner_text()
    assert "1 min 30 s + 4 s a move" in header and "on timeout: a bot plays" in header


async def test_a_preset_sets_the_clock_and_the_header_says_it_in_words(page: Page) -> None:
    await open_lobby(page, unique_name())
    await page.select_option("#create-game", "mantis")
    await page.select_option("#create-clock", "day")
    await page.click('[data-testid="create"]')
    await page.locator('[data-testid="room"]').wait_for()
    options = (await page_view(page))["options"]
    assert (options["clock"], options["clock_ms"]) == ("turn", 86_400_000)
    header = await page.locator(HEADER).inner_text()
    # Labels and units, and no "target 0" when the rules' target is meant.
    assert "target score: the rules' (10, or 15 with 2 players)" in header
    assert "a day per move" in header and "on timeout: a bot plays" in header
    assert "target 0" not in header and "clock_ms" not in header


async def test_the_lobby_lists_a_two_player_mandala_without_solo_settings(
    new_page: NewPage,
) -> None:
    alice, bob = await new_page(), await new_page()
    await open_lobby(alice, unique_name("a"))
    room = await create_room(alice, "mandala", 2, {"mode": "standard"})
    header = await alice.locator(HEADER).inner_text()
    assert "mode: two players" in header and "no clock" in header
    assert "Yoga" not in header and "yoga" not in header
    await open_lobby(bob, unique_name("b"))
    row = bob.locator(f'.room-row[data-room="{room}"] .room-opts')
    await row.wait_for()
    assert await row.inner_text() == "mode: two players · no clock"


async def test_the_join_code_hint_has_the_shape_of_a_real_code(page: Page) -> None:
    await open_lobby(page, unique_name())
    hint = await page.locator("#join-code").get_attribute("placeholder")
    assert CODE.search(str(hint)), hint
    await create_room(page, "mantis", 2, private=True)
    code = await page.locator('[data-testid="join-code"]').inner_text()
    assert CODE.fullmatch(code), code


async def test_the_focus_lands_on_the_first_move_when_the_game_starts(page: Page) -> None:
    await open_lobby(page, unique_name())
    await create_room(page, "mantis", 2, {"target": 40})
    await page.get_by_role("button", name="Bot in seat 2").click()
    # Ready from the keyboard: the button goes away when the game starts.
    await page.get_by_role("button", name="Ready", exact=True).focus()
    await page.keyboard.press("Enter")
    await wait_status(page, ("playing",))
    await page.wait_for_function(
        """() => { const a = document.activeElement;
            const board = document.querySelector('[data-testid=board]');
            return a === board || (board.contains(a) && a.matches('[data-move]')); }"""
    )
    # Once a move is offered (the bot may move first), Enter plays it.
    await page.wait_for_function(
        "() => document.activeElement.matches('[data-testid=board] [data-move]:not([disabled])')"
    )
    before = (await page_view(page))["state"]
    await page.keyboard.press("Enter")
    await page.wait_for_function(
        "before => JSON.stringify(window.playhall.rooms.get(window.playhallPage.screen.room)"
        ".view.state) !== before",
        arg=str(before),
    )


async def test_a_focused_control_keeps_the_focus_when_the_room_is_drawn_again(
    page: Page, web_server: WebServer  # noqa: F811
) -> None:
    """A keyboard player on *Ready* while a friend joins: the controls are drawn again, and the
    new *Ready* has the focus (it was on a button no longer in the page)."""
    await open_lobby(page, unique_name())
    room = await create_room(page, "mantis", 3)
    ready = page.get_by_role("button", name="Ready", exact=True)
    await ready.focus()
    friend = await Client.connect(web_server.ws_url, name="friend")
    try:
        await friend.join(room)
        await page.wait_for_function(
            "room => window.playhall.rooms.get(room).view.seats[1].name === 'friend'", arg=room
        )
        assert await page.evaluate("() => document.activeElement.textContent") == "Ready"
        await page.keyboard.press("Enter")
        await page.wait_for_function(
            "room => window.playhall.rooms.get(room).view.seats[0].ready", arg=room
        )
    finally:
        await friend.close()


async def test_math_card_asks_the_hand_limit_choice_where_its_answers_are(
    page: Page, tmp_path: Path
) -> None:
    await open_lobby(page, unique_name())
    await create_room(page, "math_card", 2)
    await fill_with_bots_and_start(page, 2)
    await page.get_by_role("button", name="deck “counting”").click()
    choice = page.locator('[data-testid="choice"]')
    deadline = time.monotonic() + 90
    # Ending every turn without playing: 5 cards, 2 more a turn, so the hand passes 7 soon.
    while True:
        assert time.monotonic() < deadline, "no hand-limit choice within 90 s"
        await page.wait_for_selector(f"{OFFERED}, {OUTCOME}")
        assert await page.locator(OUTCOME).count() == 0, "the game ended first"
        if await choice.count():
            text = await choice.inner_text()
            if "hand limit" in text:
                break
            await click_first(choice.locator("[data-move]:not([disabled])"))  # another choice
            continue
        await click_first(page.get_by_role("button", name="End turn"))
    assert "over the limit of 7 cards: choose a card to discard" in text
    # The answers are in the panel with the question, and nothing else is offered meanwhile.
    assert await choice.locator("[data-move]:not([disabled])").count() > 0
    assert await page.locator(f"{OFFERED}:not([data-testid=choice] *)").count() == 0
    await screenshot(page, "math-card-choice-desktop", tmp_path)
    hand = (await page_view(page))["state"]["players"][0]["hand_size"]
    await click_first(choice.locator("[data-move]:not([disabled])"))
    await page.wait_for_function(
        f"() => {MIRROR}.view.state.players[0].hand_size < {hand}"
    )
    assert "undefined" not in await page.locator('[data-testid="log"]').inner_text()


async def click_first(locator: object) -> None:
    """Click the first match, if it is still there (the board may be redrawn in between)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import Locator

    assert isinstance(locator, Locator)
    try:
        await locator.first.click(timeout=2_000)
    except PlaywrightError:
        pass
