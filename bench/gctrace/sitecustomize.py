"""Times the benchmark server's collections (``BENCH_TRACE``; see bench/slices.py).

``bench/moves.py`` puts this folder on the server's ``PYTHONPATH`` only while tracing, so the
interpreter imports this module at start-up: every collection's start (``perf_counter``),
length and generation go to ``$BENCH_GC_OUT`` as JSON when the server exits.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import time
from pathlib import Path
from typing import Any

_OUT = os.environ.get("BENCH_GC_OUT")

if _OUT:
    _pauses: list[tuple[float, float, int]] = []
    _began = [0.0]

    def _timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _began[0] = time.perf_counter()
        else:
            _pauses.append((_began[0], time.perf_counter() - _began[0], info["generation"]))

    gc.callbacks.append(_timed)
    atexit.register(lambda: Path(str(_OUT)).write_text(json.dumps(_pauses)))
