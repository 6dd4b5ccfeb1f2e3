"""An OAuth-protected streamable-HTTP MCP server with its own authorization server, on 127.0.0.1.

Built from the official SDK's server-side auth pieces: ``MCPServer`` with an
``OAuthAuthorizationServerProvider`` (in memory, below) serves the protected
resource metadata, the authorization server metadata, dynamic client
registration, /authorize, /token, and verifies bearer tokens on /mcp. The
authorization step approves at once and redirects to the client's loopback
redirect, so a test's tiny "browser" only has to follow the redirect.

Environment:
  OAUTH_PORT=N        listen on 127.0.0.1:N (required)
  OAUTH_TTL=S         access token lifetime in seconds (default 3600)
  OAUTH_ISSUED=PATH   append every issued access/refresh token to PATH (the test looks for leaks)
  OAUTH_MODE=...      good (default) | garbage (discovery answers are not JSON) |
                      elsewhere (discovery answers redirect to another origin) |
                      bad_token (the token endpoint answers garbage)
  OAUTH_STEP_UP=1     the tool "admin" needs the scope "admin": without it the server answers
                      403 insufficient_scope (a step-up)
  OAUTH_CC_CLIENT=id:secret   the token endpoint also grants client_credentials to this client,
                      authenticated with HTTP Basic (client_secret_basic) or in the form (post)
  OAUTH_CC_JWT=id:PATH        … or to this client, authenticated with a private_key_jwt assertion
                      (RFC 7523) signed by the private key whose public PEM is at PATH
  OAUTH_FORGET=PATH   when PATH exists, the server forgets every access token it issued (and removes
                      PATH): a test ends a token's life at once instead of waiting out its lifetime
  OAUTH_CC_LOG=PATH   append one line per client_credentials request: how it authenticated
  OAUTH_IDJAG=client:secret:idp_client:PATH   enterprise-managed authorization (SEP-990): /idp/token
                      is the identity provider's RFC 8693 token exchange (the ID token verified with the
                      public PEM at PATH, audience idp_client) answering an ID-JAG, and /token takes that
                      ID-JAG (jwt-bearer grant) from the confidential client client:secret (HTTP Basic)
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, unquote

import jwt
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(os.environ["OAUTH_PORT"])
TTL = int(os.environ.get("OAUTH_TTL", "3600"))
ISSUED = os.environ.get("OAUTH_ISSUED")
MODE = os.environ.get("OAUTH_MODE", "good")
STEP_UP = os.environ.get("OAUTH_STEP_UP") == "1"
FORGET = os.environ.get("OAUTH_FORGET")
BASE = f"http://127.0.0.1:{PORT}"


def _note(kind: str, value: str) -> None:
    if ISSUED:
        with open(ISSUED, "a", encoding="utf-8") as f:
            f.write(f"{kind} {value}\n")


class MemoryProvider:
    """The whole authorization server in three dicts; approves every authorization at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        pre = os.environ.get("OAUTH_PRE_CLIENT")  # "id:secret:redirect" of a client registered by hand
        if pre:
            cid, secret, redirect = pre.split(":", 2)
            self.clients[cid] = OAuthClientInformationFull(
                client_id=cid, client_secret=secret, redirect_uris=[redirect],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post", scope="mcp admin offline_access")

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # This server's policy: a registered client may ask for any of its scopes later (a step-up).
        self.clients[client_info.client_id] = client_info.model_copy(update={"scope": "mcp admin offline_access"})

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=BASE)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TTL, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        _note("access", access)
        _note("refresh", refresh)
        return OAuthToken(access_token=access, expires_in=TTL, scope=" ".join(scopes), refresh_token=refresh)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        _note("refreshed", refresh_token.token)
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        if FORGET and os.path.exists(FORGET):
            self.access.clear()
            os.remove(FORGET)
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull,
                                          params: IdentityAssertionParams) -> OAuthToken:
        """SEP-990 leg 2 (the SDK's token handler calls this for the jwt-bearer grant)."""
        try:
            if jwt.get_unverified_header(params.assertion).get("typ") != "oauth-id-jag+jwt":
                raise TokenError("invalid_grant", "not an ID-JAG")
            claims = jwt.decode(params.assertion, IDJAG_KEY, algorithms=["HS256"], audience=[BASE, BASE + "/"],
                                issuer=f"{BASE}/idp")
        except jwt.PyJWTError as exc:
            raise TokenError("invalid_grant", f"bad ID-JAG: {type(exc).__name__}") from None
        if claims.get("client_id") != client.client_id:
            raise TokenError("invalid_grant", "the ID-JAG names another client")
        _cc_log(f"id-jag {client.client_id} sub={claims['sub']} resource={claims.get('resource')}")
        token = self._issue(client.client_id, params.scopes or ["mcp"], claims.get("resource"))
        return token.model_copy(update={"refresh_token": None})

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)


