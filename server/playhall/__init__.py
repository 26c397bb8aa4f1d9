"""Playhall: an authoritative realtime game server for turn-based tabletop games."""

__version__ = "0.1.0"
