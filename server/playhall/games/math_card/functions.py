"""The maths of the function cards (project additions), keyed by card id.

Each is a function of one exact fraction. Temporary calculation checks ``f(input) == output``;
operator-value applies ``f`` to a lane's running value. Kept apart from the card table so the
table stays plain data.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

FUNCTIONS: dict[str, Callable[[Fraction], Fraction]] = {
    "100001": lambda x: 2 * x,  # Doubling
    "100002": lambda x: x + 1,  # Successor
    "100003": lambda x: x * x,  # Square
    "100004": lambda x: x / 2,  # Halving
}


def apply_function(card_id: str, x: Fraction) -> Fraction:
    return FUNCTIONS[card_id](x)
