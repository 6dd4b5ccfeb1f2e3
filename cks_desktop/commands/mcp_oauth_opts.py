"""The OAuth options of `cks-desktop mcp add … --url URL`: a client-credentials (machine-to-machine) client.

    --oauth-client-credentials CLIENT_ID   sign in with the client_credentials grant (no browser)
    --oauth-auth METHOD                    client_secret_basic (default), client_secret_post or
                                           private_key_jwt (default when --oauth-private-key is given)
    --oauth-private-key PEMFILE            the client's private key for private_key_jwt (read from
                                           the file, kept in the keychain; the file is not referenced)
    --oauth-scope "S1 S2"                  the scopes to ask for
    --oauth-issuer URL                     the authorization server the credentials belong to (the
                                           credentials are then sent nowhere else)

    --oauth-client-id CLIENT_ID            sign in in the browser as this pre-registered client (no
                                           dynamic registration); with --oauth-client-secret its
                                           secret is asked for (hidden) or read from stdin
    --oauth-client-metadata-url URL        the https URL of this app's client ID metadata document
                                           (CIMD), used where the authorization server accepts one
    --oauth-callback-port PORT             the fixed loopback port of the redirect URI a pre-registered
                                           client was registered with

    --oauth-identity-assertion CLIENT_ID   enterprise-managed authorization (SEP-990): with
                                           --oauth-issuer, --oauth-idp-token-endpoint URL and
                                           --oauth-idp-client-id ID; the client secret and then the
                                           person's ID token are asked for (`mcp login NAME --id-token`
                                           replaces an expired ID token)

The client secret (and ID token) are typed at a hidden prompt or read from stdin, one line each
(after the values of any ``--secret-header``), never taken from the command line. Secrets and
keys go to the keychain only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cks_desktop.commands.common import CliError
from cks_desktop.mcp.config import CLIENT_CREDENTIALS_AUTH, SECRET_PREFIX, secret_key

MERGED = ("oauth_client_credentials", "oauth_auth", "oauth_private_key", "oauth_scope", "oauth_issuer",
          "oauth_identity_assertion", "oauth_idp_token_endpoint", "oauth_idp_client_id", "oauth_client_id",
          "oauth_client_secret", "oauth_client_metadata_url", "oauth_callback_port")
MAX_KEY_BYTES = 64 * 1024


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--oauth-client-credentials", metavar="CLIENT_ID",
                   help="for --url: sign in as this OAuth client with the client-credentials grant (no browser); "
                        "its secret is asked for (hidden) or read from stdin")
    p.add_argument("--oauth-auth", choices=CLIENT_CREDENTIALS_AUTH,
                   help="how the client authenticates at the token endpoint (default client_secret_basic, or "
                        "private_key_jwt with --oauth-private-key)")
    p.add_argument("--oauth-private-key", metavar="PEMFILE",
                   help="the client's private key (PEM) for private_key_jwt; kept in the keychain")
    p.add_argument("--oauth-scope", metavar="SCOPES", help="the OAuth scopes to ask for (space-separated)")
    p.add_argument("--oauth-issuer", metavar="URL",
                   help="the authorization server the client credentials belong to (sent nowhere else)")
    p.add_argument("--oauth-client-id", metavar="CLIENT_ID",
                   help="for --url: sign in (in the browser) as this pre-registered OAuth client")
    p.add_argument("--oauth-client-secret", action="store_const", const=True, default=None,
                   help="the pre-registered client has a secret: ask for it (hidden) or read it from stdin; "
                        "it is kept in the keychain, never taken from the command line")
    p.add_argument("--oauth-client-metadata-url", metavar="URL",
                   help="for --url: the https URL of this app's OAuth client ID metadata document (CIMD)")
    p.add_argument("--oauth-callback-port", type=int, metavar="PORT",
                   help="the loopback port of the redirect URI the client was registered with")
    p.add_argument("--oauth-identity-assertion", metavar="CLIENT_ID",
                   help="for --url: enterprise-managed authorization (SEP-990) as this client, with an ID-JAG "
                        "from your identity provider; needs --oauth-issuer, --oauth-idp-token-endpoint and "
                        "--oauth-idp-client-id; the client secret and your ID token are asked for")
    p.add_argument("--oauth-idp-token-endpoint", metavar="URL", help="your identity provider's token endpoint")
    p.add_argument("--oauth-idp-client-id", metavar="ID", help="this app's client ID at your identity provider")


def oauth_entry(opts: argparse.Namespace, name: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The ``oauth`` object for the settings entry (secrets as their keychain references, not yet
    stored) and what will be kept in the keychain. None when no OAuth option was given."""
    if opts.oauth_identity_assertion is not None:
        return _identity_assertion_entry(opts, name)
    if opts.oauth_idp_token_endpoint or opts.oauth_idp_client_id:
        raise CliError("--oauth-idp-token-endpoint and --oauth-idp-client-id go with --oauth-identity-assertion.")
    if opts.oauth_client_id is not None or opts.oauth_client_metadata_url or opts.oauth_client_secret \
            or opts.oauth_callback_port is not None:
        return _browser_client_entry(opts, name)
    client_id = opts.oauth_client_credentials
    if client_id is None:
        if opts.oauth_auth or opts.oauth_private_key or opts.oauth_issuer or opts.oauth_scope:
            raise CliError("--oauth-auth, --oauth-private-key, --oauth-scope and --oauth-issuer go with "
                           "--oauth-client-credentials CLIENT_ID or --oauth-identity-assertion CLIENT_ID.")
        return None, []
    if not opts.url:
        raise CliError("--oauth-client-credentials is for --url servers.")
    auth = opts.oauth_auth or ("private_key_jwt" if opts.oauth_private_key else "client_secret_basic")
    if opts.oauth_private_key and auth != "private_key_jwt":
        raise CliError(f"--oauth-private-key is for --oauth-auth private_key_jwt, not {auth}.")
    if auth == "private_key_jwt" and not opts.oauth_private_key:
        raise CliError("--oauth-auth private_key_jwt needs the client's key: --oauth-private-key PEMFILE.")
    entry: dict[str, Any] = {"grant": "client_credentials", "clientId": client_id, "auth": auth}
    if auth == "private_key_jwt":
        entry["privateKey"] = SECRET_PREFIX + secret_key(name, "oauth", "privateKey")
        kept = ["OAuth private key"]
    else:
        entry["clientSecret"] = SECRET_PREFIX + secret_key(name, "oauth", "clientSecret")
        kept = ["OAuth client secret"]
    if opts.oauth_scope:
        entry["scope"] = opts.oauth_scope
    if opts.oauth_issuer:
        entry["issuer"] = opts.oauth_issuer
    return entry, kept


