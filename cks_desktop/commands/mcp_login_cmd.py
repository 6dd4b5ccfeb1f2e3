"""`cks-desktop mcp login|logout NAME`: sign in to a URL server that asks for OAuth, headless.

    mcp login NAME [--no-browser] [--timeout S]   opens the system browser on the authorization page
                                                  (or, with --no-browser or no browser at all, prints
                                                  the address to open) and waits, at most S seconds
                                                  (default 300), for the loopback redirect; the
                                                  tokens go to the keychain
    mcp login NAME --id-token                     (enterprise-managed servers) first keep a new ID token
                                                  from your identity provider, typed hidden or read from
                                                  stdin, in the keychain
    mcp logout NAME                               forgets the tokens and the client registration

Exit codes: 0 signed in / out, 1 the sign-in did not complete (one sentence why),
2 bad usage (unknown server). Without a secure keychain ``login`` refuses (the
tokens would be gone when the command ends) unless ``--keyring-file PATH`` names a
file (mode 0600) to keep them in; later commands take the same option.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable

from typing import TYPE_CHECKING

from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, CliError

if TYPE_CHECKING:
    from cks_desktop.mcp.config import ServerConfig
    from cks_desktop.secrets import SecretStore


def add_parsers(msub: argparse._SubParsersAction) -> None:
    q = msub.add_parser("login", help="sign in to a URL server that asks for OAuth (opens the browser)")
    q.add_argument("name")
    q.add_argument("--no-browser", action="store_true", help="print the address to open instead of opening it")
    q.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long to wait for the browser step (default 300)")
    q.add_argument("--id-token", action="store_true",
                   help="for a server with \"grant\": \"identity_assertion\": keep a new ID token from your identity "
                        "provider (asked for, hidden, or read from stdin) before signing in")
    q = msub.add_parser("logout", help="forget a server's OAuth sign-in (its tokens in the keychain)")
    q.add_argument("name")


def handlers() -> dict[str, Callable[[argparse.Namespace], int]]:
    return {"login": _login, "logout": _logout}


def _login(args: argparse.Namespace) -> int:
    from cks_desktop.commands.mcp_cmd import _config, _manager, _secrets, _settings

    if not args.timeout > 0:
        raise CliError("--timeout must be a positive number of seconds.")
    settings = _settings(args)
    config = _config(settings, args.name)
    secrets = _secrets()
    if not secrets.secure:
        from cks_desktop.commands.mcp_cmd import NO_KEYCHAIN_HINT

        raise CliError("No secure keychain is available, so a sign-in would be forgotten as soon as this command "
                       f"ends; sign in from the app instead, or {NO_KEYCHAIN_HINT}.", EXIT_TOOL_ERROR)
    if args.id_token:
        _keep_id_token(config, secrets)
    manager = _manager(args, settings, secrets)
    manager.sign_in_timeout = args.timeout

    async def open_url(url: str) -> None:
        import webbrowser

        opened = False
        if not args.no_browser:
            try:
                opened = await asyncio.to_thread(webbrowser.open, url)
            except webbrowser.Error:
                opened = False
        lead = "Opened the browser to sign in; if it did not appear, open" if opened else "To sign in, open"
        print(f"{lead} this address in a browser:\n  {url}", flush=True)

    async def sign_in() -> tuple[bool, str]:
        try:
            ok = await manager.sign_in(config.name, open_url)
            return ok, manager.connections[config.name].reason
        finally:
            await manager.aclose()

    ok, reason = asyncio.run(sign_in())
    if not ok and reason.startswith("Sign-in to "):  # no browser: the sentence names the server and the fix
        raise CliError(reason, EXIT_TOOL_ERROR)
    if not ok:
        raise CliError(f"Could not sign in to MCP server '{config.name}': {reason}", EXIT_TOOL_ERROR)
    where = "the keyring file" if hasattr(secrets, "path") else "the keychain"
    print(f"Signed in to '{config.name}'; the sign-in is kept in {where}.")
    return EXIT_OK


def _keep_id_token(config: "ServerConfig", secrets: "SecretStore") -> None:
    """Replace an enterprise-managed server's ID token (they expire; the app cannot sign in at the IdP itself)."""
    from cks_desktop.commands.mcp_cmd import _read_secret
    from cks_desktop.mcp.oauth_storage import oauth_entry

    if config.oauth is None or config.oauth.grant != "identity_assertion":
        raise CliError(f"--id-token is for a server whose \"oauth\" has \"grant\": \"identity_assertion\"; "
                       f"'{config.name}' has none.")
    value = _read_secret("ID token", "your identity provider's").strip()
    secrets.set(config.oauth.id_token_ref, value)
    secrets.delete(oauth_entry(config.name, "tokens"))  # the old token came from the old ID token
    if secrets.last_error:
        raise CliError(secrets.last_error, EXIT_TOOL_ERROR)


def _logout(args: argparse.Namespace) -> int:
    from cks_desktop.commands.mcp_cmd import _config, _secrets, _settings
    from cks_desktop.mcp.oauth import sign_out

    settings = _settings(args)
    config = _config(settings, args.name)
    had = asyncio.run(sign_out(config, _secrets()))
    print(f"Signed out of '{config.name}'." if had else f"'{config.name}' had no sign-in to forget.")
    return EXIT_OK
