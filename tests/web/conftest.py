"""Browser tests: a real ``playhall serve`` process (with its embedded Redis in a data dir of
its own) on a free port, and the system's Chromium driven by Playwright for Python.

The browser is never downloaded: ``PLAYHALL_CHROMIUM`` names the executable, else ``chromium``
on PATH (Debian: ``apt-get install chromium``). Without one the browser tests are skipped with a
reason saying so; with ``CI=true`` a missing browser (or a missing playwright package) fails the
run instead, so CI never passes by skipping them.

Fixtures:

- ``web_server``: a fresh server process per test (``.url`` is ``http://127.0.0.1:PORT/``,
  ``.ws_url`` its websocket); ``await web_server.kill_and_restart()`` is an operator's
  ``kill -9`` followed by a restart on the same port and data dir (``kill()`` and ``restart()``
  separately too). ``start_web_server(extra_args)`` starts one with more ``playhall serve``
  options (e.g. ``["--bot-delay", "0.3"]``), and ``plugins`` more folders on its path (game
  plugins, tests/plugins.py).
- ``browser``: one Chromium for the session.
- ``page``: a page in a fresh context (its own localStorage: its own player) whose base URL is
  the server, so ``await page.goto("/")`` opens the web client. ``new_page(viewport=...)``
  makes more, each in a context of its own (two players, a spectator, a phone-sized screen).
- Every page made by these fixtures records uncaught exceptions and console errors; the test
  fails at teardown if there were any. ``page_errors.allow(pattern)`` accepts console errors
  matching a regex (e.g. the failed websocket attempts while a killed server is down); an
  uncaught exception is never accepted.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from playhall.store.embedded import EmbeddedRedis

from ..server.conftest import free_port
from ..server.process import ServerProcess

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, ViewportSize

#: Debian's Chromium as a headless test browser: no sandbox (CI runs as root), no GPU, and no
#: traffic of its own (updates, first-run pages).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
HOW_TO_GET_ONE = (
    "no Chromium for the browser tests: install one (`apt-get install chromium`) "
    "or set PLAYHALL_CHROMIUM to a Chromium/Chrome executable"
)
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
#: How long Playwright waits for a locator or a navigation (ms): generous for a shared machine.
TIMEOUT_MS = 15_000


def chromium_executable() -> str | None:
    configured = os.environ.get("PLAYHALL_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("chromium")


def _missing(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class WebServer:
    """A ``playhall serve`` process with its embedded Redis in ``data_dir``."""

    port: int
    data_dir: Path
    extra: list[str] = field(default_factory=list)
    #: More folders on the server's PYTHONPATH: game plugins (tests/plugins.py).
    plugins: list[Path] = field(default_factory=list)
    process: ServerProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "server.log"

    async def start(self) -> None:
        restarting = self.process is not None  # the page reconnects to the same port
        self.process = ServerProcess(
            self.port,
            None,
            "",
            f"web-{self.port}",
            ["--data-dir", str(self.data_dir), *self.extra],
            log_path=self.log_path,
            plugins=self.plugins,
        )
        await self.process.start(keep_port=restarting)
        self.port = self.process.port

    def kill(self) -> None:
        """``kill -9`` of the server (its embedded Redis lives on, as it does in production)."""
        assert self.process is not None
        self.process.kill()

    async def restart(self) -> None:
        """Start the server again on the same port and data dir."""
        await self.start()

    async def kill_and_restart(self) -> None:
        self.kill()
        await self.restart()

    def stop(self) -> None:
        if self.process is not None and self.process.process is not None:
            if self.process.process.poll() is None:
                self.process.terminate()  # drains, then stops its embedded Redis
        # After a kill -9 without a restart the Redis is still there: shut it down.
        EmbeddedRedis(self.data_dir).stop()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


StartWebServer = Callable[..., Awaitable[WebServer]]


@pytest.fixture
async def start_web_server(tmp_path: Path) -> AsyncIterator[StartWebServer]:
    started: list[WebServer] = []

    async def start(
        extra: list[str] | None = None, plugins: list[Path] | None = None
    ) -> WebServer:
        data_dir = tmp_path / f"server-{len(started)}"
        data_dir.mkdir()
        server = WebServer(free_port(), data_dir, list(extra or []), list(plugins or []))
        started.append(server)
        await server.start()
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
async def web_server(start_web_server: StartWebServer) -> WebServer:
    return await start_web_server()


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    executable = chromium_executable()
    if executable is None:
        _missing(HOW_TO_GET_ONE)
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _missing("the playwright package is missing: pip install -e '.[test]'")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        await launched.close()


@dataclass
class PageErrors:
    """Uncaught exceptions and console errors of the pages a test opened."""

    thrown: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)
    pages: int = 0

    def allow(self, pattern: str) -> None:
        """Accept console errors matching ``pattern`` (a regex searched in the message)."""
        self.allowed.append(re.compile(pattern))

    def watch(self, page: Page) -> None:
        self.pages += 1
        label = f"page {self.pages}"

        def thrown(error: Any) -> None:
            self.thrown.append(f"{label}: {error}")

        def console(message: Any) -> None:
            if message.type == "error":
                where = message.location.get("url") or "?"
                self.console.append(f"{label}: {message.text} (at {where})")

        page.on("pageerror", thrown)
        page.on("console", console)

    def unexpected(self) -> list[str]:
        kept = [c for c in self.console if not any(p.search(c) for p in self.allowed)]
        return [*self.thrown, *kept]


@pytest.fixture
def page_errors() -> PageErrors:
    return PageErrors()


NewPage = Callable[..., Awaitable["Page"]]


@pytest.fixture
async def new_page(
    browser: Browser, web_server: WebServer, page_errors: PageErrors
) -> AsyncIterator[NewPage]:
    """Pages in contexts of their own, all watched for errors; ``viewport`` defaults to a
    desktop (``PHONE`` is 390 px wide); ``base_url`` to ``web_server``; ``ignore_https_errors``
    for a proxy serving a certificate made at test time."""
    contexts: list[BrowserContext] = []

    async def make(
        viewport: ViewportSize | None = None,
        base_url: str | None = None,
        ignore_https_errors: bool = False,
    ) -> Page:
        context = await browser.new_context(
            base_url=base_url or web_server.url,
            viewport=viewport or DESKTOP,
            ignore_https_errors=ignore_https_errors,  # a certificate made at test time
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        made = await context.new_page()
        page_errors.watch(made)
        return made

    yield make
    for context in contexts:
        await context.close()
    problems = page_errors.unexpected()
    if problems:
        pytest.fail("the page reported errors:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture
async def page(new_page: NewPage) -> Page:
    return await new_page()


def unique_name(prefix: str = "p") -> str:
    """A player name no other test uses (names are at most 32 characters)."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"
