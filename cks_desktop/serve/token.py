"""The bearer token ``mcp serve --http`` requires, kept in the OS keychain.

Generated on first use (32 random bytes, URL-safe), stored under ``mcp-serve/token`` through
``SecretStore`` (never in the settings file), and shown once, when it is made; later starts
read it back (``cks-desktop mcp token`` shows it again, ``--rotate`` replaces it). Without a
secure keychain a token is made for each run and shown each time: it cannot be kept.
Comparison is constant-time (``hmac.compare_digest``).
"""

from __future__ import annotations

import hmac
import secrets as _random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp.server.auth.provider import AccessToken

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore

TOKEN_REF = "mcp-serve/token"
CLIENT_ID = "mcp-host"


@dataclass(frozen=True)
class Token:
    value: str
    new: bool  # made just now: show it (it is shown once)
    kept: bool  # in the keychain (False: this run only)


def ensure_token(secrets: "SecretStore", *, rotate: bool = False) -> Token:
    existing = None if rotate else secrets.get(TOKEN_REF)
    if existing:
        return Token(existing, new=False, kept=True)
    value = _random.token_urlsafe(32)
    if secrets.secure:
        secrets.set(TOKEN_REF, value)
        kept = secrets.last_error is None
    else:
        kept = False
    return Token(value, new=True, kept=kept)


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one token (what ``BearerAuthBackend`` asks)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id=CLIENT_ID, scopes=[])
        return None
