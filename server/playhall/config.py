"""Server configuration: one dataclass, filled from command-line flags and PLAYHALL_* variables.

Every knob an operator may need is here with its default and why it has that default; the
operations page in docs/ lists them.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    #: Redis to use; empty means start a private embedded Redis in ``data_dir``.
    redis_url: str = ""
    data_dir: Path = field(default_factory=lambda: Path("playhall-data"))
    #: Embedded Redis fsync policy: "always" loses nothing even if the machine dies;
    #: "everysec" loses at most a second on power loss (a killed server process loses nothing
    #: either way: the data is in Redis' memory).
    redis_fsync: str = "everysec"
    #: Key prefix, so several deployments (or test runs) can share one Redis.
    key_prefix: str = "ph:"
    #: Name of this process for room leases. A restarted process with the same name takes its
    #: rooms back at once; a different process waits for the lease to expire.
    instance: str = field(default_factory=lambda: socket.gethostname())
    lease_ms: int = 10_000
    #: Largest frame accepted from a client; larger ones close the connection (1009).
    max_frame: int = 64 * 1024
    #: Per-connection message rate: sustained messages/second and burst size.
    rate: float = 40.0
    burst: int = 80
    #: Frames queued for one connection before its room updates are replaced by a later
    #: snapshot; a connection that stays full for ``slow_timeout`` seconds is closed.
    outbox: int = 256
    slow_timeout: float = 20.0
    #: Commands queued for one room before further ones are refused with "overloaded".
    room_inbox: int = 256
    #: Pause before a server-side bot moves, so people can follow the game.
    bot_delay: float = 0.6
    #: Seconds a room stays in memory with nobody watching and nothing scheduled.
    idle_evict: float = 120.0
    #: Seconds a seat whose player dropped keeps receiving per-version diffs in history.
    away_grace: float = 120.0
    #: Diffs kept per room for reconnecting clients.
    history: int = 64
    #: Seconds SIGTERM waits for rooms to finish the commands they hold.
    drain_timeout: float = 10.0
    log_format: str = "auto"  # auto | json | console
    log_level: str = "info"
    #: Directory of static browser client files served at "/", if any.
    web_dir: Path | None = None

    @classmethod
    def from_env(cls, **overrides: Any) -> Config:
        """Defaults, then PLAYHALL_<NAME> variables, then explicit overrides (flags)."""
        config = cls()
        for f in fields(cls):
            raw = os.environ.get(f"PLAYHALL_{f.name.upper()}")
            if raw is not None:
                setattr(config, f.name, _parse(getattr(config, f.name), raw, f.name))
        for name, value in overrides.items():
            if value is not None:
                setattr(config, name, value)
        if config.instance == socket.gethostname():
            # Two processes on one host must not share a lease name; the port tells them apart.
            config.instance = f"{config.instance}:{config.port}"
        return config


def _parse(current: Any, raw: str, name: str) -> Any:
    if isinstance(current, bool):
        return raw.lower() in {"1", "true", "yes", "on"}
    if isinstance(current, int):
        return int(raw)
    if isinstance(current, float):
        return float(raw)
    if isinstance(current, Path) or name.endswith("_dir"):
        return Path(raw)
    return raw
