"""Mantis: flip, score or steal (2–6 players). See docs/games/mantis.md for the rules as played.

Modules: :mod:`.cards` (the deck as small ints and its decode tables), :mod:`.engine` (the
rules), :mod:`.bot` (a server-side bot playing from the public view).
"""

from .engine import Mantis

GAME = Mantis()

__all__ = ["GAME", "Mantis"]