def _browser_client_entry(opts: argparse.Namespace, name: str) -> tuple[dict[str, Any], list[str]]:
    """A sign-in in the browser with a client the person names: pre-registered and/or by metadata URL.
    ``parse_server`` then checks the values (an https metadata URL, a port in range)."""
    if not opts.url:
        raise CliError("--oauth-client-id and --oauth-client-metadata-url are for --url servers.")
    if opts.oauth_client_credentials is not None or opts.oauth_identity_assertion is not None:
        raise CliError("--oauth-client-id and --oauth-client-metadata-url sign in in the browser; they cannot go "
                       "with --oauth-client-credentials or --oauth-identity-assertion.")
    if opts.oauth_auth or opts.oauth_private_key or opts.oauth_issuer:
        raise CliError("--oauth-auth, --oauth-private-key and --oauth-issuer go with --oauth-client-credentials "
                       "or --oauth-identity-assertion, not a browser sign-in.")
    if opts.oauth_client_secret and not opts.oauth_client_id:
        raise CliError("--oauth-client-secret needs the client's ID: --oauth-client-id CLIENT_ID.")
    entry: dict[str, Any] = {}
    kept: list[str] = []
    if opts.oauth_client_id:
        entry["clientId"] = opts.oauth_client_id
    if opts.oauth_client_secret:
        entry["clientSecret"] = SECRET_PREFIX + secret_key(name, "oauth", "clientSecret")
        kept.append("OAuth client secret")
    if opts.oauth_client_metadata_url:
        entry["clientMetadataUrl"] = opts.oauth_client_metadata_url
    if opts.oauth_callback_port is not None:
        entry["callbackPort"] = opts.oauth_callback_port
    if opts.oauth_scope:
        entry["scope"] = opts.oauth_scope
    return entry, kept


def _identity_assertion_entry(opts: argparse.Namespace, name: str) -> tuple[dict[str, Any], list[str]]:
    if not opts.url:
        raise CliError("--oauth-identity-assertion is for --url servers.")
    if opts.oauth_client_credentials is not None or opts.oauth_private_key:
        raise CliError("--oauth-identity-assertion cannot go with --oauth-client-credentials or "
                       "--oauth-private-key.")
    entry: dict[str, Any] = {"grant": "identity_assertion", "clientId": opts.oauth_identity_assertion,
                             "clientSecret": SECRET_PREFIX + secret_key(name, "oauth", "clientSecret"),
                             "idToken": SECRET_PREFIX + secret_key(name, "oauth", "idToken")}
    for key, value in (("auth", opts.oauth_auth), ("issuer", opts.oauth_issuer),
                       ("idpTokenEndpoint", opts.oauth_idp_token_endpoint), ("idpClientId", opts.oauth_idp_client_id),
                       ("scope", opts.oauth_scope)):
        if value:
            entry[key] = value
    return entry, ["OAuth client secret", "ID token"]


def read_private_key(path: str) -> str:
    """The PEM text of ``--oauth-private-key``, checked before anything is stored."""
    from cks_desktop.mcp.oauth_grants import signing_algorithm

    file = Path(path).expanduser()
    try:
        if file.stat().st_size > MAX_KEY_BYTES:
            raise CliError(f"{path} is larger than a private key can be ({MAX_KEY_BYTES // 1024} KB); nothing "
                           "was changed.")
        pem = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"Could not read the private key {path}: {getattr(exc, 'strerror', None) or exc}; "
                       "nothing was changed.") from None
    try:
        signing_algorithm(pem)
    except ValueError as exc:
        raise CliError(f"{path}: {exc}; nothing was changed.") from None
    return pem


def gather(entry: dict[str, Any] | None, opts: argparse.Namespace,
           read_secret: Callable[[str, str], str]) -> dict[str, str]:
    """The OAuth secret values to store, keyed by their keychain names (read, not yet stored)."""
    if entry is None:
        return {}
    if "privateKey" in entry:
        return {entry["privateKey"][len(SECRET_PREFIX):]: read_private_key(opts.oauth_private_key)}
    if "clientSecret" not in entry:  # a browser client without a secret (public, or CIMD)
        return {}
    values = {entry["clientSecret"][len(SECRET_PREFIX):]: read_secret("client secret", "OAuth")}
    if "idToken" in entry:
        values[entry["idToken"][len(SECRET_PREFIX):]] = read_secret("ID token", "your identity provider's")
    return values


__all__ = ["MERGED", "add_options", "gather", "oauth_entry", "read_private_key"]