IDJAG = os.environ.get("OAUTH_IDJAG")
IDJAG_KEY = secrets.token_urlsafe(32)  # the identity provider signs its ID-JAGs with this (HS256: one process)
provider = MemoryProvider()
if IDJAG:
    _cid, _secret = IDJAG.split(":")[:2]
    provider.clients[_cid] = OAuthClientInformationFull(
        client_id=_cid, client_secret=_secret, redirect_uris=None, token_endpoint_auth_method="client_secret_basic",
        grant_types=["urn:ietf:params:oauth:grant-type:jwt-bearer"], scope="mcp")
server = MCPServer(
    "oauth-toy", auth_server_provider=provider,
    auth=AuthSettings(issuer_url=BASE, resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
                      required_scopes=["mcp"], validate_token_resource=False,
                      client_registration_options=ClientRegistrationOptions(
                          enabled=True, valid_scopes=["mcp", "admin", "offline_access"], default_scopes=["mcp"]),
                      revocation_options=RevocationOptions(enabled=True),
                      identity_assertion_enabled=bool(IDJAG)))


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def scopes() -> str:
    """The scopes of the caller's token."""
    token = get_access_token()
    return " ".join(token.scopes) if token else ""


@server.tool()
def admin() -> str:
    """Needs the scope "admin" (the server asks for a step-up without it)."""
    return "admin ok"


