"""Mandala (Lookout Games, 2019): the two-player game, and the solo game against Master Yoga.

Rules: docs/games/mandala.md, which restates the seed rules and the numbered rulings this
engine follows, and the project decisions where both are silent.
"""

from .engine import Mandala

GAME = Mandala()

__all__ = ["GAME", "Mandala"]
