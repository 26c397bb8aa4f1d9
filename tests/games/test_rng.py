"""The game RNG: reproducible from its one-integer state, uniform enough, unbiased bounds."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playhall.games import rng
from playhall.games.rng import Rng
from tests.cext import c_extension, missing_reason


def test_resuming_from_stored_state_continues_the_same_sequence() -> None:
    a = Rng(42)
    [a.next64() for _ in range(10)]
    b = Rng(a.state)
    assert [a.below(1000) for _ in range(50)] == [b.below(1000) for _ in range(50)]


def test_known_first_outputs_pin_the_algorithm() -> None:
    # splitmix64 reference values for seed 0 (published with the algorithm).
    r = Rng(0)
    assert r.next64() == 0xE220A8397B1DCDAF
    assert r.next64() == 0x6E789E6AA1B965F4


def test_die_rolls_cover_one_to_six_evenly() -> None:
    r = Rng(7)
    counts = Counter(r.between(1, 6) for _ in range(6000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(850 < c < 1150 for c in counts.values())


def test_shuffle_is_a_permutation() -> None:
    r = Rng(3)
    items = list(range(105))
    r.shuffle(items)
    assert sorted(items) == list(range(105)) and items != list(range(105))


# -- the C twin of shuffle (_splitmix.c) ---------------------------------------------------------

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def test_lists_are_shuffled_by_the_c_twin() -> None:
    # Installs build it where a C compiler is at hand (tests.cext: skipped where not built).
    _splitmix = c_extension("playhall.games._splitmix")
    if _splitmix is None:
        pytest.skip(missing_reason("playhall.games._splitmix"))
    assert rng._C_SHUFFLE is _splitmix.shuffle


@settings(max_examples=300)
@given(state=st.integers(0, _MASK), size=st.integers(0, 300))
def test_c_shuffle_draws_exactly_what_the_reference_draws(state: int, size: int) -> None:
    fast, slow = Rng(state), Rng(state)
    a, b = list(range(size)), list(range(size))
    fast.shuffle(a)  # the C twin, where built
    slow.shuffle_reference(b)
    assert a == b
    assert fast.state == slow.state


def _state_whose_next_output_is(output: int) -> int:
    """The state from which ``next64`` returns ``output``: splitmix64's mixing is a bijection
    (xor-shifts and odd multipliers undone in reverse order)."""

    def unshift(y: int, k: int) -> int:
        z = y
        for _ in range(64 // k + 1):
            z = y ^ (z >> k)
        return z

    z = unshift(output, 31)
    z = unshift(z * pow(0x94D049BB133111EB, -1, 1 << 64) & _MASK, 27)
    z = unshift(z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64) & _MASK, 30)
    return (z - _GAMMA) & _MASK


def test_both_shuffles_reject_a_draw_that_would_bias_the_bound() -> None:
    # A draw of 2**64 - 1 is refused for any bound that does not divide 2**64 (6 does not) and
    # taken for one that does (4): a refused draw costs one step of the generator more.
    start = _state_whose_next_output_is(_MASK)
    assert Rng(start).next64() == _MASK
    for size, steps in ((6, 6), (4, 3)):  # 5 or 3 draws, and one refused for 6
        for shuffle in ("shuffle", "shuffle_reference"):
            r = Rng(start)
            items = list(range(size))
            getattr(r, shuffle)(items)
            assert r.state == (start + steps * _GAMMA) & _MASK, (size, shuffle)
            assert sorted(items) == list(range(size))
        c, py = Rng(start), Rng(start)
        a, b = list(range(size)), list(range(size))
        c.shuffle(a)
        py.shuffle_reference(b)
        assert a == b
