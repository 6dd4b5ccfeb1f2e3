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
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
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
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)


provider = MemoryProvider()
server = MCPServer(
    "oauth-toy", auth_server_provider=provider,
    auth=AuthSettings(issuer_url=BASE, resource_server_url=f"{BASE}/mcp",  # type: ignore[arg-type]
                      required_scopes=["mcp"], validate_token_resource=False,
                      client_registration_options=ClientRegistrationOptions(
                          enabled=True, valid_scopes=["mcp", "admin", "offline_access"], default_scopes=["mcp"]),
                      revocation_options=RevocationOptions(enabled=True)))


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


def _wrap(app: Any) -> Any:
    """Bad-input modes and the step-up check, in front of the SDK's app."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.startswith("/.well-known/") or (MODE == "bad_token" and path == "/token"):
            if MODE == "garbage" or (MODE == "bad_token" and path == "/token"):
                await _reply(send, 200, b"<html>this is not metadata</html>", b"application/json")
                return
            if MODE == "elsewhere":
                await _reply(send, 302, b"", b"text/plain", [(b"location", b"https://elsewhere.invalid/meta")])
                return
        if STEP_UP and path == "/mcp" and scope.get("method") == "POST":
            body, more = b"", True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            token = _bearer(scope)
            wants_admin = b'"admin"' in body and b'"tools/call"' in body
            if wants_admin and token is not None and "admin" not in token.scopes:
                header = (f'Bearer error="insufficient_scope", scope="mcp admin", '
                          f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"').encode()
                await _reply(send, 403, b'{"error":"insufficient_scope"}', b"application/json",
                             [(b"www-authenticate", header)])
                return
            sent = False

            async def replay() -> dict[str, Any]:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await app(scope, replay, send)
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
