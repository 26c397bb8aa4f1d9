"""The game RNG: HMAC-SHA256 in counter mode as specified, resumable from its plain-data state,
unbiased bounds, separate streams per label."""

import hashlib
import hmac
from collections import Counter

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from playhall.games.rng import Rng, bot_state, int_key, seed_state


def _word(key: bytes, label: str, w: int) -> int:
    """Word ``w`` of a stream, written from the specification, not from the module."""
    block = hmac.new(key, label.encode() + (w // 4).to_bytes(8, "big"), hashlib.sha256).digest()
    return int.from_bytes(block[8 * (w % 4) : 8 * (w % 4) + 8], "big")


@given(key=st.binary(min_size=32, max_size=32), label=st.sampled_from(["game", "bot/7"]),
       start=st.integers(0, 2**20))
def test_words_are_hmac_sha256_blocks_of_the_label_and_counter(
    key: bytes, label: str, start: int
) -> None:
    r = Rng({"key": key, "label": label, "counter": start})
    assert [r.next64() for _ in range(9)] == [_word(key, label, start + i) for i in range(9)]
    assert r.state == {"key": key, "label": label, "counter": start + 9}


@given(drawn=st.integers(0, 40))
def test_resuming_from_stored_state_continues_the_same_sequence(drawn: int) -> None:
    a = Rng(seed_state(int_key(42)))
    [a.next64() for _ in range(drawn)]  # stop anywhere, mid-block too
    stored = msgpack.unpackb(msgpack.packb(a.state))  # as Redis gives it back
    b = Rng(stored)
    assert [a.below(1000) for _ in range(50)] == [b.below(1000) for _ in range(50)]


def test_an_int_stands_for_the_key_of_its_32_big_endian_bytes() -> None:
    assert Rng(7).state == seed_state(int_key(7)) == {
        "key": (7).to_bytes(32, "big"), "label": "game", "counter": 0
    }


@pytest.mark.parametrize("key", [b"", b"x" * 31, b"x" * 33])
def test_a_key_must_be_32_bytes(key: bytes) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        seed_state(key)
    with pytest.raises(ValueError, match="32 bytes"):
        Rng({"key": key, "label": "game", "counter": 0})


def test_a_key_must_be_bytes() -> None:
    # (The compiled build refuses the type before the function's own check does.)
    with pytest.raises((TypeError, ValueError)):
        seed_state("x" * 32)  # type: ignore[arg-type]


def test_a_bots_stream_is_its_own_per_version() -> None:
    key = int_key(5)
    game = Rng(seed_state(key)).next64()
    bots = {Rng(bot_state(key, v)).next64() for v in range(20)}
    assert game not in bots and len(bots) == 20
    assert bot_state(key, 3) == {"key": key, "label": "bot/3", "counter": 0}


def test_below_rejects_a_word_at_or_over_the_largest_multiple_of_the_bound() -> None:
    # For n = 2**63 + 1 the largest multiple under 2**64 is n itself: about half the words are
    # refused, and each refused word costs one more from the stream.
    n = 2**63 + 1
    key = int_key(9)
    r = Rng(seed_state(key))
    w = 0
    refused = 0
    for _ in range(200):
        value = r.below(n)
        while _word(key, "game", w) >= n:
            w += 1
            refused += 1
        assert value == _word(key, "game", w) % n
        w += 1
    assert r.state["counter"] == w and 40 < refused < 400


@given(key=st.binary(min_size=32, max_size=32),
       n=st.one_of(st.integers(1, 200), st.integers(1, 2**64),
                   st.sampled_from([255, 256, 2**63, 2**63 + 1, 2**64 - 1, 2**64, 3 * 2**62])))
def test_below_keeps_a_word_only_under_the_largest_multiple_of_the_bound(
    key: bytes, n: int
) -> None:
    # The specification's words: under limit = 2^64 - (2^64 mod n), each taken modulo n.
    limit = 2**64 - 2**64 % n
    r = Rng(seed_state(key))
    w = 0
    for _ in range(12):
        while _word(key, "game", w) >= limit:
            w += 1
        assert r.below(n) == _word(key, "game", w) % n
        w += 1
    assert r.state["counter"] == w


def test_die_rolls_cover_one_to_six_evenly() -> None:
    r = Rng(7)
    counts = Counter(r.between(1, 6) for _ in range(6000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(850 < c < 1150 for c in counts.values())


def test_shuffle_is_fisher_yates_from_the_last_index_down() -> None:
    r, reference = Rng(3), Rng(3)
    items = list(range(105))
    r.shuffle(items)
    expected = list(range(105))
    for i in range(104, 0, -1):
        j = reference.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected and sorted(items) == list(range(105)) != items
    assert r.state == reference.state


def test_below_refuses_an_empty_range() -> None:
    with pytest.raises(ValueError):
        Rng(1).below(0)


def test_below_refuses_a_bound_no_64_bit_word_can_meet() -> None:
    # Past 2^64 the largest multiple of n up to 2^64 is 0: no word would ever be kept.
    r = Rng(1)
    with pytest.raises(ValueError, match="2\\^64"):
        r.below(2**64 + 1)
    assert r.state["counter"] == 0
