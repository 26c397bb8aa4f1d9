"""A real nginx in front of a real server, with the shipped deploy/nginx/playhall.conf adapted to
test ports: its listen ports on loopback, its upstream the test server's port, its certificate
one made at test time by ``openssl`` for 127.0.0.1. Everything else (the /play/ location, the
headers, the websocket upgrade) is the file as shipped, so a change to it is what is tested.

Without nginx (``/usr/sbin/nginx`` or on PATH) or openssl the tests that need them are skipped
saying why; with ``CI=true`` they fail instead (.ci/run installs both).
"""

from __future__ import annotations

import asyncio
import functools
import getpass
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .conftest import free_port
from .shipped import adapted, executable, missing, start_on_free_ports, stop

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "deploy" / "nginx" / "playhall.conf"


def nginx_executable() -> str:
    found = executable("nginx")
    if found is None:
        missing("no nginx for the reverse-proxy tests: apt-get install nginx")
    if shutil.which("openssl") is None:
        missing("no openssl to make the reverse-proxy tests' certificate: apt-get install openssl")
    return found


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert),
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


def adapt(upstream: int, http_port: int, https_port: int, cert: Path, key: Path) -> str:
    return adapted(SHIPPED, [
        (r"server 127\.0\.0\.1:8765;", f"server 127.0.0.1:{upstream};", 1),
        (r"^\s*listen \[::\]:\d+.*\n", "", 2),  # no IPv6 needed on loopback
        (r"listen 80;", f"listen 127.0.0.1:{http_port};", 1),
        (r"listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;", 1),
        (r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", 1),
        (r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", 1),
    ])


@dataclass
class Nginx:
    folder: Path
    http_port: int
    https_port: int
    cert: Path
    upstream: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        """The page's address through the proxy, sub-path included."""
        return f"https://127.0.0.1:{self.https_port}/play/"

    @property
    def ws_url(self) -> str:
        return f"wss://127.0.0.1:{self.https_port}/play/"

    async def start(self, timeout: float = 15) -> None:
        """Start nginx and wait until it serves: its plain port answers as nginx (a worker
        runs, which nginx starts only once it has bound both ports) and its TLS port accepts.
        On two other ports if one was taken since it was picked (nginx keeps trying to bind
        it for a while, then exits saying so)."""
        await start_on_free_ports(
            functools.partial(self._start_once, timeout),
            lambda failure: "bind() to" in self.errors(), self._move, "nginx",
        )

    def _move(self) -> None:
        again = configure(self.folder, self.upstream)
        self.http_port, self.https_port, self.cert = again.http_port, again.https_port, again.cert
        (self.folder / "error.log").unlink(missing_ok=True)

    async def _start_once(self, timeout: float) -> None:
        self.process = subprocess.Popen(
            [nginx_executable(), "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"),
             "-e", str(self.folder / "error.log"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not await self._serving():
            if self.process.poll() is not None or loop.time() > deadline:
                raise RuntimeError(f"nginx did not start: {self.errors()}")
            await asyncio.sleep(0.05)  # polling for readiness, not standing in for sync

    async def _serving(self) -> bool:
        """Whether nginx itself serves both ports (not another process that holds one)."""
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.http_port)
            try:
                writer.write(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                head = await asyncio.wait_for(reader.read(4096), 1)
            finally:
                writer.close()
            _, writer = await asyncio.open_connection("127.0.0.1", self.https_port)
            writer.close()
        except OSError:  # (TimeoutError among them: nothing answered yet)
            return False
        return b"\r\nserver: nginx" in head.lower()

    def errors(self) -> str:
        log = self.folder / "error.log"
        return log.read_text(errors="replace")[-3000:] if log.exists() else ""

    def stop(self) -> None:
        stop(self.process, signal.SIGQUIT)  # graceful: finish, then exit


def configure(folder: Path, upstream: int) -> Nginx:
    """nginx's own config in ``folder``, around the shipped file adapted to test ports."""
    nginx_executable()  # skip (or fail under CI) before making anything
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = make_certificate(folder)
    http_port, https_port = free_port(), free_port()
    site = adapt(upstream, http_port, https_port, cert, key)
    (folder / "playhall.conf").write_text(site)
    temp = "".join(f"    {kind}_temp_path {folder / kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(
        f"user {getpass.getuser()};\nworker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\n"
        "events { worker_connections 256; }\n"
        f"http {{\n    access_log {folder / 'access.log'};\n{temp}"
        f"    include {folder / 'playhall.conf'};\n}}\n"
    )
    return Nginx(folder, http_port, https_port, cert, upstream)
