"""OAuth grants without a browser: the SDK's client-credentials and identity-assertion providers.

A server whose ``oauth`` says ``"grant": "client_credentials"`` is signed in to with no
browser and no person: the client authenticates at the authorization server's token
endpoint with its secret (``client_secret_basic`` / ``client_secret_post``, the SDK's
``ClientCredentialsOAuthProvider``) or with a JWT signed by its private key
(``private_key_jwt``, RFC 7523, the SDK's ``PrivateKeyJWTOAuthProvider`` with
``SignedJWTParameters``). The protocol is the SDK's; this module only reads the secret
or key from the keychain, picks the JWT algorithm from the key, and says in one sentence
what is wrong when it cannot.

``"grant": "identity_assertion"`` (SEP-990, enterprise-managed authorization, "cross-app
access"): the SDK's ``IdentityAssertionOAuthProvider`` presents an ID-JAG to the MCP
server's authorization server (RFC 7523 jwt-bearer). Getting the ID-JAG is left to the host
by the SDK: ``id_jag_provider`` asks the company's identity provider for it with the
person's ID token (RFC 8693 token exchange). The app has no sign-in of its own at the
identity provider, so the ID token is one the person (or their IT) put in the keychain.

``issuer``: the SDK sends the credentials only to that authorization server when it is
set. Without it (the SDK deprecates that and will require it in its 3.0) whichever server
the MCP server's metadata names receives them; we keep that working for settings that
name none, and silence the SDK's deprecation warning, since the person chose it.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
import httpx2
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.exceptions import MCPDeprecationWarning

from cks_desktop import APP_ID
from cks_desktop.mcp.config import ServerConfig
from cks_desktop.mcp.oauth_callback import SignInError

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore

_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def signing_algorithm(pem: str) -> str:
    """The JWS algorithm a PEM private key implies (RSA: RS256, P-256: ES256, Ed25519: EdDSA, …).

    Raises ``ValueError`` with one sentence for text that is not an unencrypted PEM private key
    of a kind JWT can sign with; the sentence never quotes the key."""
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except TypeError:
        raise ValueError("the private key is encrypted; give it without a passphrase") from None
    except (ValueError, UnsupportedAlgorithm):
        raise ValueError("the private key is not a PEM private key (-----BEGIN PRIVATE KEY-----)") from None
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name in _EC_ALGORITHMS:
        return _EC_ALGORITHMS[key.curve.name]
    if isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        return "EdDSA"
    raise ValueError("the private key is of a kind JWT cannot sign with (use RSA, EC P-256/384/521 or Ed25519)")


WHERE = "Settings → MCP servers"


def machine_failure(config: ServerConfig, what: str, hint: str | None = None) -> str:
    """The status sentence of a sign-in without a browser that failed: "Sign in" would only send the same
    refused request again, so the sentence names the setting to fix (the connection shows it as ``failed``,
    not as "sign in needed")."""
    settings = config.oauth
    if hint is None:
        thing = "private key" if settings is not None and settings.client_auth == "private_key_jwt" \
            else "client secret"
        hint = f"check its {thing} in {WHERE}"
    return f"Sign-in to '{config.name}' failed: {what}; {hint}."


def id_token_hint(config: ServerConfig) -> str:
    """What to do when the identity provider refuses the ID token (they expire; the app cannot get a new one)."""
    return (f"the ID token may have expired: enter a new one in {WHERE} "
            f"(or run: {APP_ID} mcp login {config.name} --id-token)")


def oauth_error(response: httpx2.Response) -> tuple[str, str]:
    """``(error_description, error)`` of an OAuth error answer (RFC 6749 5.2), each "" when absent.

    Only these two fields are read, never the rest of the body; the description is cut to one line of
    at most 200 characters (the RFC allows printable ASCII only) so it fits the status sentence."""
    try:
        body = response.json()
    except ValueError:
        return "", ""
    if not isinstance(body, dict):
        return "", ""
    description, code = body.get("error_description"), body.get("error")
    description = " ".join(description.split())[:200].rstrip(" .") if isinstance(description, str) else ""
    code = code[:60] if isinstance(code, str) and code.isprintable() else ""
    return description, code


def _secret(config: ServerConfig, secrets: "SecretStore | None", ref: str, what: str) -> str:
    value = secrets.get(ref) if (secrets is not None and ref) else None
    if not value:
        raise SignInError(machine_failure(config, f"its OAuth {what} is not in the keychain",
                                          f"enter it again in {WHERE}"))
    return value


def _sentenced(config: ServerConfig, make: Callable[[str], Awaitable[str]]) -> Callable[[str], Awaitable[str]]:
    """The SDK's assertion maker, with a signing failure (a key that does not fit the algorithm) as one sentence."""

    async def assertion(audience: str) -> str:
        try:
            return await make(audience)
        except Exception as exc:  # PyJWT and cryptography raise several kinds; none may quote the key
            raise SignInError(machine_failure(config, "the client assertion could not be signed with the private "
                                                      f"key ({type(exc).__name__})")) from None

    return assertion


ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def id_jag_provider(config: ServerConfig, secrets: "SecretStore | None") -> Callable[[str, str], Awaitable[str]]:
    """SEP-990 leg 1, which the SDK leaves to the host: the enterprise identity provider exchanges
    the person's ID token for an ID-JAG (RFC 8693 token exchange) naming the MCP authorization server
    (``audience``) and the MCP server (``resource``). The SDK's ``IdentityAssertionOAuthProvider``
    then presents it (leg 2). One request; its refusal becomes one sentence without any token."""
    settings = config.oauth
    assert settings is not None and settings.idp_token_endpoint is not None
    endpoint = settings.idp_token_endpoint

    async def fetch(audience: str, resource: str) -> str:
        form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG_TYPE,
                "subject_token": _secret(config, secrets, settings.id_token_ref, "ID token"),
                "subject_token_type": ID_TOKEN_TYPE, "audience": audience, "resource": resource,
                "client_id": settings.idp_client_id}
        if settings.idp_client_secret_ref:
            form["client_secret"] = _secret(config, secrets, settings.idp_client_secret_ref,
                                            "identity provider client secret")
        where = f"POST {endpoint}"
        try:
            async with httpx2.AsyncClient(timeout=30.0, follow_redirects=False) as http:
                response = await http.post(endpoint, data=form)
        except httpx2.HTTPError as exc:
            raise SignInError(machine_failure(config, f"the identity provider could not be reached "
                                                      f"({type(exc).__name__}, {where})",
                                              f"check its identity provider token endpoint in {WHERE}")) from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.status_code != 200 or not isinstance(answer, dict) \
                or not isinstance(answer.get("access_token"), str):
            description, code = oauth_error(response)
            told = f": {description}" if description else ""
            raise SignInError(machine_failure(
                config, f"the identity provider refused the ID token{told} "
                        f"({code + ', ' if code else ''}{where}, HTTP {response.status_code})", id_token_hint(config)))
        if answer.get("issued_token_type", ID_JAG_TYPE) != ID_JAG_TYPE:
            raise SignInError(machine_failure(config, f"the identity provider answered with a token that is not "
                                                      f"an ID-JAG ({where})",
                                              f"check its identity provider token endpoint in {WHERE}"))
        return str(answer["access_token"])

    return fetch


