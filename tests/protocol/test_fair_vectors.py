"""The fair-deal construction against its test vectors (``vectors/fair.json``, computed from
PROTOCOL.md's text by protocol/tools/make_vectors.py): the commitment and the room key
(``playhall_protocol.fairness``) and the games' generator (``playhall.games.rng``)."""

from __future__ import annotations

from typing import Any

import pytest

from playhall.games.rng import Rng
from playhall_protocol import fairness
from tests.protocol.vectors import load

FAIR = load("fair.json")


@pytest.mark.parametrize("case", FAIR["commitments"])
def test_commitments(case: dict[str, Any]) -> None:
    secret = bytes.fromhex(case["secret"])
    assert fairness.commitment(case["room"], secret).hex() == case["commitment"]


@pytest.mark.parametrize("case", FAIR["keys"])
def test_room_keys(case: dict[str, Any]) -> None:
    given = [bytes.fromhex(c) or None for c in case["contributions"]]
    key = fairness.room_key(bytes.fromhex(case["secret"]), case["room"], given)
    assert key.hex() == case["key"]


def test_keys_differ_by_seat_order_and_by_a_missing_contribution() -> None:
    keys = [case["key"] for case in FAIR["keys"] if case["room"] == "myjZIzuXI2M"]
    assert len(set(keys)) == len(keys) == 3


@pytest.mark.parametrize("case", FAIR["streams"])
def test_generator_streams(case: dict[str, Any]) -> None:
    def start() -> Rng:
        return Rng({"key": bytes.fromhex(case["key"]), "label": case["label"],
                    "counter": case["counter"]})  # fmt: skip

    words = start()
    assert [str(words.next64()) for _ in case["words"]] == case["words"]
    bounded = start()
    assert [[n, bounded.below(n)] for n, _ in case["below"]] == case["below"]
    assert bounded.state["counter"] == case["below_counter"]
    shuffled = start()
    deck = list(range(10))
    shuffled.shuffle(deck)
    assert deck == case["shuffle_10"] and shuffled.state["counter"] == case["shuffle_counter"]


def test_a_refused_word_is_in_the_vectors() -> None:
    # below(2**63 + 1) refuses about half of all words: the vectors show the cost of one.
    assert any(
        case["below_counter"] > len(case["below"]) for case in FAIR["streams"]
    ), "no stream refuses a word: the vectors do not pin the rejection rule"

