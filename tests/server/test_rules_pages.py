"""Each game's rules page, from the real server: ``/rules/<game id>`` is the game's page in
docs/games/ rendered to HTML (its title, its rulings), ``/rules/`` lists them, and an unknown id
is 404."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from playhall import app
from playhall.catalog import all_games
from playhall.net.rules import load_pages

from .test_web_files import http

DOCS = Path(__file__).resolve().parents[2] / "docs" / "games"
#: Characters of Markdown's inline markup: a run of words without them reads the same in HTML.
MARKUP = re.compile(r"[*`_\[\]<>&\\|]")


def text_of(page: bytes) -> str:
    """A page's text as a reader sees it: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.decode())).split())


def a_decision(markdown: str) -> str:
    """Six or more plain words from the first entry of the page's project decisions (the
    rulings the server made where the source rules are silent)."""
    section = re.split(r"\n## [^\n]*[Dd]ecisions[^\n]*\n", markdown, maxsplit=1)[1]
    entry = next(line for line in section.splitlines() if re.match(r"(\d+\.|-) ", line))
    runs: list[list[str]] = [[]]
    for word in entry.split()[1:]:
        if MARKUP.search(word):
            runs.append([])
        else:
            runs[-1].append(word)
    longest = max(runs, key=len)
    assert len(longest) >= 6, entry
    return " ".join(longest)


@pytest.mark.parametrize("game_id", sorted(all_games()))
async def test_each_game_has_its_rules_page_with_its_title_and_rulings(
    server: app.Running, game_id: str
) -> None:
    markdown = (DOCS / f"{game_id}.md").read_text()
    status, headers, body = await http(server.port, f"/rules/{game_id}")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in headers["content-security-policy"]
    title = markdown.splitlines()[0].removeprefix("# ").replace("`", "")
    assert f"<title>{html.escape(title)} · Playhall</title>" in body.decode()
    assert f"<h1>{title.split(' ')[0]}" in body.decode()
    assert a_decision(markdown) in text_of(body)
    assert '<link rel="stylesheet" href="../app/rules.css">' in body.decode()


async def test_the_rules_list_names_every_game_and_the_stylesheet_is_served(
    server: app.Running,
) -> None:
    status, _, body = await http(server.port, "/rules/")
    assert status == 200
    for game_id, game in all_games().items():
        assert f'<a href="{game_id}">' in body.decode(), game.id
    # The stylesheet a page names, resolved from /rules/<id>, and the colours it imports.
    for path in ("/app/rules.css", "/app/base.css"):
        status, headers, css = await http(server.port, path)
        assert status == 200 and headers["content-type"] == "text/css; charset=utf-8", path


@pytest.mark.parametrize(
    "path", ["/rules/chess", "/rules/mantis.md", "/rules/../pyproject.toml", "/rules/MANTIS",
             "/rules", "/rules/mantis/", "/rules/%2e%2e/docs/games/mantis.md"],
)
async def test_an_unknown_game_or_path_is_404(server: app.Running, path: str) -> None:
    status, _, body = await http(server.port, path)
    assert status == 404 and body == b"not found\n"


def test_raw_html_in_a_page_is_shown_as_text_not_passed_through(tmp_path: Path) -> None:
    (tmp_path / "mantis.md").write_text("# Mantis\n\n<script>alert(1)</script> <b>x</b>\n")
    page = load_pages(["mantis", "chess"], tmp_path)["/rules/mantis"].body.decode()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "/rules/chess" not in load_pages(["mantis", "chess"], tmp_path)


def test_no_pages_when_the_sources_are_missing(tmp_path: Path) -> None:
    assert load_pages(["mantis"], tmp_path) == {}
