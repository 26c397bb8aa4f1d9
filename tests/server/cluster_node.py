"""A Redis Cluster of one node, holding all 16384 hash slots: a real Redis that refuses what a
Cluster refuses (``CROSSSLOT`` for a script call, a multi-key command or a transaction whose
keys span slots) while a plain client needs no cluster routing. The store's single-slot steps
are run on it to prove they are single-slot."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from playhall.store.embedded import redis_server_binary

from .process import free_port

#: Seconds a node takes to say its slots are served, at most.
READY: float = 20.0


def _cluster_port() -> int:
    """A free port whose cluster bus port (10000 above it) is free too."""
    while True:
        port = free_port()
        if port > 55535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


@contextmanager
def cluster_node(directory: Path) -> Iterator[str]:
    """Start a one-node Cluster in ``directory``; its URL for the time of the ``with``."""
    port = _cluster_port()
    process = subprocess.Popen(
        [
            redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1",
            "--cluster-enabled", "yes", "--cluster-config-file", str(directory / "nodes.conf"),
            "--dir", str(directory), "--save", "", "--appendonly", "no",
            "--logfile", str(directory / "redis.log"),
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        deadline = time.monotonic() + READY
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    log = (directory / "redis.log").read_text(errors="replace")
                    raise RuntimeError(f"the one-node cluster did not start:\n{log}") from None
                time.sleep(0.02)
        client.execute_command("CLUSTER ADDSLOTS", *range(16384))
        while client.execute_command("CLUSTER INFO").get("cluster_state") != "ok":
            if time.monotonic() > deadline:
                raise TimeoutError("the one-node cluster did not serve its slots")
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}"
    finally:
        client.close()
        process.terminate()
        process.wait(10)