CC_CLIENT = os.environ.get("OAUTH_CC_CLIENT")
CC_JWT = os.environ.get("OAUTH_CC_JWT")
CC_LOG = os.environ.get("OAUTH_CC_LOG")
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def _cc_log(line: str) -> None:
    if CC_LOG:
        with open(CC_LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def _client_credentials(form: dict[str, str], headers: dict[bytes, bytes]) -> tuple[int, dict[str, Any]]:
    """The client_credentials grant (RFC 6749 4.4), which the SDK's server does not offer: client
    authentication by Basic, form secret, or a private_key_jwt assertion verified with PyJWT."""
    refused = (401, {"error": "invalid_client", "error_description": "the client's secret is not the one the server knows"})
    client_id = None
    how = "none"
    basic = headers.get(b"authorization", b"")
    if CC_CLIENT and basic.lower().startswith(b"basic "):
        cid, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
        if f"{unquote(cid)}:{unquote(secret)}" != CC_CLIENT:
            return refused
        client_id, how = unquote(cid), "client_secret_basic"
    elif CC_CLIENT and "client_secret" in form:
        if f"{form.get('client_id')}:{form['client_secret']}" != CC_CLIENT:
            return refused
        client_id, how = form["client_id"], "client_secret_post"
    elif CC_JWT and form.get("client_assertion_type") == JWT_BEARER:
        cid, _, key_path = CC_JWT.partition(":")
        with open(key_path, encoding="utf-8") as f:
            public = f.read()
        try:
            claims = jwt.decode(form.get("client_assertion", ""), public, algorithms=["ES256", "RS256", "EdDSA"],
                                audience=[BASE, BASE + "/"], issuer=cid)
        except jwt.PyJWTError as exc:
            _cc_log(f"refused jwt: {type(exc).__name__}")
            return refused
        if claims.get("sub") != cid or "jti" not in claims:
            return refused
        client_id, how = cid, "private_key_jwt " + jwt.get_unverified_header(form["client_assertion"])["alg"]
    if client_id is None:
        return refused
    _cc_log(f"{how} {client_id} scope={form.get('scope', '')} resource={form.get('resource', '')}")
    token = provider._issue(client_id, (form.get("scope") or "mcp").split(), form.get("resource"))
    body = token.model_dump(mode="json", exclude_none=True)
    body.pop("refresh_token", None)  # RFC 6749 4.4.3: no refresh token for this grant
    return 200, body


def _token_exchange(form: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """The identity provider's side of SEP-990 leg 1: an ID token in, an ID-JAG out (RFC 8693)."""
    client, _secret, idp_client, key_path = IDJAG.split(":", 3)  # type: ignore[union-attr]
    expected = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "client_id": idp_client}
    wrong = [k for k, v in expected.items() if form.get(k) != v] + [k for k in ("audience", "resource")
                                                                     if not form.get(k)]
    if wrong:
        _cc_log(f"idp refused: {' '.join(wrong)}")
        return 400, {"error": "invalid_request", "error_description": " ".join(wrong)}
    with open(key_path, encoding="utf-8") as f:
        public = f.read()
    try:
        identity = jwt.decode(form.get("subject_token", ""), public, algorithms=["ES256"], audience=idp_client)
    except jwt.PyJWTError as exc:
        _cc_log(f"idp refused: {type(exc).__name__}")
        return 400, {"error": "invalid_grant", "error_description": "bad ID token"}
    now = int(time.time())
    jag = jwt.encode({"iss": f"{BASE}/idp", "sub": identity["sub"], "aud": form["audience"],
                      "resource": form["resource"], "client_id": client, "iat": now, "exp": now + 300,
                      "jti": secrets.token_urlsafe(8)}, IDJAG_KEY, algorithm="HS256",
                     headers={"typ": "oauth-id-jag+jwt"})
    _cc_log(f"idp exchanged {identity['sub']} audience={form['audience']}")
    return 200, {"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                 "token_type": "N_A"}


async def _read_body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def _replaying(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the app the body already read, then the connection's own messages."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _wrap(app: Any) -> Any:
    """Bad-input modes, the step-up check and the client_credentials grant, in front of the SDK's app."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if IDJAG and path == "/idp/token" and scope.get("method") == "POST":
            body = await _read_body(receive)
            status, answer = _token_exchange(dict(parse_qsl(body.decode())))
            await _reply(send, status, json.dumps(answer).encode(), b"application/json")
            return
        if (CC_CLIENT or CC_JWT) and path == "/token" and scope.get("method") == "POST":
            body = await _read_body(receive)
            form = dict(parse_qsl(body.decode()))
            if form.get("grant_type") == "client_credentials":
                status, answer = _client_credentials(form, dict(scope.get("headers", [])))
                await _reply(send, status, json.dumps(answer).encode(), b"application/json")
                return
            await app(scope, _replaying(body, receive), send)
            return
        if path.startswith("/.well-known/") or (MODE == "bad_token" and path == "/token"):
            if MODE == "garbage" or (MODE == "bad_token" and path == "/token"):
                await _reply(send, 200, b"<html>this is not metadata</html>", b"application/json")
                return
            if MODE == "elsewhere":
                await _reply(send, 302, b"", b"text/plain", [(b"location", b"https://elsewhere.invalid/meta")])
                return
        if STEP_UP and path == "/mcp" and scope.get("method") == "POST":
            body = await _read_body(receive)
            token = _bearer(scope)
            wants_admin = b'"admin"' in body and b'"tools/call"' in body
            if wants_admin and token is not None and "admin" not in token.scopes:
                header = (f'Bearer error="insufficient_scope", scope="mcp admin", '
                          f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"').encode()
                await _reply(send, 403, b'{"error":"insufficient_scope"}', b"application/json",
                             [(b"www-authenticate", header)])
                return
            await app(scope, _replaying(body, receive), send)
            return
        await app(scope, receive, send)

    return asgi


def _bearer(scope: dict[str, Any]) -> AccessToken | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization" and value.lower().startswith(b"bearer "):
            return provider.access.get(value[7:].decode())
    return None


async def _reply(send: Any, status: int, body: bytes, ctype: bytes,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    app = _wrap(server.streamable_http_app(host="127.0.0.1"))
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
