"""Card Battle: two hidden 20-card decks, then a battle that plays itself one paced turn at a
time. Rules: docs/games/card_battle.md."""

from .engine import CardBattle

GAME = CardBattle()

__all__ = ["GAME", "CardBattle"]
