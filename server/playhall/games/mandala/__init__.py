"""Mandala (Lookout Games, 2019): the two-player game, and the solo game against Master Yoga.

Rules: /work/shared/rules (seed and rulings) and the player page docs/games/mandala.md.
"""

from .engine import Mandala

GAME = Mandala()

__all__ = ["GAME", "Mandala"]
