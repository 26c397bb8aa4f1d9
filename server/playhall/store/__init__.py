"""Redis: the single source of truth for rooms, players, the lobby and move logs."""
