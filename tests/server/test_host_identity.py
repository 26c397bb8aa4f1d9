"""Identity from the host's site, over a real server and Redis: a member who says hello with a
token the host signed (HS256 with a shared secret, RS256 with a PEM public key, or RS256 with the
keys the host publishes as a JWKS) is one player on every connection, with their rooms; an
expired, forged or foreign token is refused with ``bad_host_token`` saying what is wrong; and
anonymous players go on as before. The Python client and the JavaScript library (under Node,
tests/js/live_host_token.mjs) both say hello with such a token. The keys are made here."""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import msgpack
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from websockets.asyncio.client import connect

from playhall import app
from playhall.host_identity import HostTokens, player_id
from playhall_client import Client, ServerError

from .conftest import server_config
from .test_js_library import ROOT, node

ISSUER = "https://site.example"
AUDIENCE = "playhall-test"


def claims(sub: str, **more: Any) -> dict[str, Any]:
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": int(time.time()) + 600, **more}


def new_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@asynccontextmanager
async def hall(redis_url: str, **settings: str) -> AsyncIterator[str]:
    """A real server with the jwt_* ``settings``; yields its websocket URL."""
    running = await app.start(
        server_config(redis_url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE, **settings)
    )
    try:
        yield f"ws://127.0.0.1:{running.port}/"
    finally:
        await running.drain()


async def refusal(url: str, token: str) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await Client.connect(url, host_token=token, reconnect=False)
    assert caught.value.code == "bad_host_token"
    return caught.value


async def same_member_everywhere(url: str, token: str, again: str, name: str) -> None:
    """``token`` and ``again`` name one member: two connections are one player, who sees on
    the second the room they sat down in on the first."""
    first = await Client.connect(url, host_token=token)
    try:
        assert first.name == name and "token" not in first.welcome
        room = await first.create("mantis", 2)
        async def fresh() -> str:  # a site's token fetched for this hello
            return again

        second = await Client.connect(url, host_token=fresh)
        try:
            assert second.player == first.player
            assert room.room in second.welcome["rooms"]
        finally:
            await second.close()
    finally:
        await first.close()


async def test_hs256_member_is_one_player_and_bad_tokens_are_refused(redis_url: str) -> None:
    secret = secrets.token_hex(32)
    sub = f"member-{secrets.token_hex(4)}"
    async with hall(redis_url, jwt_key=secret) as url:
        await same_member_everywhere(
            url,
            jwt.encode(claims(sub, name="Ada"), secret, algorithm="HS256"),
            jwt.encode(claims(sub, name="Ada"), secret, algorithm="HS256"),
            "Ada",
        )
        expired = claims(sub, exp=int(time.time()) - 120)
        assert "expired" in (await refusal(url, jwt.encode(expired, secret))).reason
        forged = jwt.encode(claims(sub), secrets.token_hex(32), algorithm="HS256")
        assert "signature" in (await refusal(url, forged)).reason
        foreign = jwt.encode(claims(sub, aud="another-hall"), secret, algorithm="HS256")
        assert "audience" in (await refusal(url, foreign)).reason
        elsewhere = jwt.encode(claims(sub, iss="https://other.example"), secret)
        assert "issuer" in (await refusal(url, elsewhere)).reason
        nobody = {k: v for k, v in claims(sub).items() if k != "sub"}
        assert "'sub'" in (await refusal(url, jwt.encode(nobody, secret))).reason
        assert "not valid" in (await refusal(url, "not.a.jwt")).reason

        anonymous = await Client.connect(url, name="Anon")
        try:
            assert anonymous.token and anonymous.player != player_id(ISSUER, sub)
        finally:
            await anonymous.close()


