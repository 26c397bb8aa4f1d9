"""The JavaScript library's package in Chromium: the entry its package.json exports, fetched
from the server as a browser gets it, is the module the page itself runs on (one copy), it
exports what its TypeScript declarations say, and its codec works in the browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Page

LIB = Path(__file__).resolve().parents[2] / "clients" / "playhall_web" / "static" / "lib"
OPEN = '[data-testid="conn-status"][data-state="open"]'


def declared_values() -> list[str]:
    """The values playhall.d.ts re-exports (its `export { ... }` blocks)."""
    text = (LIB / "playhall.d.ts").read_text()
    names = [n.strip() for block in re.findall(r"^export \{([^}]*)\}", text, re.M)
             for n in block.split(",")]
    return sorted(n for n in names if n)


async def test_the_package_entry_is_the_pages_library_in_chromium(page: Page) -> None:
    from playwright.async_api import expect

    entry = json.loads((LIB / "package.json").read_text())["exports"]["."]["default"]
    assert entry == "./playhall.js"
    await page.goto("/")
    await expect(page.locator(OPEN)).to_be_visible()
    found = await page.evaluate(
        """async (entry) => {
            const lib = await import(new URL(entry, new URL("lib/", location.href)).href);
            const bytes = lib.encode({ big: 2n ** 60n, half: new lib.Float(0.5), s: "é" });
            const back = lib.decodeFrame(bytes);
            return {
                names: Object.keys(lib).sort(),
                samePage: window.playhall instanceof lib.PlayhallConnection,
                big: back.big === 2n ** 60n,
                half: back.half instanceof lib.Float && back.half.value === 0.5,
                s: back.s,
            };
        }""",
        entry,
    )
    assert found == {
        "names": declared_values(),
        "samePage": True,
        "big": True,
        "half": True,
        "s": "é",
    }
