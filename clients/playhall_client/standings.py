"""Text for a player's record: a profile (ratings, wins, losses and draws per game, recent
games) and a game's leaderboard, as the terminal client prints them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

#: The outcome reasons of a game the server ended without a result (PROTOCOL.md, the view's
#: ``outcome``).
NO_RESULT: Final = frozenset({"abandoned", "closed_by_operator"})

Title = Callable[[str], str]


def rating_text(rating: dict[str, Any]) -> str:
    """``1523`` or ``1480?`` (provisional), with the rated games played."""
    mark = "?" if rating.get("provisional") else ""
    games = rating.get("games", 0)
    return f"{rating['rating']}{mark} ({games} rated game{'s' if games != 1 else ''})"


def profile_lines(profile: dict[str, Any], title: Title, now: float | None = None) -> list[str]:
    lines = [f"{profile['name']} (player {profile['player']})"]
    games = profile.get("games") or {}
    if not games:
        lines.append("  No finished games yet.")
    for game, entry in sorted(games.items()):
        counts = f"{entry['w']} won, {entry['l']} lost, {entry['d']} drawn"
        rating = entry.get("rating")
        shown = f" · rating {rating_text(rating)}" if rating else " · unrated"
        lines.append(f"  {title(game)}: {counts}{shown}")
    recent = profile.get("recent") or []
    if recent:
        lines.append("Recent games:")
        lines += [
            "  " + game_line(g, profile["player"], title, now) for g in recent
        ]
    if any(g.get("rating", {}).get("provisional") for g in games.values()):
        lines.append("(? = provisional: not on the leaderboard until more games are played)")
    return lines


def game_line(game: dict[str, Any], player: str, title: Title, now: float | None = None) -> str:
    """One finished game as ``player`` sees it: when, what, against whom, how it went."""
    seats = game.get("seats") or []
    mine = next((i for i, s in enumerate(seats) if s.get("player") == player), None)
    others = [s.get("name") or "bot" for i, s in enumerate(seats) if i != mine]
    outcome = game.get("outcome") or {}
    winners = outcome.get("winners") or []
    if outcome.get("reason") in NO_RESULT:  # the server ended it: nobody won or lost
        result = str(outcome["reason"]).replace("_", " ")
    elif not winners:
        result = "lost" if len(seats) == 1 else "draw"  # solo: the game itself won
    else:
        result = "won" if mine in winners else "lost"
    change = ""
    rating = seats[mine].get("rating") if mine is not None else None
    if rating:
        change = f" · {rating[0]} → {rating[1]}"
    versus = ", ".join(others) or "solo"
    return (
        f"{ago(game['at'], now)} {title(game['game'])} vs {versus}: {result}"
        f" ({outcome.get('reason', '?')}){change} · room {game['room']}"
    )


def leaderboard_lines(board: dict[str, Any], title: Title, start: int = 0) -> list[str]:
    players = board.get("players") or []
    lines = [f"{title(board['game'])} leaderboard:"]
    if not players:
        lines.append("  No established ratings yet.")
    for place, entry in enumerate(players, start + 1):
        lines.append(f"  {place:>3}. {entry['name']:<20} {rating_text(entry)}")
    return lines


def ago(at: float, now: float | None = None) -> str:
    """How long ago ``at`` was, as people say it: ``5 min ago``, ``3 h ago``, ``2 d ago``."""
    seconds = max(0.0, (time.time() if now is None else now) - at)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"