async def test_the_javascript_library_says_hello_with_a_host_token(redis_url: str) -> None:
    secret = secrets.token_hex(32)
    sub = f"member-{secrets.token_hex(4)}"
    good = jwt.encode(claims(sub, name="Noor"), secret, algorithm="HS256")
    expired = jwt.encode(claims(sub, exp=int(time.time()) - 120), secret, algorithm="HS256")
    async with hall(redis_url, jwt_key=secret) as url:
        process = await asyncio.create_subprocess_exec(
            node(), "--experimental-websocket", "--no-warnings",
            str(ROOT / "tests" / "js" / "live_host_token.mjs"), url, good, expired,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()[-3000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["players"] == [player_id(ISSUER, sub)] * 2
    assert result["names"] == ["Noor", "Noor"] and not result["tokenGiven"]
    assert result["asked"] == 1 and result["roomSeenAgain"]
    refused = result["refused"]
    assert (refused["code"], refused["state"]) == ("bad_host_token", "closed")
    assert "expired" in refused["reason"] and refused["errors"] == ["bad_host_token"]


async def test_a_token_and_a_host_token_together_are_refused(redis_url: str) -> None:
    secret = secrets.token_hex(32)
    hello = {"t": "hello", "id": 1, "protocol": [1], "token": "a.b"}
    async with hall(redis_url, jwt_key=secret) as url, connect(url) as ws:
        await ws.send(msgpack.packb({**hello, "host_token": jwt.encode(claims("x"), secret)}))
        reply = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
        assert (reply["t"], reply["code"]) == ("error", "bad_message"), reply


async def test_rs256_with_a_pem_public_key(redis_url: str) -> None:
    key = new_rsa_key()
    sub = f"member-{secrets.token_hex(4)}"
    async with hall(redis_url, jwt_key=public_pem(key)) as url:
        token = jwt.encode(claims(sub, preferred_username="grace"), key, algorithm="RS256")
        await same_member_everywhere(url, token, token, "grace")
        forged = jwt.encode(claims(sub), new_rsa_key(), algorithm="RS256")
        assert "signature" in (await refusal(url, forged)).reason
        # A key for RSA takes no HMAC-signed token.
        hmac_signed = jwt.encode(claims(sub), secrets.token_hex(32), algorithm="HS256")
        assert "not allowed" in (await refusal(url, hmac_signed)).reason


@contextmanager
def jwks_server(keys: list[dict[str, Any]]) -> Iterator[tuple[str, list[str]]]:
    """A tiny HTTP server on loopback that serves ``keys`` as a JWKS; yields its URL and the
    paths it was asked for."""
    asked: list[str] = []
    body = json.dumps({"keys": keys}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json", asked
    finally:
        server.shutdown()
        server.server_close()


async def test_rs256_with_the_hosts_jwks(redis_url: str) -> None:
    key = new_rsa_key()
    public = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    sub = f"member-{secrets.token_hex(4)}"
    with jwks_server([{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]) as (keys, asked):
        async with hall(redis_url, jwt_jwks_url=keys) as url:
            token = jwt.encode(claims(sub, name="Lin"), key, "RS256", headers={"kid": "k1"})
            await same_member_everywhere(url, token, token, "Lin")
            assert asked == ["/.well-known/jwks.json"]  # fetched once, then kept
            stranger = jwt.encode(claims(sub), new_rsa_key(), "RS256", headers={"kid": "k1"})
            assert "signature" in (await refusal(url, stranger)).reason
            unknown = jwt.encode(claims(sub), key, "RS256", headers={"kid": "k9"})
            assert "not valid" in (await refusal(url, unknown)).reason
            # A key id the keys lack fetches them again at most every JWKS_REFETCH_EVERY s.
            assert asked == ["/.well-known/jwks.json"]


async def test_a_jwks_with_no_usable_key_refuses_the_token_not_the_server(
    redis_url: str,
) -> None:
    key = new_rsa_key()
    with jwks_server([{"kty": "nonsense", "kid": "k1"}]) as (keys, asked):
        async with hall(redis_url, jwt_jwks_url=keys) as url:
            token = jwt.encode(claims("someone"), key, "RS256", headers={"kid": "k1"})
            assert "not valid" in (await refusal(url, token)).reason
            assert asked


async def test_a_server_without_a_key_takes_no_host_tokens(url: str) -> None:
    token = jwt.encode(claims("someone"), secrets.token_hex(32), algorithm="HS256")
    assert "takes no host tokens" in (await refusal(url, token)).reason


def test_the_player_id_follows_from_issuer_and_subject_alone() -> None:
    assert player_id(ISSUER, "a") == player_id(ISSUER, "a")
    assert len({player_id(ISSUER, "a"), player_id(ISSUER, "b"), player_id("x", "a")}) == 3
    assert len(player_id(ISSUER, "a")) == 16 and len(secrets.token_hex(6)) == 12


@pytest.mark.parametrize(
    ("key", "jwks_url", "says"),
    [
        ("-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----", "", "PEM"),
        ("secret", "https://site.example/jwks", "not both"),
    ],
)
def test_a_key_that_cannot_be_used_is_refused_at_start(key: str, jwks_url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        HostTokens(key, jwks_url, "", "")


def test_playhall_serve_with_an_unreadable_key_stops_saying_why() -> None:
    bad = "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from playhall.cli import main; main(sys.argv[1:])",
         "serve", "--jwt-key", bad, "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "jwt_key: not a PEM public key" in done.stderr


def test_a_server_without_host_tokens_does_not_import_pyjwt() -> None:
    """PyJWT and cryptography's primitives cost a process some 10 MB of resident memory: a server
    that checks no host tokens never imports them; one that does, does (in a fresh interpreter:
    this one has them from the tests above)."""
    probe = (
        "import sys\n"
        "from playhall import app, cli\n"
        "from playhall.host_identity import HostTokens\n"
        "assert not HostTokens('', '', '', '').enabled\n"
        "before = sorted(m for m in sys.modules if m == 'jwt' or m.startswith('cryptography.h'))\n"
        "assert HostTokens('secret', '', '', '').enabled\n"
        "print(before, 'jwt' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["[]", "True"], done.stdout + done.stderr
