"""Fog Tic-Tac-Toe, a Playhall game plugin (docs/writing-a-game.md builds it step by step).

The server finds ``GAME`` through the entry point this package declares in its
``pyproject.toml`` (group ``playhall.games``).
"""

from fog_tictactoe.game import FogTicTacToe

GAME = FogTicTacToe()
