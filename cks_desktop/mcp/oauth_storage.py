"""A ``TokenStorage`` (the SDK's protocol) kept in the OS keychain, under the server's own names.

The SDK's ``OAuthClientProvider`` reads and writes the tokens and the client
registration through this object; nothing of it ever reaches settings.json or
a log. Entries (all owned by the server, see ``config.owns_secret``):

``mcp/<server>/oauth/tokens``        the token response, as JSON, plus ``expires_at``
``mcp/<server>/oauth/client``        the client registration (dynamic or CIMD), as JSON
``mcp/<server>/oauth/stepUp``        the ``WWW-Authenticate`` of a 403 ``insufficient_scope`` not yet answered
                                    (the next interactive sign-in asks for that scope, even in another process)
``mcp/<server>/oauth/clientSecret``  a pre-registered (or client-credentials) client's secret (typed in the settings)
``mcp/<server>/oauth/privateKey``    a client-credentials client's PEM key (``private_key_jwt``, oauth_grants.py)
``mcp/<server>/oauth/idToken``       the person's ID token for enterprise-managed authorization (and
``…/idpClientSecret``               the app's secret at the identity provider, if it has one)

Expiry. The SDK knows a token's expiry only for tokens it obtained in this
process (``expires_in`` is relative). So the absolute ``expires_at`` is stored
beside the token, and a token whose time has passed is handed back with an
empty access token: the provider then refreshes it (silently, with the refresh
token) instead of sending a dead token and asking the person to sign in again.
``expiry_of`` gives the provider's context the stored expiry for later requests.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from cks_desktop.mcp.config import OAuthSettings, secret_key

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore

SECTION = "oauth"
TOKENS = "tokens"
CLIENT = "client"
CLIENT_SECRET = "clientSecret"
STEP_UP = "stepUp"
EXPIRY_MARGIN = 30.0  # seconds before the stated expiry a token counts as expired (clock skew, latency)


def oauth_entry(server: str, what: str) -> str:
    """The keychain name of one OAuth entry of ``server``."""
    return secret_key(server, SECTION, what)


def oauth_entries(server: str) -> list[str]:
    """Every keychain name OAuth may create for ``server`` (sign-out and removal delete these)."""
    return [oauth_entry(server, w) for w in (TOKENS, CLIENT, STEP_UP)]


def pre_registered_auth_method(supported: list[str] | None) -> str:
    """How a pre-registered client with a secret authenticates at the token endpoint.

    ``client_secret_post`` where the authorization server lists it, else ``client_secret_basic``:
    the one RFC 6749 section 2.3.1 makes every server support, and RFC 8414's default when the
    metadata lists nothing."""
    return "client_secret_post" if supported and "client_secret_post" in supported else "client_secret_basic"


def _grants(granted: str | None, wanted: str | None) -> bool:
    """Whether a token's scope covers every scope of ``wanted`` (no scope named: any new token does)."""
    if not wanted:
        return True
    return set(wanted.split()) <= set((granted or "").split())


