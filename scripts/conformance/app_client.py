"""Conformance adapter over the app's own MCP client (``McpConnection``), as the app runs it.

``scripts/mcp-conformance.sh`` runs each client scenario of
``@modelcontextprotocol/conformance`` with this adapter and with ``sdk_client.py`` (the
SDK used directly). The suite starts a test server per scenario and runs
``python app_client.py <server-url>`` with ``MCP_CONFORMANCE_SCENARIO`` set (and, for
some scenarios, ``MCP_CONFORMANCE_CONTEXT``: JSON with client credentials).

Nothing here speaks the protocol: the server entry goes through ``parse_server`` exactly
as one in settings.json would (a pre-registered client's secret is put in the
secret store and referenced, as the settings page does), and the connection is the
app's ``McpConnection`` with its OAuth session, loopback redirect listener, wire guard,
timeouts and host callbacks. The only stand-in is the person: ``HeadlessBrowser``
"opens" the authorization URL and follows the authorization server's redirect to the
app's loopback listener, which is what a browser does after the person approves; and
the host answers an elicitation the way a headless ``--yes`` run does.

The exit status is 1 when the connection did not get ready (its one-sentence reason
goes to stderr), else 0; the suite judges the rest from what it saw on the wire.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
log = logging.getLogger("app-client")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from cks_desktop.mcp.config import parse_server, store_secret  # noqa: E402
from cks_desktop.mcp.connection import McpConnection, Status  # noqa: E402
from cks_desktop.mcp.stderr_log import ServerLog  # noqa: E402
from cks_desktop.secrets import SecretStore  # noqa: E402

NAME = "conformance"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the SDK adapter offers the same


def scenario_context() -> dict[str, Any]:
    value = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return value if isinstance(value, dict) else {}


class HeadlessBrowser:
    """Stands in for the person's browser: load the authorization page (the suite's authorization
    server approves at once and redirects) and follow the redirect to the app's loopback listener."""

    def __init__(self) -> None:
        self.opened = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self, url: str) -> None:
        self.opened += 1
        if self.opened > 10:
            raise RuntimeError("the app opened the browser more than 10 times")
        async with httpx2.AsyncClient(timeout=30.0) as http:
            approval = await http.get(url, follow_redirects=False)
            location = approval.headers.get("location")
            if not location:
                log.warning("the authorization page answered %s without a redirect", approval.status_code)
                return
            log.info("browser: following the redirect to %s", location.split("?", 1)[0])
            await http.get(location, follow_redirects=False)  # the app's loopback callback

    def open_soon(self, url: str) -> None:
        """The app calls this and then waits on its listener; the browser runs beside it."""
        task = asyncio.get_running_loop().create_task(self.open(url))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def authorization_server_of(url: str) -> str:
    """The MCP server's authorization server, which a company's admin would give the person for an
    enterprise-managed server (the identity-assertion grant takes it as configuration, never from
    discovery); the harness gives none, so it is read from the resource's metadata, as the SDK
    adapter does."""
    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls

    async with httpx2.AsyncClient(timeout=30.0) as http:
        prm = (await http.get(build_protected_resource_metadata_discovery_urls(None, url)[0])).raise_for_status()
    return str(prm.json()["authorization_servers"][0])


async def server_entry(url: str, scenario: str, secrets: SecretStore) -> dict[str, Any]:
    """The settings.json entry a person would write for this server."""
    entry: dict[str, Any] = {"url": url, "timeout": 30}
    if not scenario.startswith("auth/"):
        return entry
    ctx = scenario_context()
    if scenario == "auth/cross-app-access-complete-flow":  # enterprise-managed authorization (SEP-990)
        entry["oauth"] = {
            "grant": "identity_assertion", "issuer": await authorization_server_of(url),
            "clientId": ctx["client_id"],
            "clientSecret": store_secret(secrets, NAME, "oauth", "clientSecret", ctx["client_secret"]),
            "idpTokenEndpoint": ctx["idp_token_endpoint"], "idpClientId": ctx["idp_client_id"],
            "idToken": store_secret(secrets, NAME, "oauth", "idToken", ctx["idp_id_token"])}
        return entry
    if scenario.startswith("auth/client-credentials-"):  # a machine-to-machine client, as `mcp add` makes one
        oauth: dict[str, Any] = {"grant": "client_credentials", "clientId": ctx["client_id"]}
        if ctx.get("private_key_pem"):  # private_key_jwt; the algorithm follows the key (ES256 here)
            oauth["privateKey"] = store_secret(secrets, NAME, "oauth", "privateKey", ctx["private_key_pem"])
        else:
            oauth["clientSecret"] = store_secret(secrets, NAME, "oauth", "clientSecret", ctx["client_secret"])
        entry["oauth"] = oauth
        return entry
    oauth = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if ctx.get("client_id"):
        oauth["clientId"] = ctx["client_id"]
        if ctx.get("client_secret"):
            oauth["clientSecret"] = store_secret(secrets, NAME, "oauth", "clientSecret", ctx["client_secret"])
    entry["oauth"] = oauth
    return entry


def host_kwargs() -> dict[str, Any]:
    """The host callbacks a headless ``--yes`` run gives a connection (``cks-desktop mcp call --yes``).

    Read from ``McpConnection``'s signature so the adapter follows the app's real API: a
    parameter the app does not have is not passed (and the scenario shows the gap)."""
    if "hooks" not in inspect.signature(McpConnection.__init__).parameters:
        return {}
    from cks_desktop.mcp.client_hooks import ClientHooks
    from cks_desktop.mcp.host import HeadlessHost

    return {"hooks": ClientHooks(host=HeadlessHost(yes=True, note=lambda text: log.info("host: %s", text)))}


async def exercise(conn: McpConnection, scenario: str) -> None:
    names = [t.name for t in conn.tools]
    log.info("tools: %s", names)
    wanted = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {}),
              "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {})}
    if scenario in wanted:
        name, args = wanted[scenario]
    elif scenario.startswith("auth/") and names:
        name, args = names[0], {}
    else:
        return
    output = await conn.call_tool(name, args)
    log.info("%s -> error=%s: %s", name, output.is_error, str(output.content)[:300])


async def run(url: str, scenario: str) -> int:
    secrets = SecretStore(secure=False)  # the keychain, in memory for this run
    config = parse_server(NAME, await server_entry(url, scenario, secrets))
    browser = HeadlessBrowser()
    with tempfile.TemporaryDirectory(prefix="cks-conformance-") as tmp:
        server_log = ServerLog(Path(tmp) / "server.log", secrets=secrets.known_values)
        conn = McpConnection(config, log=server_log, secrets=secrets, **host_kwargs())
        if hasattr(conn, "step_up_opener"):
            conn.step_up_opener = browser.open_soon  # the GUI can show the browser during a call
        try:
            sign_in = browser.open_soon if scenario.startswith("auth/") else None
            ready = await (conn.start(sign_in=sign_in) if sign_in is not None else conn.start())
            if not ready:
                print(f"not ready ({conn.status}): {conn.reason}", file=sys.stderr)
                return 1
            await exercise(conn, scenario)
        finally:
            await conn.stop()
            for line in server_log.tail(50):
                print(f"server log: {line}", file=sys.stderr)
        return 0 if conn.status in (Status.STOPPED, Status.READY) else 1


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: app_client.py SERVER_URL", file=sys.stderr)
        return 2
    return asyncio.run(run(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    sys.exit(main())