def machine_provider(config: ServerConfig, secrets: "SecretStore | None", storage: TokenStorage) -> httpx2.Auth:
    """The SDK provider for a server signed in to without a person: client credentials, or an identity
    assertion (``config.oauth.grant`` is ``client_credentials`` or ``identity_assertion``)."""
    settings = config.oauth
    assert settings is not None and settings.machine
    if settings.grant == "identity_assertion":
        assert settings.issuer is not None
        method: Literal["client_secret_basic", "client_secret_post"] = \
            "client_secret_post" if settings.client_auth == "client_secret_post" else "client_secret_basic"
        return IdentityAssertionOAuthProvider(
            config.url, storage, settings.client_id,
            _secret(config, secrets, settings.client_secret_ref, "client secret"), settings.issuer,
            id_jag_provider(config, secrets), scope=settings.scope, token_endpoint_auth_method=method)
    with warnings.catch_warnings():  # no issuer configured: see the module docstring
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if settings.client_auth == "private_key_jwt":
            pem = _secret(config, secrets, settings.private_key_ref, "private key")
            try:
                algorithm = settings.signing_algorithm or signing_algorithm(pem)
            except ValueError as exc:
                raise SignInError(machine_failure(config, str(exc))) from None
            jwt = SignedJWTParameters(issuer=settings.client_id, subject=settings.client_id, signing_key=pem,
                                      signing_algorithm=algorithm)
            return PrivateKeyJWTOAuthProvider(config.url, storage, settings.client_id,
                                              _sentenced(config, jwt.create_assertion_provider()),
                                              scope=settings.scope, issuer=settings.issuer)
        method = "client_secret_post" if settings.client_auth == "client_secret_post" else "client_secret_basic"
        return ClientCredentialsOAuthProvider(
            config.url, storage, settings.client_id, _secret(config, secrets, settings.client_secret_ref,
                                                             "client secret"),
            token_endpoint_auth_method=method, scope=settings.scope, issuer=settings.issuer)


__all__ = ["id_jag_provider", "id_token_hint", "machine_failure", "machine_provider", "oauth_error",
           "signing_algorithm"]
