"""The MCP server editor's data (Qt-free): form ⇄ settings entry, and validation.

The entry keeps the Claude Desktop shape plus this app's keys
(``cks_desktop.mcp.config``). Editing rewrites only the keys the form owns;
any other key in the entry (a newer version's, or one written by hand) is
kept. Secret values typed in the form go to the keychain on save and the
file gets a ``keychain:`` reference; a secret left untouched keeps its
reference.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from cks_desktop.mcp.config import (OPTIONS, ConfigError, OptionPlace, ServerConfig, Transport, find_name,
                                    is_secret_ref, looks_secret, parse_server, protect_entry, store_secret)
from cks_desktop.tools.types import Scope

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

OWNED_KEYS = ("command", "args", "env", "url", "headers", "type", "transport", "enabled", "disabled",
              "scopes", "approval", "enabledTools", "oauth", "roots", *(option.key for option in OPTIONS))
PLACEHOLDER = "secret-placeholder"
AUTHORIZATION = "Authorization"
BEARER = "Bearer "

# How a URL server is signed in to: no credentials ("oauth": false), a bearer token (the
# Authorization header, kept in the keychain, and "oauth": false), or OAuth (the "oauth" key).
AuthKind = Literal["none", "bearer", "oauth"]


@dataclass
class Pair:
    key: str
    value: str = ""  # what was typed; empty with ``ref`` = keep the stored secret
    secret: bool = False
    ref: str | None = None  # the keychain reference already in the file


@dataclass
class ServerForm:
    name: str = ""
    transport: Transport = Transport.STDIO
    command: str = ""
    args_text: str = ""
    url: str = ""
    env: list[Pair] = field(default_factory=list)
    headers: list[Pair] = field(default_factory=list)
    scopes: set[str] = field(default_factory=lambda: {Scope.CODE_EXECUTE.value})
    approval: str = "always"
    enabled: bool = True
    enabled_tools: list[str] | None = None
    # the declared simple options (mcp/config.py's OPTIONS), by entry key: folder, timeout, log level…
    options: dict[str, Any] = field(default_factory=lambda: {o.key: o.default for o in OPTIONS})
    original_name: str | None = None  # None: a new server
    auth: AuthKind = "oauth"  # a new URL server signs in with OAuth when it asks (the config's default)
    bearer_token: str = ""  # typed, without "Bearer "; empty with ``bearer_ref`` = keep the stored header
    bearer_ref: str | None = None  # the keychain reference of the stored Authorization header
    # OAuth of a URL server (mcp/oauth.py): a client registered by hand; its secret goes to the keychain
    oauth_client_id: str = ""
    oauth_client_secret: str = ""  # typed; empty with ``oauth_secret_ref`` = keep the stored one
    oauth_secret_ref: str | None = None
    oauth_scope: str = ""
    oauth_client_metadata_url: str = ""  # an https client ID metadata document (CIMD)
    oauth_callback_port: str = ""  # the fixed loopback port a client registered by hand redirects to
    oauth_other: Any = None  # the entry's other "oauth" keys (callbackPort, ...), or False, kept as they were
    # "client_credentials": a machine-to-machine client (no browser), authenticated by its secret
    # (client_secret_basic / client_secret_post) or by a JWT signed with its private key (private_key_jwt)
    oauth_grant: str = "authorization_code"
    oauth_auth: str = ""
    oauth_private_key: str = ""  # PEM text loaded from a file; empty with ``oauth_key_ref`` = keep the stored one
    oauth_key_ref: str | None = None
    # "identity_assertion" (SEP-990, enterprise-managed): the MCP server's authorization server (issuer,
    # also optional for client credentials), and the company's identity provider that turns the person's
    # ID token into an ID-JAG. Typed secrets go to the keychain; empty with a ref = keep the stored one.
    oauth_issuer: str = ""
    oauth_idp_endpoint: str = ""
    oauth_idp_client_id: str = ""
    oauth_idp_secret: str = ""
    oauth_idp_secret_ref: str | None = None
    oauth_id_token: str = ""
    oauth_id_token_ref: str | None = None
    # extra root folders the server may ask for (mcp/client_hooks.py); written only when given
    roots: list[str] = field(default_factory=list)

    @classmethod
    def from_entry(cls, name: str, raw: dict[str, Any]) -> "ServerForm":
        config = parse_server(name, raw)

        def pairs(values: dict[str, str]) -> list[Pair]:
            return [Pair(k, "", True, v) if is_secret_ref(v) else Pair(k, v, False) for k, v in values.items()]

        headers = pairs(config.headers)
        auth: AuthKind = "none" if raw.get("oauth") is False else "oauth"
        bearer = next((p for p in headers if p.key.lower() == AUTHORIZATION.lower()), None)
        token, bearer_ref = "", None
        if (bearer is not None and not isinstance(raw.get("oauth"), dict)
                and (bearer.ref or bearer.value.startswith(BEARER))):
            headers.remove(bearer)
            auth, bearer_ref, token = "bearer", bearer.ref, bearer.value.removeprefix(BEARER)
        return cls(name=name, transport=config.transport, command=config.command,
                   args_text=shlex.join(config.args), url=config.url,
                   auth=auth, bearer_token=token, bearer_ref=bearer_ref,
                   env=pairs(config.env), headers=headers, scopes={s.value for s in config.scopes},
                   approval=config.approval.value, enabled=config.enabled,
                   enabled_tools=sorted(config.enabled_tools) if config.enabled_tools is not None else None,
                   options={o.key: getattr(config, o.attr) for o in OPTIONS}, original_name=name,
                   roots=list(config.roots), **_oauth_fields(raw.get("oauth")))

    # -- checking --------------------------------------------------------------------
    def args(self) -> list[str]:
        return shlex.split(self.args_text)

    def _pairs_problem(self, pairs: list[Pair], what: str) -> str | None:
        seen: set[str] = set()
        for pair in pairs:
            key = pair.key.strip()
            if not key:
                return f"Every {what} needs a name."
            if key in seen:
                return f"The {what} {key} is listed twice."
            seen.add(key)
            if pair.secret and not pair.value and not pair.ref:
                return f"Type the secret value of {what} {key}."
        return None

    def errors(self, settings: "Settings") -> list[str]:
        return [text for _field, text in self.field_errors(settings)]

    def field_errors(self, settings: "Settings") -> list[tuple[str, str]]:
        """Each problem with the field it belongs to ("name", "command", "args", "env", "url",
        "headers", or "" for the entry as a whole), so the editor can show a field's problem only
        once the person has edited that field (or pressed Save) — never on a form just opened."""
        problems: list[tuple[str, str]] = []
        name = self.name.strip()
        if name:
            existing = find_name(settings, name)
            if existing is not None and existing != self.original_name:
                problems.append(("name", f"An MCP server named “{existing}” already exists."))
        if self.transport is Transport.STDIO:
            if not self.command.strip():
                problems.append(("command", "Type the command that starts the server (for example npx or uvx)."))
            try:
                self.args()
            except ValueError as exc:
                problems.append(("args", f"The arguments cannot be read: {exc}."))
            problem = self._pairs_problem(self.env, "environment variable")
            if problem:
                problems.append(("env", problem))
        else:
            problem = self._pairs_problem(self.headers, "header")
            if problem:
                problems.append(("headers", problem))
            if self.auth == "bearer" and not (self.bearer_token.strip() or self.bearer_ref):
                problems.append(("auth", "Paste the bearer token the server gave you (it is kept in the keychain)."))
        if self.transport.remote and self.auth == "oauth" and self.oauth_private_key:
            from cks_desktop.mcp.oauth_grants import signing_algorithm

            try:
                signing_algorithm(self.oauth_private_key)
            except ValueError as exc:
                problems.append(("oauth", f"The OAuth private key cannot be used: {exc}."))
        if self.transport.remote and self.auth == "oauth":
            problems.extend(("oauth", text) for text in self._grant_problems())
        if not problems:
            try:
                self.to_config(secrets=None)
            except ConfigError as exc:
                problems.append((_field_of(exc), str(exc)))
        return problems

    def _grant_problems(self) -> list[str]:
        """The sign-in fields a grant needs, each missing or malformed one as the sentence the editor shows
        (the config's own checks name JSON keys; these name the fields)."""
        issuer = self.oauth_issuer.strip()
        problems: list[str] = []
        if issuer and not _http(issuer):
            problems.append("The issuer must be an http:// or https:// URL (the authorization server's issuer).")
        if self.oauth_grant != "identity_assertion":
            return problems
        if not self.oauth_client_id.strip():
            problems.append("Type the client ID the MCP server's authorization server knows this app by.")
        if not (self.oauth_client_secret or self.oauth_secret_ref):
            problems.append("Type the client secret the MCP server's authorization server gave this app.")
        if not issuer:
            problems.append("Type the issuer URL of the MCP server's authorization server (https://…).")
        endpoint = self.oauth_idp_endpoint.strip()
        if not endpoint:
            problems.append("Type the token endpoint of your identity provider (https://…/token).")
        elif not _http(endpoint):
            problems.append("The identity provider's token endpoint must be an http:// or https:// URL.")
        if not self.oauth_idp_client_id.strip():
            problems.append("Type the client ID this app has at your identity provider.")
        if not (self.oauth_id_token.strip() or self.oauth_id_token_ref):
            problems.append("Paste the ID token your identity provider gave you (it is kept in the keychain).")
        return problems

    # -- building ----------------------------------------------------------------------
    def _values(self, pairs: list[Pair], section: str, secrets: "SecretStore | None") -> dict[str, str]:
        out: dict[str, str] = {}
        for pair in pairs:
            key = pair.key.strip()
            if pair.secret:
                if pair.value:
                    out[key] = (store_secret(secrets, self.name.strip(), section, key, pair.value)
                                if secrets is not None else PLACEHOLDER)
                else:
                    out[key] = pair.ref or ""
            else:
                out[key] = pair.value
        return out

    def owned(self, secrets: "SecretStore | None") -> dict[str, Any]:
        """The keys this form writes (secrets stored when ``secrets`` is given)."""
        entry: dict[str, Any] = {}
        if self.transport is Transport.STDIO:
            entry["command"] = self.command.strip()
            entry["args"] = self.args()
            env = self._values(self.env, "env", secrets)
            if env:
                entry["env"] = env
            self._options_into(entry, "start")
        else:
            entry["url"] = self.url.strip()
            headers = self._values(self.all_headers(), "headers", secrets)
            if headers:
                entry["headers"] = headers
            oauth = self._oauth(secrets) if self.auth == "oauth" else False
            if oauth is not None:
                entry["oauth"] = oauth
            self._options_into(entry, "start")
        entry["enabled"] = self.enabled
        entry["scopes"] = sorted(self.scopes)
        entry["approval"] = self.approval
        self._options_into(entry, "rules")
        if self.enabled_tools is not None:
            entry["enabledTools"] = list(self.enabled_tools)
        self._options_into(entry, "requests")
        roots = [r.strip() for r in self.roots if r.strip()]
        if roots:
            entry["roots"] = roots
        if secrets is not None:
            # Secrets typed where no secret toggle exists (``--api-key sk-…`` in the arguments, a token
            # in the URL, a credential-shaped env value) go to the keychain too.
            entry, _ = protect_entry(entry, server=self.name.strip(), secrets=secrets)
        return entry

    def _options_into(self, entry: dict[str, Any], place: OptionPlace) -> None:
        """Write the declared options shown at ``place`` that this transport has (a default left out
        unless the option is always written)."""
        for option in OPTIONS:
            if option.place == place and option.applies_to(self.transport):
                value = option.stored(self.options.get(option.key, option.default))
                if value is not None:
                    entry[option.key] = value

    def all_headers(self) -> list[Pair]:
        """The headers typed, with the bearer token's Authorization header when that is the sign-in."""
        if self.auth != "bearer":
            return self.headers
        token = self.bearer_token.strip().removeprefix(BEARER).strip()
        bearer = Pair(AUTHORIZATION, BEARER + token if token else "", True, None if token else self.bearer_ref)
        return [p for p in self.headers if p.key.strip().lower() != AUTHORIZATION.lower()] + [bearer]

    def _oauth(self, secrets: "SecretStore | None") -> Any:
        """The ``oauth`` key: the pre-registered client typed here over the entry's other OAuth keys
        (an entry that never signed in, switched to OAuth, signs in when the server asks)."""
        out: dict[str, Any] = dict(self.oauth_other) if isinstance(self.oauth_other, dict) else {}
        for key, value in (("clientId", self.oauth_client_id.strip()), ("scope", self.oauth_scope.strip()),
                           ("clientMetadataUrl", self.oauth_client_metadata_url.strip())):
            if value:
                out[key] = value
        port = self.oauth_callback_port.strip()
        if port:  # parse_server says in one sentence when it is not a port from 1024 to 65535
            out["callbackPort"] = int(port) if port.isdigit() else port
        machine = self.oauth_grant in ("client_credentials", "identity_assertion")
        uses_key = machine and self.oauth_auth == "private_key_jwt"
        name = self.name.strip()
        if machine:  # (identity_assertion's other keys, set in the file, stay in oauth_other)
            out.update(grant=self.oauth_grant, auth=self.oauth_auth or "client_secret_basic")
        if uses_key:
            if self.oauth_private_key:
                out["privateKey"] = (store_secret(secrets, name, "oauth", "privateKey", self.oauth_private_key)
                                     if secrets is not None else f"keychain:mcp/{name}/oauth/privateKey")
            elif self.oauth_key_ref:
                out["privateKey"] = self.oauth_key_ref
        elif self.oauth_client_secret:
            out["clientSecret"] = (store_secret(secrets, name, "oauth", "clientSecret", self.oauth_client_secret)
                                   if secrets is not None else f"keychain:mcp/{name}/oauth/clientSecret")
        elif self.oauth_secret_ref and self.oauth_client_id.strip():
            out["clientSecret"] = self.oauth_secret_ref
        if self.oauth_issuer.strip():  # (used by the grants without a browser; kept for the others)
            out["issuer"] = self.oauth_issuer.strip()
        if self.oauth_grant == "identity_assertion":
            self._identity_provider(out, secrets)
        return out or None

    def _identity_provider(self, out: dict[str, Any], secrets: "SecretStore | None") -> None:
        """The identity provider's keys of an identity-assertion entry; its secret and the ID token as
        keychain references (stored now when typed, the stored ones kept otherwise)."""
        name = self.name.strip()
        for key, value in (("idpTokenEndpoint", self.oauth_idp_endpoint.strip()),
                           ("idpClientId", self.oauth_idp_client_id.strip())):
            if value:
                out[key] = value
        for key, typed, ref in (("idpClientSecret", self.oauth_idp_secret, self.oauth_idp_secret_ref),
                                ("idToken", self.oauth_id_token.strip(), self.oauth_id_token_ref)):
            if typed:
                out[key] = (store_secret(secrets, name, "oauth", key, typed) if secrets is not None
                            else f"keychain:mcp/{name}/oauth/{key}")
            elif ref:
                out[key] = ref

    def to_entry(self, base: dict[str, Any] | None, secrets: "SecretStore | None") -> dict[str, Any]:
        """``base`` with the form's keys replaced (unknown keys kept)."""
        entry = {k: v for k, v in (base or {}).items() if k not in OWNED_KEYS}
        if self.oauth_other is None and base and "oauth" in base:  # a form not made from ``base``
            fields = _oauth_fields(base["oauth"])
            self.oauth_other = fields["oauth_other"]
            self.oauth_callback_port = self.oauth_callback_port or fields.get("oauth_callback_port", "")
            self.oauth_client_metadata_url = self.oauth_client_metadata_url or fields.get(
                "oauth_client_metadata_url", "")
        entry.update(self.owned(secrets))
        return entry

    def to_config(self, secrets: "SecretStore | None") -> ServerConfig:
        return parse_server(self.name.strip(), self.to_entry(None, secrets))

    def probe_config(self) -> ServerConfig:
        """A config with typed secrets in clear, for "Test connection" (never saved)."""
        def plain(pairs: list[Pair]) -> dict[str, str]:
            return {p.key.strip(): (p.value if p.value or not p.ref else p.ref) for p in pairs}

        entry = self.owned(None)
        if self.transport is Transport.STDIO and self.env:
            entry["env"] = plain(self.env)
        if self.transport.remote and self.all_headers():
            entry["headers"] = plain(self.all_headers())
        entry.pop("enabledTools", None)  # list every tool, to choose from
        return parse_server(self.name.strip() or "test", entry)


def _oauth_fields(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        return {"oauth_other": raw if raw is False else None}
    secret, key = raw.get("clientSecret"), raw.get("privateKey")
    idp_secret, id_token = raw.get("idpClientSecret"), raw.get("idToken")
    owned = ("clientId", "clientSecret", "scope", "grant", "auth", "privateKey", "issuer", "idpTokenEndpoint",
             "idpClientId", "idpClientSecret", "idToken", "clientMetadataUrl", "callbackPort")
    port = raw.get("callbackPort")
    return {"oauth_client_id": str(raw.get("clientId") or ""), "oauth_scope": str(raw.get("scope") or ""),
            "oauth_client_metadata_url": str(raw.get("clientMetadataUrl") or ""),
            "oauth_callback_port": "" if port is None else str(port),
            "oauth_issuer": str(raw.get("issuer") or ""),
            "oauth_idp_endpoint": str(raw.get("idpTokenEndpoint") or ""),
            "oauth_idp_client_id": str(raw.get("idpClientId") or ""),
            "oauth_idp_secret_ref": idp_secret if is_secret_ref(idp_secret or "") else None,
            "oauth_id_token_ref": id_token if is_secret_ref(id_token or "") else None,
            "oauth_secret_ref": secret if is_secret_ref(secret or "") else None,
            "oauth_grant": str(raw.get("grant") or "authorization_code"),
            "oauth_auth": str(raw.get("auth") or ("private_key_jwt" if key else "")),
            "oauth_key_ref": key if is_secret_ref(key or "") else None,
            "oauth_other": {k: v for k, v in raw.items() if k not in owned}}


def _http(url: str) -> bool:
    """Whether the text is an absolute http(s) URL with a host (what the config accepts for these keys)."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def suggests_secret(key: str) -> bool:
    return looks_secret(key)


# the form field that shows an entry key's problem (a declared option is its own field; other keys:
# the entry as a whole)
_FIELD_OF_KEY = {"name": "name", "url": "url", "command": "command", "args": "args", "env": "env",
                 "headers": "headers", **{o.key: o.key for o in OPTIONS}}


def _field_of(error: ConfigError) -> str:
    """The form field a ``parse_server`` complaint is about, from the key the error carries
    ("" when it is the whole entry)."""
    if error.key == "oauth" or error.key.startswith("oauth."):
        return "oauth"
    return _FIELD_OF_KEY.get(error.key, "")
