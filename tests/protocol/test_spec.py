"""PROTOCOL.md against the code: every error code, close code, message type, view field and
limit the code has is in the spec with the same value. A change to the protocol that forgets
the spec fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from playhall.catalog import get_game
from playhall.config import Config
from playhall.games.rng import int_key
from playhall.rooms import views
from playhall.rooms.record import RoomRecord, Seat
from playhall_protocol import SUPPORTED_VERSIONS, VERSION, decode, encode, errors, messages

SPEC = (Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md").read_text("utf-8")


def _section(number: int) -> str:
    match = re.search(rf"^## {number} .*?(?=^## )", SPEC, re.S | re.M)
    assert match, f"section {number} missing"
    return match.group(0)


def _table_codes(text: str) -> set[str]:
    """First-column code words of a markdown table: | `code` | ..."""
    return set(re.findall(r"^\| `([a-z_.]+)` \|", text, re.M))


ERROR_CODES = {
    value
    for name, value in vars(errors).items()
    if name.isupper() and isinstance(value, str) and not name.startswith("CLOSE_")
}
CLOSE_CODES = {value for name, value in vars(errors).items() if name.startswith("CLOSE_") and value}


def test_every_error_code_is_in_the_table() -> None:
    assert _table_codes(_section(10)) == ERROR_CODES


def test_every_close_code_is_in_the_table() -> None:
    table = _section(11)
    for code in CLOSE_CODES | {1009}:
        assert re.search(rf"^\| \*\*{code}\*\*", table, re.M), code


@pytest.mark.parametrize("kind", sorted(messages.CLIENT_MESSAGES))
def test_every_client_message_is_described(kind: str) -> None:
    where = _section(3) if kind == "hello" else _section(4)
    assert f"`{kind}`" in where
    if kind != "hello":
        assert f"**`{kind}`**" in where, f"no paragraph for {kind}"
    for field in messages.CLIENT_MESSAGES[kind]:
        assert f"`{field.name}`" in where, (kind, field.name)


@pytest.mark.parametrize("kind", messages.SERVER_PUSHES)
def test_every_push_is_described(kind: str) -> None:
    text = _section(5) + _section(2)
    assert f"`{kind}`" in text


def test_view_fields_are_the_table() -> None:
    game = get_game("mantis")
    assert game is not None
    record = RoomRecord(
        id="r",
        game="mantis",
        options=game.normalize_options({}),
        seats=(Seat(), Seat()),
        secret=int_key(1),
        creator="p",
    )
    fields = set(views.room_view(record, game, None, views.ViewMemo()))
    assert _table_codes(_section(6)) == fields


def test_lobby_summary_fields() -> None:
    record = RoomRecord(
        id="r", game="mantis", options={}, seats=(Seat(),), secret=int_key(1), creator="p"
    )
    summary = set(views.lobby_summary(record, "Mantis"))
    table = re.search(r"\| summary field \|.*?\n\n", _section(4), re.S)
    assert table
    documented = set(re.findall(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)? \|", table.group(0), re.M))
    assert {name for pair in documented for name in pair if name} == summary


def test_protocol_version() -> None:
    assert VERSION == 1 and SUPPORTED_VERSIONS == (1,)
    assert SPEC.startswith("# The Playhall protocol, version 1")


def test_limits_match_the_code() -> None:
    config = Config()
    limits = _section(12)
    assert f"| {config.max_frame} bytes" in limits
    assert f"{config.rate:g}/s sustained, bursts of {config.burst}" in limits
    assert f"| {messages.MAX_KEY} characters |" in limits
    assert f"| {messages.MAX_NAME} characters |" in limits
    assert f"| {messages.MAX_TEXT} characters |" in limits
    token = next(f for f in messages.CLIENT_MESSAGES["hello"] if f.name == "token")
    assert f"| {token.max_len} characters |" in limits
    assert f"| {config.outbox}, then" in limits
    assert f"after {config.slow_timeout:g} s (4000)" in limits
    assert f"| {config.history} versions; dropped players' seats kept {config.away_grace:g} s" in (
        limits
    )
    assert f"| kept {config.finished_ttl // 86400} days" in limits
    assert f"| {config.address_rooms_per_minute} a minute (`too_many_rooms`) |" in limits
    assert f"| {config.new_players_per_minute} a minute (`rate_limited`) |" in limits
    assert f"| {config.connections_per_address} at once, from the moment" in limits
    assert f"| {config.http_rate:g} a second, bursts of {config.http_burst}; past" in limits
    assert f"at most {config.new_players_per_minute} new players a minute" in _section(3)
    assert "| 0 … 2^53−1 |" in limits and messages.MAX_ID == 2**53 - 1


def test_links_to_game_pages() -> None:
    for game in ("mantis", "mandragora", "mandala", "card_battle", "math_card"):
        assert f"(../docs/games/{game}.md)" in SPEC


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)


def test_example_bytes_decode_to_the_messages_shown() -> None:
    section = _section(13)
    blocks = _code_blocks(section)
    hex_blocks = [b for b in blocks if re.fullmatch(r"[0-9a-f\s]+", b)]
    decoded = [decode(bytes.fromhex("".join(b.split()))) for b in hex_blocks]
    assert decoded == [
        {"t": "move", "id": 6, "room": "PoMwhUs6Whm", "version": 4, "mid": "m1",
         "move": {"type": "score"}},
        {"t": "error", "re": 9, "code": "stale", "reason": "the room is at version 5",
         "version": 5},
        {"t": "update", "room": "PoMwhUs6Whm", "from": 2, "to": 3,
         "diff": [["set", ["seats", 0, "ready"], True]],
         "events": [{"type": "ready", "seat": 0, "ready": True}]},
    ]  # fmt: skip
    assert all(encode(message) == bytes.fromhex("".join(b.split()))
               for message, b in zip(decoded, hex_blocks, strict=True))  # fmt: skip
    annotated = next(b for b in blocks if b.startswith("84 "))
    raw = "".join(re.split(r"\s{2,}", line.strip())[0] for line in annotated.splitlines())
    frame = bytes.fromhex(raw.replace(" ", ""))
    assert len(frame) == 35
    assert decode(frame) == {"t": "hello", "id": 1, "protocol": [1], "name": "alice"}
    assert encode(decode(frame)) == frame


def test_json_examples_are_valid_json() -> None:
    for block in _code_blocks(SPEC):
        stripped = block.strip()
        if stripped.startswith("{") and "…" not in stripped and "..." not in stripped:
            for chunk in re.split(r"\n(?=\{)", stripped):
                json.loads(chunk)


def test_every_example_bot_is_in_section_14() -> None:
    folder = Path(__file__).resolve().parents[2] / "examples" / "bots"
    bots = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".mjs"))
    assert bots, "examples/bots is empty"
    for bot in bots:
        assert f"`{bot.name}`" in _section(14), bot.name
