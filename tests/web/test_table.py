"""People at a table in the browser: the live room list, seats, leaving and starting, a private
room joined through its shared link and its code, two players against each other, a spectator,
chat with its history, presence."""

from __future__ import annotations

from playhall_client.client import Client

from .conftest import NewPage, WebServer
from .pagekit import (
    MIRROR,
    OFFERED,
    OUTCOME,
    as_json,
    at_version,
    click_offered,
    create_room,
    open_lobby,
    page_version,
    page_view,
    seat,
    wait_status,
    web_server,  # noqa: F401  (the fast-bots server replaces the default one)
)


async def test_live_room_list_filter_join_and_leave(new_page: NewPage) -> None:
    alice, bob = await new_page(), await new_page()
    await open_lobby(bob, "bob")
    room_list = bob.locator('[data-testid="room-list"]')
    await open_lobby(alice, "alice")
    room = await create_room(alice, "mandragora", 2)
    # Bob's list shows the new room by itself (lobby.watch), and the filter narrows it.
    row = room_list.locator(f'[data-room="{room}"]')
    await row.wait_for()
    await bob.select_option("#filter", "mantis")
    await row.wait_for(state="detached")
    await bob.select_option("#filter", "mandragora")
    await row.wait_for()
    await row.get_by_role("button", name="Join").click()
    await bob.locator('[data-testid="room"]').wait_for()
    assert (await page_view(bob))["you"] == 1
    await seat(alice, 1).get_by_text("bob").wait_for()
    await seat(alice, 1).get_by_text("● here").wait_for()
    # Bob leaves before the start: the page says that gives his seat away, and asks; then his
    # seat is empty again for Alice.
    await bob.get_by_role("button", name="Leave room…").click()
    confirm = bob.locator('[data-testid="leave-confirm"]')
    await confirm.get_by_text("leaving gives up your seat (seat 2)").wait_for()
    await confirm.get_by_role("button", name="Stay").click()
    await confirm.wait_for(state="detached")
    assert (await page_view(bob))["you"] == 1
    await bob.get_by_role("button", name="Leave room…").click()
    await confirm.get_by_role("button", name="Leave and give up my seat").click()
    await bob.locator('[data-testid="lobby"]').wait_for()
    await seat(alice, 1).get_by_text("empty seat").wait_for()
    # He comes back to watch, then sits down after all.
    await row.get_by_role("button", name="Watch").click()
    await bob.get_by_text("watching").wait_for()
    assert (await page_view(bob))["you"] is None
    await bob.get_by_role("button", name="Sit in seat 2").click()
    await seat(alice, 1).get_by_text("bob").wait_for()
    await bob.wait_for_function(f"() => {MIRROR}.view.you === 1")
    # Every seat is taken: the creator may start without waiting for "ready".
    await alice.get_by_role("button", name="Start now").click()
    await wait_status(bob, ("playing",))


async def test_private_room_by_link_two_players_and_a_spectator(
    new_page: NewPage,
    web_server: WebServer,  # noqa: F811
) -> None:
    alice, bob, carol = await new_page(), await new_page(), await new_page()
    await open_lobby(alice, "alice")
    await create_room(alice, "mantis", 2, {"target": 4}, private=True)
    code = await alice.locator('[data-testid="join-code"]').inner_text()
    link = await alice.locator('[data-testid="share-link"]').input_value()
    assert code in link
    await alice.locator(".chat input").fill("good luck!")
    await alice.get_by_role("button", name="Send").click()
    await alice.locator('[data-testid="chat-lines"]').get_by_text("good luck!").wait_for()

    # Bob opens the link: asked his name first, then straight into the room, in the free seat,
    # with the chat's history.
    await bob.goto(link)
    await bob.fill("#arrival-name", "bob")
    await bob.get_by_role("button", name="Go to the table").click()
    await bob.locator('[data-testid="room"]').wait_for()
    await seat(alice, 1).get_by_text("bob").wait_for()
    await bob.locator('[data-testid="chat-lines"]').get_by_text("good luck!").wait_for()
    assert (await page_view(bob))["you"] == 1
    await seat(alice, 1).get_by_text("● here").wait_for()
    # Carol types the join code in the lobby once the seats are taken: she watches.
    await open_lobby(carol, "carol")
    await carol.fill("#join-code", code)
    await carol.get_by_role("button", name="Join private room").click()
    await carol.locator('[data-testid="room"]').wait_for()
    await carol.get_by_text("watching").wait_for()
    assert (await page_view(carol))["you"] is None
    await bob.locator(".chat input").fill("thanks")
    await bob.get_by_role("button", name="Send").click()
    await alice.locator('[data-testid="chat-lines"]').get_by_text("thanks").wait_for()
    await carol.locator('[data-testid="chat-lines"]').get_by_text("thanks").wait_for()

    for player in (alice, bob):
        await player.get_by_role("button", name="Ready", exact=True).click()
    players = [alice, bob]
    for page in (*players, carol):
        await wait_status(page, ("playing",))
    while True:
        # Decide from Alice's view once both pages hold the same version.
        view = await page_view(alice)
        version = await page_version(alice)
        await at_version(bob, view["room"], version)
        if view["status"] == "finished":
            break
        assert await carol.locator(OFFERED).count() == 0
        await click_offered(players[view["to_act"][0]])
        await at_version(alice, view["room"], version + 1)
    for page in (*players, carol):
        await page.locator(OUTCOME).wait_for()

    # The spectator's page holds exactly what a spectator may see.
    watcher = await Client.connect(web_server.ws_url, name="checker")
    try:
        mirror = await watcher.join(code=code, watch=True)
        await at_version(carol, mirror.room, mirror.version)
        assert await page_view(carol) == as_json(mirror.view)
    finally:
        await watcher.close()
