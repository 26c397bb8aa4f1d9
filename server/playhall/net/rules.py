"""Each game's rules page, served as HTML at ``/rules/<game id>`` (and a list at ``/rules/``).

The one source is the game's page in the repository, ``docs/games/<id>.md``. A wheel carries
those files as ``playhall/rules/<id>.md`` (copied there by the build, setup.py, never kept twice
in git); a checkout or an editable install reads them from ``docs/games/`` itself. They are
rendered once, when the server starts, with markdown-it-py (CommonMark plus tables; raw HTML in
the source is shown as text, not passed through), into pages that join the web client's table
of files (:mod:`playhall.net.web`): no request names a file, only a key of that table.

Every URL in a page is relative (``../app/rules.css``, the web client's stylesheet for them;
``../``, the lobby), so the pages work wherever the web client does, under a proxy's sub-path
too.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from markdown_it import MarkdownIt

import playhall
from playhall.net.web import WebFile, plugin_file, web_file

#: Where the build puts the game pages inside the package (setup.py copies docs/games/*.md).
PACKAGED = "rules"
#: The pages' plain stylesheet, one of the web client's files (playhall_web/static/app/), as a
#: URL relative to a rules page.
STYLESHEET = "../app/rules.css"
HTML = "text/html; charset=utf-8"


def sources() -> Traversable | None:
    """The folder of the game pages: the package's copy in an installed wheel, else the
    checkout's ``docs/games/`` (a checkout or an editable install); None if neither is there."""
    packaged = resources.files(playhall) / PACKAGED
    if packaged.is_dir():
        return packaged
    checkout = Path(playhall.__file__).resolve().parents[2] / "docs" / "games"
    return checkout if checkout.is_dir() else None


def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")


def title_of(md: MarkdownIt, markdown: str, fallback: str) -> str:
    """The text of the page's first level-one heading (``# Mandala (`mandala`)`` is
    "Mandala (mandala)"), else ``fallback``."""
    tokens = md.parse(markdown)
    for at, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h1":
            words = tokens[at + 1].children or []
            return "".join(w.content for w in words if w.type in ("text", "code_inline")).strip()
    return fallback


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)} · Playhall</title>\n"
        "<link rel=\"icon\" href=\"data:,\">\n"
        f"<link rel=\"stylesheet\" href=\"{STYLESHEET}\">\n</head>\n<body>\n"
        "<nav class=\"crumbs\"><a href=\"../\">Playhall</a> · <a href=\"./\">all rules</a></nav>\n"
        f"<main class=\"rules\">\n{body}</main>\n</body>\n</html>\n"
    )


def plugin_pages(packages: Mapping[str, str]) -> dict[str, Traversable]:
    """Each plugin game's own rules page, ``rules/<id>.md`` in the package that holds the game
    (``packages``: game id -> package), for the games that have one."""
    found = {gid: plugin_file(pkg, "rules", f"{gid}.md") for gid, pkg in packages.items()}
    return {gid: page for gid, page in found.items() if page is not None}


def load_pages(
    game_ids: Iterable[str],
    folder: Traversable | None = None,
    own: Mapping[str, Traversable] | None = None,
) -> dict[str, WebFile]:
    """The rules pages of the games in ``game_ids`` that have one, keyed by URL path
    (``/rules/mantis``) and the list of them (``/rules/``); empty if the pages are nowhere to be
    found. A game's page is its file in ``own`` (a plugin's: :func:`plugin_pages`), else
    ``<id>.md`` in ``folder`` (the built-ins')."""
    folder = sources() if folder is None else folder
    md = _renderer()
    pages: dict[str, WebFile] = {}
    listed: list[str] = []
    for game_id in sorted(game_ids):
        source = (own or {}).get(game_id) or (folder / f"{game_id}.md" if folder else None)
        if source is None or not source.is_file():
            continue
        text = source.read_text(encoding="utf-8")
        title = title_of(md, text, game_id)
        pages[f"/rules/{game_id}"] = web_file(_page(title, md.render(text)).encode(), HTML)
        listed.append(
            f"<li><a href=\"{html.escape(game_id)}\">{html.escape(title)}</a></li>\n"
        )
    if not pages:
        return {}
    index = "<h1>Rules</h1>\n<p>The rules of each game as this server plays them.</p>\n"
    pages["/rules/"] = web_file(_page("Rules", f"{index}<ul>\n{''.join(listed)}</ul>\n").encode(),
                             HTML)
    return pages