class KeychainTokenStorage:
    """Tokens and client information of one server, in the keychain (``secrets.py``).

    With a pre-registered client (``oauth.clientId`` in the settings) the client
    information is built from the settings and the keychain'd secret, never stored.
    Without a keychain at all (``secrets`` None: a probe) everything lives in this
    object only, for this run.
    """

    def __init__(self, server: str, secrets: "SecretStore | None", settings: OAuthSettings | None = None,
                 redirect_uri: str | None = None) -> None:
        self.server = server
        self.secrets = secrets
        self.settings = settings
        self.redirect_uri = redirect_uri
        self._memory: dict[str, str] = {}
        self._expires_at: dict[str, float] = {}  # access token -> absolute expiry
        self.stored = 0  # how many token responses were stored (a sign-in or a refresh happened)

    # -- raw entries -------------------------------------------------------------
    def _get(self, what: str) -> str | None:
        name = oauth_entry(self.server, what)
        if self.secrets is None:
            return self._memory.get(name)
        return self.secrets.get(name)

    def _set(self, what: str, value: str) -> None:
        name = oauth_entry(self.server, what)
        if self.secrets is None:
            self._memory[name] = value
        else:
            self.secrets.set(name, value)

    def _delete(self, what: str) -> None:
        name = oauth_entry(self.server, what)
        self._memory.pop(name, None)
        if self.secrets is not None:
            self.secrets.delete(name)

    # -- a step-up the server asked for ------------------------------------------------
    def remember_step_up(self, header: str) -> None:
        """Keep the server's 403 ``insufficient_scope`` challenge until a sign-in grants its scope.

        A call that meets it cannot always sign in (no browser: ``mcp call``, a background run);
        ``mcp login`` is often another process, whose stored token still satisfies ``tools/list``,
        so without this it would find nothing to do and the scope would never be asked for."""
        if header and len(header) <= 4096:
            self._set(STEP_UP, header)

    def pending_step_up(self) -> str | None:
        """The kept ``WWW-Authenticate`` of an unanswered step-up, if any."""
        return self._get(STEP_UP)

    def has_tokens(self) -> bool:
        return self._get(TOKENS) is not None

    def clear(self) -> None:
        """Sign out: forget the tokens and the registration (a pre-registered secret stays)."""
        for name in oauth_entries(self.server):
            self._memory.pop(name, None)
            if self.secrets is not None:
                self.secrets.delete(name)
        self._expires_at.clear()

    # -- the SDK's TokenStorage protocol ----------------------------------------------
    async def get_tokens(self) -> OAuthToken | None:
        raw = self._get(TOKENS)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            expires_at = data.pop("expires_at", None)
            token = OAuthToken.model_validate(data)
        except (ValueError, ValidationError, AttributeError):
            return None  # a damaged entry is the same as none: sign in again
        if isinstance(expires_at, int | float):
            left = expires_at - time.time()
            if left <= EXPIRY_MARGIN:
                if not token.refresh_token:
                    return None
                return token.model_copy(update={"access_token": "", "expires_in": 0})  # refresh first
            token = token.model_copy(update={"expires_in": int(left)})
            self._expires_at[token.access_token] = float(expires_at)
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.stored += 1
        if self._get(STEP_UP) is not None and _grants(tokens.scope, self._step_up_scope()):
            self._delete(STEP_UP)
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + tokens.expires_in
            self._expires_at[tokens.access_token] = data["expires_at"]
        self._set(TOKENS, json.dumps(data))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        pre = self.settings
        if pre is not None and pre.client_id:
            secret = self.secrets.get(pre.client_secret_ref) if (self.secrets and pre.client_secret_ref) else None
            redirect = [self.redirect_uri] if self.redirect_uri else None
            return OAuthClientInformationFull(
                client_id=pre.client_id, client_secret=secret, redirect_uris=redirect,  # type: ignore[arg-type]
                token_endpoint_auth_method="client_secret_post" if secret else "none",
                scope=pre.scope)
        raw = self._get(CLIENT)
        if raw is None:
            return None
        try:
            return OAuthClientInformationFull.model_validate_json(raw)
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.settings is not None and self.settings.client_id:
            return  # the settings hold a pre-registered client; nothing to keep
        self._set(CLIENT, client_info.model_dump_json(exclude_none=True))

    def _step_up_scope(self) -> str | None:
        header = self._get(STEP_UP)
        if not header:
            return None
        found = re.search(r'scope="([^"]*)"', header) or re.search(r"scope=([^\s,]+)", header)
        return found.group(1) if found else None

    # -- for the provider's context ---------------------------------------------------
    def expiry_of(self, token: OAuthToken) -> float | None:
        """The absolute expiry of an access token this storage handed out or stored, if known."""
        at = self._expires_at.get(token.access_token)
        return None if at is None else at - EXPIRY_MARGIN

    def registered_redirect(self) -> str | None:
        """The redirect URI of the stored registration (its loopback port must be used again)."""
        raw = self._get(CLIENT)
        if raw is None:
            return None
        try:
            info = OAuthClientInformationFull.model_validate_json(raw)
        except ValidationError:
            return None
        return str(info.redirect_uris[0]) if info.redirect_uris else None
