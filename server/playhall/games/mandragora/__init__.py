"""Mandragora Mania: a two-seat sowing game with shared areas, piece stacks and extra turns.

Rules: ``shared/rules/mandragora.seed.md`` as overridden by ``mandragora.rulings.md``; the
player-facing summary with every project decision is ``docs/games/mandragora.md``.
"""

from .engine import MandragoraGame

GAME = MandragoraGame()

__all__ = ["GAME", "MandragoraGame"]
