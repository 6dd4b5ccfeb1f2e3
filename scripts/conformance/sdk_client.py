"""Conformance adapter over the official Python ``mcp`` SDK used directly: the baseline.

``scripts/mcp-conformance.sh`` runs every client scenario of
``@modelcontextprotocol/conformance`` with this adapter and with ``app_client.py``
(the app's own client); a scenario counts against the app only where this one
passes. The suite starts a test server per scenario and runs
``python sdk_client.py <server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` (and, for
some scenarios, ``MCP_CONFORMANCE_CONTEXT``: JSON with client credentials) set.

What it does per scenario is what any SDK-based host would do: connect, list the
tools, call one; answer an elicitation with the schema's defaults; sign in with
the SDK's ``OAuthClientProvider`` (the authorization step is followed without a
browser: the suite's authorization server redirects at once) or, for the
client-credentials scenarios, with the SDK's client-credentials providers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types as types
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls
from mcp.client.client import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
log = logging.getLogger("sdk-client")

REDIRECT_URI = "http://127.0.0.1:3000/callback"  # never listened on: the code is read off the redirect
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def scenario_context() -> dict[str, Any]:
    """The scenario's extra data (client id/secret, a private key), if the suite gave any."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


class MemoryStorage(TokenStorage):
    """Tokens for one run only."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class HeadlessBrowser:
    """Plays the browser: GET the authorization URL, read code/state/iss off the redirect."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            response = await http.get(url, follow_redirects=False)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"the authorization endpoint answered {response.status_code}, not a redirect")
        query = parse_qs(urlsplit(location).query)
        if "code" not in query:
            raise RuntimeError(f"no code in the redirect: {location}")
        first = {k: v[0] for k, v in query.items()}
        self.result = AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        result, self.result = self.result, None
        if result is None:
            raise RuntimeError("the authorization step did not run")
        return result


async def elicit_defaults(context: ClientRequestContext,
                          params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
    """Accept a form with the schema's defaults (what ``--yes`` does headless)."""
    content: dict[str, Any] = {}
    if isinstance(params, types.ElicitRequestFormParams):
        for name, prop in (params.requested_schema.get("properties") or {}).items():
            if isinstance(prop, dict) and "default" in prop:
                content[name] = prop["default"]
    return types.ElicitResult(action="accept", content=content)


async def exercise(client: Client, scenario: str) -> None:
    """List the tools and call the one the scenario expects (or the first one)."""
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    log.info("tools: %s", names)
    wanted = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {}),
              "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {})}
    if scenario in wanted:
        name, args = wanted[scenario]
    elif scenario.startswith("auth/") and names:
        name, args = names[0], {}
    else:
        return
    result = await client.call_tool(name, args)
    log.info("%s -> error=%s", name, result.is_error)


async def cross_app_provider(url: str, ctx: dict[str, Any], storage: TokenStorage) -> httpx2.Auth:
    """Enterprise-managed authorization (SEP-990): an ID-JAG from the enterprise IdP (RFC 8693),
    exchanged at the MCP authorization server (RFC 7523). The provider takes the authorization
    server's issuer as configuration; here it is read from the resource's metadata."""
    async with httpx2.AsyncClient(timeout=30.0) as http:
        prm_url = build_protected_resource_metadata_discovery_urls(None, url)[0]
        issuer = (await http.get(prm_url)).raise_for_status().json()["authorization_servers"][0]

    async def id_jag(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            response = await http.post(ctx["idp_token_endpoint"], data={
                "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "subject_token": ctx["idp_id_token"],
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "audience": audience, "resource": resource, "client_id": ctx["idp_client_id"]})
        return str(response.raise_for_status().json()["access_token"])

    return IdentityAssertionOAuthProvider(server_url=url, storage=storage, client_id=ctx["client_id"],
                                          client_secret=ctx["client_secret"], issuer=issuer,
                                          assertion_provider=id_jag,
                                          token_endpoint_auth_method="client_secret_basic")


async def auth_provider(url: str, scenario: str) -> httpx2.Auth:
    ctx = scenario_context()
    storage = MemoryStorage()
    if scenario == "auth/cross-app-access-complete-flow":
        return await cross_app_provider(url, ctx, storage)
    if scenario == "auth/client-credentials-jwt":
        jwt = SignedJWTParameters(issuer=ctx["client_id"], subject=ctx["client_id"],
                                  signing_algorithm=ctx.get("signing_algorithm", "ES256"),
                                  signing_key=ctx["private_key_pem"])
        return PrivateKeyJWTOAuthProvider(server_url=url, storage=storage, client_id=ctx["client_id"],
                                          assertion_provider=jwt.create_assertion_provider())
    if scenario == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(server_url=url, storage=storage, client_id=ctx["client_id"],
                                              client_secret=ctx["client_secret"],
                                              token_endpoint_auth_method="client_secret_basic")
    if ctx.get("client_id"):  # pre-registered
        secret = ctx.get("client_secret")
        storage.client = OAuthClientInformationFull(
            client_id=ctx["client_id"], client_secret=secret, redirect_uris=[AnyUrl(REDIRECT_URI)],
            token_endpoint_auth_method="client_secret_basic" if secret else "none")
    browser = HeadlessBrowser()
    metadata = OAuthClientMetadata(client_name="sdk-conformance", redirect_uris=[AnyUrl(REDIRECT_URI)],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(server_url=url, client_metadata=metadata, storage=storage,
                               redirect_handler=browser.open, callback_handler=browser.callback,
                               client_metadata_url=CLIENT_METADATA_URL)


async def run(url: str, scenario: str) -> None:
    if scenario.startswith("auth/"):
        async with httpx2.AsyncClient(auth=await auth_provider(url, scenario), timeout=30.0) as http:
            async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit_defaults) \
                    as client:
                await exercise(client, scenario)
        return
    async with Client(url, elicitation_callback=elicit_defaults) as client:
        await exercise(client, scenario)


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: sdk_client.py SERVER_URL", file=sys.stderr)
        return 2
    asyncio.run(run(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
