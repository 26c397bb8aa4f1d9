"""Identity from the host's own site: a ``hello`` may carry a signed token (a JWT) from the site
a hall runs beside, naming one of its members (``sub``) and their display name (``name``). The
server checks it with the key the host configured (``jwt_key``: an HS256 secret or a PEM public
key) or the keys the host publishes (``jwt_jwks_url``), through PyJWT, and the member becomes a
player whose id follows from the issuer and the subject alone, so they are the same player, with
the same seats and rooms, on every device.

Anything wrong with a token is refused with ``bad_host_token`` and a reason that says what:
expired, a signature that does not verify, another issuer or audience, a missing claim.

PyJWT and cryptography are imported only by a server configured to check host tokens: together
they add some 10 MB to a process's resident memory, which every other server would carry for
nothing (docs/benchmarks.md, "Memory").
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any, NamedTuple

from playhall.config import Config
from playhall_protocol import ProtocolError, errors
from playhall_protocol.messages import MAX_NAME

if TYPE_CHECKING:
    import jwt

#: Signatures checked with a public key (PEM or JWKS); an HMAC secret checks only the HS ones,
#: so a public key can never be taken for a shared secret.
PUBLIC_KEY_ALGORITHMS = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
]
SECRET_ALGORITHMS = ["HS256", "HS384", "HS512"]
#: Seconds of clock difference between the host and this server that ``exp`` and ``nbf`` allow.
LEEWAY = 30
#: Seconds the host's keys (JWKS) are kept before they are fetched again; and the least time
#: between two fetches forced by a key id the kept keys lack (a key the host just added), so
#: tokens naming made-up key ids cannot make this server hammer the host's key URL.
JWKS_LIFESPAN = 300
JWKS_REFETCH_EVERY = 30
JWKS_TIMEOUT = 5


class Member(NamedTuple):
    """The player a verified token names."""

    player: str
    #: The display name the token gives (``name``, else ``preferred_username``), or "".
    name: str


def player_id(issuer: str, subject: str) -> str:
    """The player id of ``subject`` at ``issuer``: the same every time, and 16 hex characters,
    so it never equals the 12 of a player the server made up."""
    return hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:16]


def _refused(reason: str) -> ProtocolError:
    return ProtocolError(errors.BAD_HOST_TOKEN, reason)


class HostTokens:
    """The configured way to check host tokens; ``enabled`` is False when there is none."""

    def __init__(self, key: str, jwks_url: str, issuer: str, audience: str) -> None:
        if key and jwks_url:
            raise ValueError("set jwt_key or jwt_jwks_url, not both")
        self.issuer = issuer
        self.audience = audience
        self._key: Any = None
        self._algorithms = PUBLIC_KEY_ALGORITHMS
        self._jwks: jwt.PyJWKClient | None = None
        if not (key or jwks_url):
            return  # no host tokens: PyJWT is not imported (see the module's docstring)
        import jwt
        from cryptography.hazmat.primitives.serialization import load_pem_public_key

        if key.lstrip().startswith("-----BEGIN"):
            try:
                self._key = load_pem_public_key(key.strip().encode())
            except ValueError as exc:
                raise ValueError(f"jwt_key: not a PEM public key ({exc})") from None
        elif key:
            self._key = key
            self._algorithms = SECRET_ALGORITHMS
        elif jwks_url:
            self._jwks = jwt.PyJWKClient(
                jwks_url,
                lifespan=JWKS_LIFESPAN,
                cooldown_duration=JWKS_REFETCH_EVERY,
                timeout=JWKS_TIMEOUT,
            )

    @classmethod
    def from_config(cls, config: Config) -> HostTokens:
        return cls(config.jwt_key, config.jwt_jwks_url, config.jwt_issuer, config.jwt_audience)

    @property
    def enabled(self) -> bool:
        return self._key is not None or self._jwks is not None

    async def verify(self, token: str) -> Member:
        """The member ``token`` names, or ``bad_host_token`` saying what is wrong with it."""
        if not self.enabled:
            raise _refused("this server takes no host tokens (it has no jwt_key or jwt_jwks_url)")
        import jwt  # (imported by __init__ already: enabled)

        try:
            if self._jwks is not None:
                # PyJWT fetches with urllib, which blocks: off the event loop.
                found = await asyncio.to_thread(self._jwks.get_signing_key_from_jwt, token)
                key = found.key
            else:
                key = self._key
            claims = jwt.decode(
                token,
                key,
                algorithms=self._algorithms,
                audience=self.audience or None,
                issuer=self.issuer or None,
                leeway=LEEWAY,
                options={"require": ["sub", "exp"]},
            )
        except jwt.ExpiredSignatureError:
            raise _refused("the host token has expired: get a fresh one from the site") from None
        except jwt.InvalidSignatureError:
            raise _refused("the host token's signature does not verify") from None
        except jwt.InvalidAudienceError:
            raise _refused(
                f"the host token is for another audience (this server is {self.audience!r})"
                if self.audience
                else "the host token names an audience, and this server has none configured"
            ) from None
        except jwt.InvalidIssuerError:
            raise _refused(f"the host token is from another issuer (not {self.issuer!r})") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _refused(f"the host token has no {exc.claim!r} claim") from None
        except jwt.PyJWKClientConnectionError:
            raise _refused("the host's keys (jwt_jwks_url) could not be fetched; retry") from None
        except jwt.PyJWTError as exc:  # anything else PyJWT refuses, the host's key set too
            raise _refused(f"the host token is not valid: {exc}") from None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            raise _refused("the host token's 'sub' claim is not a non-empty string")
        name = claims.get("name") or claims.get("preferred_username") or ""
        name = name.strip()[:MAX_NAME] if isinstance(name, str) else ""
        issuer = claims.get("iss")
        return Member(player_id(issuer if isinstance(issuer, str) else "", subject), name)
