"""Every event type and every `kind` a game page spells is one its engine emits.

The pages are what client authors code against, so a name that differs from the wire by one
character (`value-assertion` for `value_assertion`) breaks clients. What an engine can emit is
read from its source: every string literal given as the value of a "type" (events) or "kind"
(card kinds, open choices) key in a dict literal of the game's package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from playhall.games.math_card.cards import CARDS

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "games"
GAMES = ROOT / "server" / "playhall" / "games"
GAME_IDS = sorted(p.stem for p in PAGES.glob("*.md"))


def literals(game: str, key: str) -> set[str]:
    """String constants given for ``key`` in dict literals anywhere in the game's package, or in
    the game contract, whose helpers build the events every game sends (``left``,
    ``game_over``)."""
    found: set[str] = set()
    for path in [*(GAMES / game).glob("*.py"), GAMES / "contract.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values, strict=True):
                    if (isinstance(k, ast.Constant) and k.value == key
                            and isinstance(v, ast.Constant) and isinstance(v.value, str)):
                        found.add(v.value)
    return found


def events_section(text: str) -> str:
    """The page's "Events" section: from its heading to the next heading."""
    match = re.search(r"^#+ [^\n]*Events[^\n]*\n(.*?)(?=^#)", text + "\n#", re.M | re.S)
    assert match, "the page has no Events section"
    return match.group(1)


def documented_event_types(section: str) -> set[str]:
    """Event types as the pages write them: ``{"type": "a"|"b", ...}`` or a table whose first
    column names them (`a`, `b`)."""
    names: set[str] = set()
    for alternatives in re.findall(r'"type":\s*((?:"\w+"\|?)+)', section):
        names.update(re.findall(r'"(\w+)"', alternatives))
    for first_cell in re.findall(r"^\|\s*(`[^|]*?)\s*\|", section, re.M):
        names.update(re.findall(r"`(\w+)`", first_cell))
    return names


@pytest.mark.parametrize("game", GAME_IDS)
def test_every_documented_event_type_is_emitted(game: str) -> None:
    documented = documented_event_types(events_section((PAGES / f"{game}.md").read_text()))
    assert documented, f"{game}.md lists no event types"
    unknown = documented - literals(game, "type")
    assert not unknown, f"{game}.md names event types its engine never emits: {sorted(unknown)}"


def test_the_parsers_see_both_spellings() -> None:
    section = '- `{"type": "a"|"b", "x"}`\n\n| type | fields |\n|---|---|\n| `c`, `d` | `x` |\n'
    assert documented_event_types(section) == {"a", "b", "c", "d"}


def test_math_card_pool_kinds_are_the_wire_kinds() -> None:
    """Every card of the pool is on the page with the kind the view's ``pool`` sends, and every
    such kind is in the page's list of the ``pool``'s kinds."""
    text = (PAGES / "math_card.md").read_text()
    rows = dict(re.findall(r"^\| (\d{6}) \| [^|]+ \| ([^|]+?) \|", text, re.M))
    assert rows.keys() == CARDS.keys()
    for cid, kind in rows.items():
        assert kind == CARDS[cid]["kind"], f"card {cid}: the page says {kind!r}"
    [listed] = re.findall(r"^- `pool`: .*?`kind`, one of the kinds of §2 \(([^)]*)\)", text,
                          re.M | re.S)
    assert set(re.findall(r"`(\w+)`", listed)) == {c["kind"] for c in CARDS.values()}


@pytest.mark.parametrize("game", GAME_IDS)
def test_every_documented_choice_kind_is_emitted(game: str) -> None:
    """`kind` (`a`, `b`, ...) lists in a page name kinds the engine uses."""
    text = (PAGES / f"{game}.md").read_text()
    for listing in re.findall(r"`kind` \(([^)]*)\)", text):
        names = set(re.findall(r"`(\w+)`", listing))
        unknown = names - literals(game, "kind")
        assert not unknown, f"{game}.md names kinds its engine never uses: {sorted(unknown)}"


@pytest.mark.parametrize("game", GAME_IDS)
def test_pages_do_not_show_the_servers_visibility_mark(game: str) -> None:
    """The server strips ``visible_to`` before sending: a page that shows it shows a field the
    wire never carries."""
    assert "visible_to" not in (PAGES / f"{game}.md").read_text()
