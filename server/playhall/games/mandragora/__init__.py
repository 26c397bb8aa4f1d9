"""Mandragora Mania: a two-seat sowing game with shared areas, piece stacks and extra turns.

Rules: ``docs/games/mandragora.md`` restates the seed rules, the numbered rulings that override
them, and every project decision.
"""

from .engine import MandragoraGame

GAME = MandragoraGame()

__all__ = ["GAME", "MandragoraGame"]
