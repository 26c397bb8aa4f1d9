"""Scraping a real server's ``/metrics`` over plain HTTP, and reading the exposition with
prometheus_client's own parser."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


async def http_get(
    port: int, path: str = "/metrics", headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """One GET on 127.0.0.1:``port``: the status, the headers (lower-case names), the body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    raw = await asyncio.wait_for(reader.read(), 10)  # the server closes after its answer
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    found = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        found[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), found, body.decode()


class Scrape:
    """An exposition, parsed: every sample by name and labels, and every family's type."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.types: dict[str, str] = {}
        self.samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
        for family in text_string_to_metric_families(text):
            self.types[family.name] = family.type
            for sample in family.samples:
                assert isinstance(sample, Sample)
                self.samples[sample.name, frozenset(sample.labels.items())] = sample.value

    def get(self, name: str, **labels: str) -> float:
        """A sample's value; 0 if the exposition has none with these labels (a labelled
        counter appears once first counted)."""
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels``."""
        want = set(labels.items())
        return sum(v for (n, ls), v in self.samples.items() if n == name and want <= ls)

    def by(self, name: str, label: str) -> dict[str, float]:
        """``name``'s samples by the value of one label."""
        return {dict(ls)[label]: v for (n, ls), v in self.samples.items() if n == name}


async def scrape(port: int, token: str | None = None) -> Scrape:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    status, _, body = await http_get(port, "/metrics", headers)
    assert status == 200, body
    return Scrape(body)
