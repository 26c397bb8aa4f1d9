"""What the tests that run a shipped deploy/ file under a real program share (nginx.py,
balancer.py): the program, found or missing, starting it on ports that are still free (the
server's own start too: process.py), stopping it, and the file adapted to test ports by
replacements that insist on matching as often as the shipped file has them."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn

import pytest


def missing(reason: str) -> NoReturn:
    """Skip, saying why; fail instead under ``CI=true`` (.ci/run installs what is needed)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def executable(name: str) -> str | None:
    """``name`` on PATH or in /usr/sbin (where Debian puts servers), if it is anywhere."""
    found = shutil.which(name)
    if found is None and Path(f"/usr/sbin/{name}").is_file():
        found = f"/usr/sbin/{name}"
    return found


def adapted(shipped: Path, changes: list[tuple[str, str, int]]) -> str:
    """The shipped file with each change (a pattern, its replacement, how many times the shipped
    file has it) made by ``re.subn``, in order; a pattern that matches another number of times
    fails the test: the shipped file changed."""
    text = shipped.read_text()
    name = shipped.relative_to(shipped.parents[2])
    for pattern, new, count in changes:
        text, made = re.subn(pattern, new, text, flags=re.M)
        assert made == count, f"{name}: {pattern!r} matched {made}, not {count}"
    return text


def stop(process: subprocess.Popen[bytes] | None, graceful: signal.Signals) -> None:
    """Stop ``process`` (if it runs) with its graceful signal; killed if it takes over 10 s."""
    if process is not None and process.poll() is None:
        process.send_signal(graceful)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def start_on_free_ports(
    start: Callable[[], Awaitable[None]], port_taken: Callable[[RuntimeError], bool],
    move: Callable[[], None], name: str,
) -> None:
    """``start`` a program (it raises ``RuntimeError`` when the program exits or is not ready
    in time). Its ports were only free when they were picked: when it failed because another
    process took one since (``port_taken``, given the failure: the program's log says so),
    ``move`` it to others and start it again; three tries at most. (Servers, HAProxy and
    nginx alike: process.py, balancer.py, nginx.py.)"""
    for _ in range(3):
        try:
            await start()
            return
        except RuntimeError as failure:
            if not port_taken(failure):
                raise
        move()
    raise RuntimeError(f"{name} did not start: its ports were taken three times")
