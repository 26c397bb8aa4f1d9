"""Pure rule engines, one package per game.

Nothing here imports asyncio, Redis, the network or any other part of the server: a game is a
plain definition (see :mod:`playhall.games.contract`) and the server does the rest. A package
that exposes a module-level ``GAME`` is picked up by :mod:`playhall.catalog` without any change
to the server.
"""
