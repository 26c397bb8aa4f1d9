"""``public_url``: the address players open the page at, checked when it is set and announced in
the ``hello`` reply (the page's share links use it); unset, the reply has no such field."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from playhall import app
from playhall.config import Config
from playhall_client.client import Client

from .conftest import server_config


@pytest.fixture
async def public(redis_url: str) -> AsyncIterator[app.Running]:
    config = server_config(redis_url)
    config.public_url = "https://games.example.org/play/"
    running = await app.start(config)
    yield running
    await running.drain()


async def test_hello_announces_the_public_url(public: app.Running) -> None:
    client = await Client.connect(f"ws://127.0.0.1:{public.port}/", name="alice")
    try:
        assert client.welcome["public_url"] == "https://games.example.org/play/"
    finally:
        await client.close()


async def test_without_a_public_url_hello_says_nothing_of_it(url: str) -> None:
    client = await Client.connect(url, name="alice")
    try:
        assert "public_url" not in client.welcome
    finally:
        await client.close()


def test_a_public_url_is_an_http_address_of_a_folder() -> None:
    env = {"PLAYHALL_PUBLIC_URL": "https://games.example.org/play"}
    assert Config.from_env(env).public_url == "https://games.example.org/play/"
    assert Config.from_env({"PLAYHALL_PUBLIC_URL": "http://10.0.0.5:8765/"}).public_url == (
        "http://10.0.0.5:8765/"
    )
    for bad in ("games.example.org", "ftp://games.example.org/", "https:///play/",
                "https://games.example.org/play/#room=x", "https://x.org/?a=1"):
        with pytest.raises(ValueError, match="public_url"):
            Config.from_env({"PLAYHALL_PUBLIC_URL": bad})
