"""Math Magic Card duel: a two-player deck-building duel of lanes, operators and assertions.

Rules for players: ``docs/games/math_card.md``. Modules: :mod:`.cards` (the pool as data),
:mod:`.functions` (function-card maths), :mod:`.board` (lanes and nearest), :mod:`.scoring`
(exact-fraction lane values and combinations), :mod:`.effects` (card effects and choices),
:mod:`.decks` (deck rules, ready-made decks), :mod:`.moves` (move shapes), :mod:`.engine` (turn
flow and the Game), :mod:`.bot`.
"""

from .engine import MathCardGame

GAME = MathCardGame()

__all__ = ["GAME", "MathCardGame"]
