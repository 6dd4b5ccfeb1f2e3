"""MCP server configuration: the ``mcpServers`` section of the settings file.

Entries use the shape Claude Desktop and most MCP hosts use, so a person can
paste a config they already have::

    "mcpServers": {
      "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                 "env": {"GITHUB_TOKEN": "keychain:mcp/github/env/GITHUB_TOKEN"}},
      "remote": {"url": "https://example.com/mcp",
                 "headers": {"Authorization": "keychain:mcp/remote/headers/Authorization"}}
    }

This app's own keys sit beside them (all optional):

``enabled``        true (default) / false. A Cline/Cursor-style ``"disabled": true`` is honoured too.
``scopes``         the scopes a model run must grant before this server's tools can be called.
                   Default ``["code.execute"]`` for a command (it runs a program on this
                   computer) and ``["net.fetch"]`` for a URL.
``approval``       ``auto`` | ``once`` | ``always`` (default): when to ask the person. Servers
                   run code someone else wrote, so every distinct call is confirmed unless
                   the person says otherwise.
``toolPolicies``   ``{"tool": "auto"|"once"|"always"}``: per-tool overrides of ``approval``.
``enabledTools``   ``null`` (default, every tool) or a list of tool names; a tool not listed
                   is never offered to a model.
``timeout``        seconds a call may take (default 120); each progress notification from
                   the server starts the clock again.
``protocol``       ``auto`` (default: the SDK's ``server/discover`` probe, falling back to the
                   2025-11-25 ``initialize`` handshake), ``legacy`` (handshake only, skips the
                   probe for servers that mishandle unknown requests) or ``2026-07-28``.
``cwd``            working folder for a command.
``inheritEnv``     false (default) / true: a command gets only a minimal environment (user, home,
                   PATH, shell, terminal, locale) plus its ``env``; true passes the app's whole
                   environment, except provider keys, which no server ever receives.
``oauth``          for a URL: ``false`` (never sign in), or an object (all optional):
                   ``clientId`` / ``clientSecret`` of a client registered by hand with the
                   server's authorization server (the secret kept in the keychain),
                   ``scope`` (space-separated), ``callbackPort`` (the loopback redirect's
                   port, for a pre-registered ``http://127.0.0.1:<port>/callback``) and
                   ``clientMetadataUrl`` (an https client ID metadata document). Without
                   it, a server that asks for OAuth is signed in to with dynamic client
                   registration (``oauth.py``). ``"grant": "client_credentials"`` signs in
                   with no browser and no person (machine to machine, ``oauth_grants.py``):
                   ``clientId`` plus ``"auth": "client_secret_basic"`` (default) or
                   ``"client_secret_post"`` with ``clientSecret``, or ``"private_key_jwt"``
                   with ``privateKey`` (a PEM key, kept in the keychain; ``signingAlgorithm``
                   overrides the one the key's type implies); ``issuer`` names the
                   authorization server the credentials may be sent to.
                   ``"grant": "identity_assertion"`` is enterprise-managed authorization
                   (SEP-990, cross-app access): the company's identity provider exchanges
                   the person's ID token (``idToken``, in the keychain) for an ID-JAG at
                   ``idpTokenEndpoint`` as client ``idpClientId`` (``idpClientSecret``
                   optional), and the server's authorization server (``issuer``, required)
                   exchanges that for a token for ``clientId``/``clientSecret``.
``sampling``       ``ask`` (default) / ``allow`` / ``off``: whether the server may ask the person's
                   model for a completion, and whether the person is asked first (``client_hooks.py``).
``logLevel``       the least severe log message the server should send (default ``info``).
``roots``          folders offered to the server as roots besides the allowed folders.

Unknown keys are kept: edits change only the keys they mean to change, in the
raw dict the settings file round-trips.

Secrets. A value in ``env`` or ``headers`` is never written in clear when it is
secret: the value lives in the keychain (``SecretStore``) under
``mcp/<server>/env/<KEY>`` or ``mcp/<server>/headers/<Header>``, and the file holds
the reference ``"keychain:<that key>"``. ``resolve_env``/``resolve_headers`` turn
references back into values right before a connection starts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from cks_desktop.secret_shapes import (
    REDACTED,
    name_looks_secret,
    path_segment_looks_secret,
    redact_text,
    value_looks_secret,
)
from cks_desktop.tools.types import Policy, Scope

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

SECRET_PREFIX = "keychain:"
DEFAULT_TIMEOUT = 120.0
PROTOCOLS = ("auto", "legacy", "2026-07-28")
STDIO_DEFAULT_SCOPES = frozenset({Scope.CODE_EXECUTE})
HTTP_DEFAULT_SCOPES = frozenset({Scope.NET_FETCH})


class Transport(StrEnum):
    """How the app reaches an MCP server: a program it starts (``"command"`` in the file) or a URL
    it connects to (``"url"``, streamable HTTP). Stored as its value in ``settings.json``."""

    STDIO = "stdio"
    HTTP = "http"

    @property
    def remote(self) -> bool:
        """Whether the server is reached over the network (headers, sign-in, reconnects)."""
        return self is Transport.HTTP

    @property
    def default_scopes(self) -> frozenset[Scope]:
        """What a server's tools may do unless the person says otherwise."""
        match self:
            case Transport.STDIO:
                return STDIO_DEFAULT_SCOPES
            case Transport.HTTP:
                return HTTP_DEFAULT_SCOPES

    @property
    def label(self) -> str:
        """How the server editor names it."""
        match self:
            case Transport.STDIO:
                return "Command on this computer (stdio)"
            case Transport.HTTP:
                return "Remote URL (streamable HTTP)"

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# How an option is typed in the entry, and edited: a line of text, a folder, true/false, a number
# of seconds, one of a few values.
OptionKind = Literal["text", "folder", "flag", "seconds", "choice"]
# Where the editor shows it: with how the server starts (its transport's page), with the rules of
# its calls, or with what the server may ask of the app.
OptionPlace = Literal["start", "rules", "requests"]


@dataclass(frozen=True)
class ServerOption:
    """One simple key of a server entry, declared once: how it is checked when read (``parse``),
    how it is written back (``stored``), which transports have it, and how the editor shows it
    (``ui/settings/mcp_editor.py`` builds a field from this record, ``mcp_form.py`` reads and
    writes it). A new option is a record here, its ``ServerConfig`` field, and its use where the
    connection is opened (``transport.py``)."""

    key: str  # the entry key
    attr: str  # the ServerConfig field it fills
    kind: OptionKind
    label: str  # the editor's words (a flag's are its check box's text)
    help: str  # the editor's tooltip
    place: OptionPlace
    default: Any
    transports: frozenset[Transport] = frozenset()  # empty: every transport
    choices: tuple[tuple[str, str], ...] = ()  # (value, what it means) of a choice
    placeholder: str = ""
    written_when_default: bool = False  # the form writes it even at its default (the file says it)
    widget_name: str = ""  # the editor field's object name

    def applies_to(self, transport: Transport) -> bool:
        return not self.transports or transport in self.transports

    def parse(self, raw: dict[str, Any], server: str) -> Any:
        """The entry's value, checked (``ConfigError`` naming ``key``), or the default."""
        value = raw.get(self.key, self.default)
        bad = ConfigError(f"Server '{server}': \"{self.key}\" {self._must()}.", key=self.key)
        match self.kind:
            case "text" | "folder":
                if value is not None and not isinstance(value, str):
                    raise bad
                return value or self.default
            case "flag":
                if not isinstance(value, bool):
                    raise bad
                return value
            case "seconds":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                        or value <= 0:
                    raise bad
                return float(value)
            case "choice":
                if value not in [v for v, _ in self.choices]:
                    raise bad
                return value

    def _must(self) -> str:
        match self.kind:
            case "text":
                return "must be text"
            case "folder":
                return "must be a folder path"
            case "flag":
                return "must be true or false"
            case "seconds":
                return "must be a positive number of seconds"
            case "choice":
                return "must be one of " + ", ".join(v for v, _ in self.choices)

    def stored(self, value: Any) -> Any:
        """What the entry keeps for ``value`` (None: the key is left out, the default applies)."""
        if isinstance(value, str):
            value = value.strip() or None
        if value == self.default or value in (None, False):
            return value if self.written_when_default and value is not None else None
        return value


OPTIONS: tuple[ServerOption, ...] = (
    ServerOption("cwd", "cwd", "folder", "Folder:", "The folder the command starts in.", "start", None,
                 frozenset({Transport.STDIO}), placeholder="optional working folder", widget_name="mcpCwd"),
    ServerOption("inheritEnv", "inherit_env", "flag", "Also pass my whole environment (provider keys never are)",
                 "Off: the server gets only your user, home, PATH, shell, terminal and locale, plus the "
                 "variables above. Turn on only for a server that needs more; API keys of the AI providers are "
                 "never passed.", "start", False, frozenset({Transport.STDIO}), widget_name="mcpInheritEnv"),
    ServerOption("timeout", "timeout", "seconds", "Timeout:",
                 "How long one call may take; progress from the server restarts the clock.", "rules",
                 DEFAULT_TIMEOUT, written_when_default=True, widget_name="mcpTimeout"),
    ServerOption("logLevel", "log_level", "choice", "Log level:",
                 "The least severe message the server should send to its log view.", "requests", "info",
                 choices=tuple((level, "") for level in LOG_LEVELS), widget_name="mcpLogLevel"),
    ServerOption("sampling", "sampling", "choice", "Use my model:",
                 "Whether the server may ask your model for a completion, and whether you see the request "
                 "first.", "requests", "ask",
                 choices=(("ask", "ask me each time"), ("allow", "allow without asking"), ("off", "never")),
                 widget_name="mcpSampling"),
)
_KNOWN_KEYS = frozenset({
    "command", "args", "env", "url", "headers", "type", "transport", "enabled", "disabled",
    "scopes", "approval", "toolPolicies", "enabledTools", "protocol", "oauth", "roots",
    *(option.key for option in OPTIONS),
})
_OAUTH_KEYS = frozenset({"clientId", "clientSecret", "scope", "callbackPort", "clientMetadataUrl", "grant", "auth",
                         "privateKey", "issuer", "signingAlgorithm", "idpTokenEndpoint", "idpClientId",
                         "idpClientSecret", "idToken"})
OAUTH_GRANTS = ("authorization_code", "client_credentials", "identity_assertion")
CLIENT_CREDENTIALS_AUTH = ("client_secret_basic", "client_secret_post", "private_key_jwt")
JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class ConfigError(ValueError):
    """One sentence a person can act on, and the entry key it is about (``"url"``, ``"oauth.grant"``;
    ``"name"`` for the server's name, ``""`` for the entry as a whole), so an editor can outline that
    field without reading the sentence."""

    def __init__(self, message: str, *, key: str = "") -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class OAuthSettings:
    """How to sign in to a URL server that asks for OAuth (the ``oauth`` key; see ``oauth.py``)."""

    client_id: str = ""
    client_secret_ref: str = ""  # the keychain entry name of a pre-registered client's secret
    scope: str | None = None
    callback_port: int | None = None
    client_metadata_url: str | None = None
    # The grant: "authorization_code" (the person signs in in the browser) or "client_credentials"
    # (machine to machine, no browser: oauth_grants.py), with how the client authenticates at the
    # token endpoint, its private key's keychain entry (private_key_jwt), the authorization server
    # the credentials belong to, and an explicit JWT signing algorithm.
    grant: str = "authorization_code"
    client_auth: str | None = None
    private_key_ref: str = ""
    issuer: str | None = None
    signing_algorithm: str | None = None
    # "identity_assertion" (SEP-990): the enterprise identity provider's token endpoint, the app's client
    # there, and the keychain entries of that client's secret (optional) and of the person's ID token.
    idp_token_endpoint: str | None = None
    idp_client_id: str = ""
    idp_client_secret_ref: str = ""
    id_token_ref: str = ""

    @property
    def machine(self) -> bool:
        """Whether signing in needs no person (no browser, no loopback redirect)."""
        return self.grant != "authorization_code"


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # as stored: values may be secret references
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # as stored
    enabled: bool = True
    scopes: frozenset[Scope] = STDIO_DEFAULT_SCOPES
    approval: Policy = Policy.ALWAYS
    tool_policies: dict[str, Policy] = field(default_factory=dict)
    enabled_tools: frozenset[str] | None = None
    timeout: float = DEFAULT_TIMEOUT
    protocol: str = "auto"
    inherit_env: bool = False  # pass the app's environment (never provider keys) to a command
    oauth: OAuthSettings | None = None  # a URL server's sign-in; None: never (a command, or "oauth": false)
    # Server-to-client features (client_hooks.py): sampling ask/allow/off, the log level asked for,
    # folders given as roots besides the allowed folders, and whether "approval" was set by the person
    # (if not, a tool's annotations choose its default policy: convert.annotated_policy).
    sampling: str = "ask"
    log_level: str = "info"
    roots: tuple[str, ...] = ()
    approval_explicit: bool = False

    @property
    def source(self) -> str:
        """The registry source of this server's tools."""
        return f"mcp:{self.name}"

    def tool_enabled(self, tool: str) -> bool:
        return self.enabled_tools is None or tool in self.enabled_tools

    def policy_for(self, tool: str) -> Policy:
        return self.tool_policies.get(tool, self.approval)

    def describe(self) -> str:
        """Short text for lists and logs: what runs or where it connects (secrets shown as ``[secret]``)."""
        if self.transport.remote:
            return shown(self.url)
        return shown(" ".join([self.command, *self.args]))


# -- secrets ------------------------------------------------------------------
SECRET_SECTIONS = ("env", "headers", "args", "url", "oauth")
OAUTH_SECRET_KEYS = ("clientSecret", "privateKey", "idpClientSecret", "idToken")  # kept only in the keychain
OAUTH_SECRET_WORDS = ("OAuth client secret", "OAuth private key", "identity provider client secret", "ID token")
SHOWN_SECRET = "[secret]"
# A reference in a URL's path has a definite end (``…/url/path-N``), so the path goes on after it.
_REF_IN_TEXT = re.compile(r"keychain:(?:mcp/[^\s&#\"'/]+/url/path-\d+(?![^\s&#\"'/])|[^\s&#\"']+)")
_ARG_REF = re.compile(r"^(-{1,2}[A-Za-z0-9_.\-]+=)?keychain:(.+)$")
_SAFE_KEY = re.compile(r"[^A-Za-z0-9_.\-]")


def looks_secret(key: str) -> bool:
    """Whether an env variable, header, flag or query parameter name suggests its value is a secret."""
    return name_looks_secret(key)


def is_secret_ref(value: str) -> bool:
    return isinstance(value, str) and value.startswith(SECRET_PREFIX)


def secret_key(server: str, section: str, key: str) -> str:
    """The keychain entry name for one secret value of one server."""
    return f"mcp/{server}/{section}/{key}"


def owns_secret(server: str, name: str) -> bool:
    """Whether keychain entry ``name`` is one this app created for ``server``.

    A server only ever reads or deletes its own entries (``mcp/<server>/<section>/<key>``),
    so a reference in a pasted or hand-edited entry cannot reach a provider key
    (``provider:…``) or another server's token, and removing the server cannot delete them.
    """
    prefix = f"mcp/{server}/"
    if not name.startswith(prefix):
        return False
    section, sep, key = name[len(prefix):].partition("/")
    return bool(sep) and section in SECRET_SECTIONS and bool(key) and "/" not in key


def store_secret(secrets: "SecretStore", server: str, section: str, key: str, value: str) -> str:
    """Put ``value`` in the keychain and return the reference to write in the file."""
    name = secret_key(server, section, key)
    secrets.set(name, value)
    return SECRET_PREFIX + name


class MissingSecret(ConfigError):
    pass


def _lookup(ref: str, secrets: "SecretStore | None", server: str, what: str) -> str:
    name = ref[len(SECRET_PREFIX):]
    if not owns_secret(server, name):
        raise MissingSecret(
            f"The {what} of MCP server '{server}' refers to the keychain entry '{name}', which is not this "
            "server's own; a server may use only secrets entered for it, so enter the value again in its "
            "settings.")
    found = secrets.get(name) if secrets is not None else None
    if found is None:
        raise MissingSecret(
            f"The secret {what} of MCP server '{server}' is not in the keychain; "
            "enter it again in the server's settings.")
    return found


def _resolve(values: dict[str, str], secrets: "SecretStore | None", server: str, what: str) -> dict[str, str]:
    return {key: _lookup(value, secrets, server, f"{what} {key}") if is_secret_ref(value) else value
            for key, value in values.items()}


def resolve_env(config: ServerConfig, secrets: "SecretStore | None") -> dict[str, str]:
    return _resolve(config.env, secrets, config.name, "environment value")


def resolve_headers(config: ServerConfig, secrets: "SecretStore | None") -> dict[str, str]:
    return _resolve(config.headers, secrets, config.name, "header")


def resolve_args(config: ServerConfig, secrets: "SecretStore | None") -> list[str]:
    """The arguments with ``keychain:`` references (whole, or after ``--flag=``) replaced by values."""
    out: list[str] = []
    for i, arg in enumerate(config.args):
        match = _ARG_REF.match(arg)
        if match is None:
            out.append(arg)
            continue
        out.append((match.group(1) or "") + _lookup(SECRET_PREFIX + match.group(2), secrets, config.name,
                                                    f"argument {i + 1}"))
    return out


def resolve_url(config: ServerConfig, secrets: "SecretStore | None") -> str:
    """The URL with references in its query replaced by the values kept in the keychain."""
    return _REF_IN_TEXT.sub(lambda m: _lookup(m.group(0), secrets, config.name, "URL parameter"), config.url)


def secret_refs(raw: dict[str, Any]) -> list[str]:
    """Keychain names referenced by one raw entry (env, headers, args and URL)."""
    refs = []
    for section in ("env", "headers"):
        values = raw.get(section)
        if isinstance(values, dict):
            refs += [v[len(SECRET_PREFIX):] for v in values.values() if is_secret_ref(v)]
    args = raw.get("args")
    if isinstance(args, list):
        refs += [m.group(2) for m in (_ARG_REF.match(a) for a in args if isinstance(a, str)) if m]
    url = raw.get("url")
    if isinstance(url, str):
        refs += [m.group(0)[len(SECRET_PREFIX):] for m in _REF_IN_TEXT.finditer(url)]
    oauth = raw.get("oauth")
    if isinstance(oauth, dict):
        refs += [oauth[k][len(SECRET_PREFIX):] for k in OAUTH_SECRET_KEYS
                 if isinstance(oauth.get(k), str) and is_secret_ref(oauth[k])]
    return refs


def foreign_refs(raw: dict[str, Any]) -> list[str]:
    """Every ``keychain:`` reference anywhere in an entry (imported files may hold none)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.extend(m.group(0) for m in _REF_IN_TEXT.finditer(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(raw)
    return found


def shown(text: str) -> str:
    """Text for a listing or a log line: references as ``[secret]``, secret-shaped values redacted."""
    return redact_text(_REF_IN_TEXT.sub(SHOWN_SECRET, text)).replace(REDACTED, SHOWN_SECRET)


def shown_entry(raw: Any) -> Any:
    """A copy of a raw entry safe to print (``mcp show``, JSON listings)."""
    if isinstance(raw, str):
        return shown(raw)
    if isinstance(raw, dict):
        out = {}
        for k, v in raw.items():
            if isinstance(v, str) and (name_looks_secret(str(k)) and not is_secret_ref(v)) and v:
                out[k] = SHOWN_SECRET
            else:
                out[k] = shown_entry(v)
        return out
    if isinstance(raw, list):
        return [shown_entry(v) for v in raw]
    return raw


# -- parsing ------------------------------------------------------------------
_BAD_NAME = re.compile(r"[:\x00-\x1f\x7f]")


def check_name(name: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("An MCP server needs a name.", key="name")
    if name != name.strip():
        raise ConfigError(f"The server name '{name}' starts or ends with a space.", key="name")
    if _BAD_NAME.search(name):
        raise ConfigError(f"The server name '{name}' may not contain ':' or control characters.", key="name")
    if len(name) > 64:
        raise ConfigError(f"The server name '{name[:20]}…' is longer than 64 characters.", key="name")


def _str_dict(raw: Any, name: str, key: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ConfigError(f"Server '{name}': \"{key}\" must be an object whose values are text.", key=key)
    return dict(raw)


def _policy(value: Any, name: str, where: str, key: str) -> Policy:
    try:
        return Policy(value)
    except ValueError:
        raise ConfigError(f"Server '{name}': {where} must be auto, once or always (got {value!r}).", key=key) from None


def _oauth_secret_ref(name: str, raw: dict[str, Any], key: str, what: str) -> str:
    """The keychain entry of one OAuth secret (``clientSecret``, ``privateKey``): never a value in clear."""
    value = raw.get(key) or ""
    if value and not is_secret_ref(value):
        raise ConfigError(f"Server '{name}': the OAuth {what} must be kept in the keychain; "
                          "enter it again in the server's settings.", key="oauth")
    ref = value[len(SECRET_PREFIX):]
    if ref and not owns_secret(name, ref):
        raise ConfigError(f"Server '{name}': the OAuth {what} refers to the keychain entry '{ref}', "
                          "which is not this server's own; enter it again in the server's settings.", key="oauth")
    return ref


def _http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def parse_oauth(name: str, raw: Any) -> OAuthSettings | None:
    """The ``oauth`` key of a URL server: absent means sign in by dynamic registration when asked."""
    if raw is None or raw is True:
        return OAuthSettings()
    if raw is False:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"Server '{name}': \"oauth\" must be false or an object.", key="oauth")
    for key in ("clientId", "clientSecret", "scope", "clientMetadataUrl", "grant", "auth", "privateKey", "issuer",
                "signingAlgorithm", "idpTokenEndpoint", "idpClientId", "idpClientSecret", "idToken"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ConfigError(f"Server '{name}': \"oauth.{key}\" must be text.", key=f"oauth.{key}")
    ref = _oauth_secret_ref(name, raw, "clientSecret", "client secret")
    key_ref = _oauth_secret_ref(name, raw, "privateKey", "private key")
    idp_secret_ref = _oauth_secret_ref(name, raw, "idpClientSecret", "identity provider's client secret")
    id_token_ref = _oauth_secret_ref(name, raw, "idToken", "ID token")
    port = raw.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1024 <= port <= 65535):
        raise ConfigError(f"Server '{name}': \"oauth.callbackPort\" must be a port number from 1024 to 65535.", key="oauth.callbackPort")
    cimd = raw.get("clientMetadataUrl") or None
    if cimd is not None:
        try:
            parts = urlsplit(cimd)
        except ValueError:
            parts = None
        if parts is None or parts.scheme != "https" or parts.path in ("", "/"):
            raise ConfigError(f"Server '{name}': \"oauth.clientMetadataUrl\" must be an https:// address with a "
                              "path (the client ID metadata document).", key="oauth.clientMetadataUrl")
    client_id = (raw.get("clientId") or "").strip()
    if ref and not client_id:
        raise ConfigError(f"Server '{name}': an OAuth client secret needs its client ID.", key="oauth")
    grant = (raw.get("grant") or "authorization_code").strip()
    if grant not in OAUTH_GRANTS:
        raise ConfigError(f"Server '{name}': \"oauth.grant\" must be {' or '.join(OAUTH_GRANTS)} (got {grant!r}).", key="oauth.grant")
    issuer = (raw.get("issuer") or "").strip() or None
    if issuer is not None and not _http_url(issuer):
        raise ConfigError(f"Server '{name}': \"oauth.issuer\" must be the authorization server's http:// or "
                          "https:// address.", key="oauth.issuer")
    algorithm = (raw.get("signingAlgorithm") or "").strip() or None
    if algorithm is not None and algorithm not in JWT_ALGORITHMS:
        raise ConfigError(f"Server '{name}': \"oauth.signingAlgorithm\" must be one of {', '.join(JWT_ALGORITHMS)} "
                          f"(got {algorithm!r}).", key="oauth.signingAlgorithm")
    auth = (raw.get("auth") or "").strip() or None
    idp_endpoint = (raw.get("idpTokenEndpoint") or "").strip() or None
    idp_client_id = (raw.get("idpClientId") or "").strip()
    if grant != "identity_assertion" and (idp_endpoint or idp_client_id or idp_secret_ref or id_token_ref):
        raise ConfigError(f"Server '{name}': the identity provider's keys (\"idpTokenEndpoint\", \"idpClientId\", "
                          "\"idpClientSecret\", \"idToken\") are for \"grant\": \"identity_assertion\" only.", key="oauth.grant")
    if grant == "authorization_code":
        if auth is not None or key_ref or algorithm is not None:
            raise ConfigError(f"Server '{name}': \"oauth.auth\", \"privateKey\" and \"signingAlgorithm\" are "
                              "for \"grant\": \"client_credentials\" only.", key="oauth.auth")
    elif grant == "identity_assertion":
        auth = auth or "client_secret_basic"
        if auth not in ("client_secret_basic", "client_secret_post") or key_ref or algorithm is not None:
            raise ConfigError(f"Server '{name}': the identity-assertion grant authenticates with the client secret: "
                              "\"oauth.auth\" must be client_secret_basic or client_secret_post.", key="oauth.auth")
        missing = [what for what, value in (("clientId", client_id), ("clientSecret", ref), ("issuer", issuer),
                                            ("idpTokenEndpoint", idp_endpoint), ("idpClientId", idp_client_id),
                                            ("idToken", id_token_ref)) if not value]
        if missing:
            raise ConfigError(f"Server '{name}': the identity-assertion grant needs "
                              f"{', '.join(f'oauth.{m}' for m in missing)}.", key="oauth")
        if idp_endpoint is not None and not _http_url(idp_endpoint):
            raise ConfigError(f"Server '{name}': \"oauth.idpTokenEndpoint\" must be the identity provider's "
                              "http:// or https:// token endpoint.", key="oauth.idpTokenEndpoint")
    else:
        auth = auth or ("private_key_jwt" if key_ref else "client_secret_basic")
        if auth not in CLIENT_CREDENTIALS_AUTH:
            raise ConfigError(f"Server '{name}': \"oauth.auth\" must be one of {', '.join(CLIENT_CREDENTIALS_AUTH)} "
                              f"(got {auth!r}).", key="oauth.auth")
        if not client_id:
            raise ConfigError(f"Server '{name}': the client-credentials grant needs the client ID "
                              "(\"oauth.clientId\").", key="oauth.clientId")
        if auth == "private_key_jwt" and not key_ref:
            raise ConfigError(f"Server '{name}': \"private_key_jwt\" needs the client's private key "
                              "(\"oauth.privateKey\", kept in the keychain).", key="oauth.privateKey")
        if auth != "private_key_jwt" and not ref:
            raise ConfigError(f"Server '{name}': \"{auth}\" needs the client secret (\"oauth.clientSecret\", "
                              "kept in the keychain).", key="oauth.clientSecret")
    return OAuthSettings(client_id=client_id, client_secret_ref=ref,
                         scope=(raw.get("scope") or "").strip() or None, callback_port=port,
                         client_metadata_url=cimd, grant=grant, client_auth=auth, private_key_ref=key_ref,
                         issuer=issuer, signing_algorithm=algorithm, idp_token_endpoint=idp_endpoint,
                         idp_client_id=idp_client_id, idp_client_secret_ref=idp_secret_ref, id_token_ref=id_token_ref)


def parse_server(name: str, raw: Any) -> ServerConfig:
    """Validate one entry; raise ``ConfigError`` with one sentence on the first problem."""
    check_name(name)
    if not isinstance(raw, dict):
        raise ConfigError(f"Server '{name}' must be an object with a \"command\" or a \"url\".")
    kind = raw.get("type", raw.get("transport"))
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        if kind == "sse":
            raise ConfigError(f"Server '{name}' uses the old SSE transport, which is not supported; "
                              "use its streamable HTTP URL instead.", key="type")
        raise ConfigError(f"Server '{name}': unknown transport type {kind!r}.", key="type")
    command, url = raw.get("command"), raw.get("url")
    if command is not None and url is not None:
        raise ConfigError(f"Server '{name}' has both a \"command\" and a \"url\"; keep one.")
    common: dict[str, Any] = {}
    if url is not None:
        try:
            parts = urlsplit(url) if isinstance(url, str) else None
        except ValueError:  # "http://[" and other unparseable addresses
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"Server '{name}': \"url\" must be an http:// or https:// address (got {url!r}).", key="url")
        common.update(transport=Transport.HTTP, url=url, headers=_str_dict(raw.get("headers"), name, "headers"),
                      scopes=Transport.HTTP.default_scopes, oauth=parse_oauth(name, raw.get("oauth")))
    elif command is not None:
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"Server '{name}': \"command\" must be the program to run, as text.", key="command")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"Server '{name}': \"args\" must be a list of text arguments.", key="args")
        common.update(transport=Transport.STDIO, command=command, args=tuple(args),
                      env=_str_dict(raw.get("env"), name, "env"))
    else:
        raise ConfigError(f"Server '{name}' needs a \"command\" (a program to run) or a \"url\".", key="command")

    enabled = raw.get("enabled", not raw.get("disabled", False))
    if not isinstance(enabled, bool):
        raise ConfigError(f"Server '{name}': \"enabled\" must be true or false.", key="enabled")
    if "scopes" in raw:
        scopes = raw["scopes"]
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise ConfigError(f"Server '{name}': \"scopes\" must be a list of scope names.", key="scopes")
        try:
            common["scopes"] = frozenset(Scope(s) for s in scopes)
        except ValueError:
            known = ", ".join(s.value for s in Scope)
            raise ConfigError(f"Server '{name}': unknown scope in {scopes} (known: {known}).", key="scopes") from None
    approval = _policy(raw.get("approval", "always"), name, "\"approval\"", "approval")
    policies_raw = raw.get("toolPolicies") or {}
    if not isinstance(policies_raw, dict):
        raise ConfigError(f"Server '{name}': \"toolPolicies\" must map tool names to auto, once or always.", key="toolPolicies")
    policies = {str(k): _policy(v, name, f"the policy of tool '{k}'", "toolPolicies") for k, v in policies_raw.items()}
    enabled_tools = raw.get("enabledTools")
    if enabled_tools is not None:
        if not isinstance(enabled_tools, list) or not all(isinstance(t, str) for t in enabled_tools):
            raise ConfigError(f"Server '{name}': \"enabledTools\" must be null or a list of tool names.", key="enabledTools")
        enabled_tools = frozenset(enabled_tools)
    protocol = raw.get("protocol", "auto")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"Server '{name}': \"protocol\" must be one of {', '.join(PROTOCOLS)}.", key="protocol")
    roots = raw.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) and r.strip() for r in roots):
        raise ConfigError(f"Server '{name}': \"roots\" must be a list of folder paths.", key="roots")
    transport = common["transport"]
    options = {o.attr: o.parse(raw, name) for o in OPTIONS if o.applies_to(transport)}
    return ServerConfig(name=name, enabled=enabled, approval=approval, tool_policies=policies,
                        enabled_tools=enabled_tools, protocol=protocol, roots=tuple(roots),
                        approval_explicit="approval" in raw, **common, **options)


def parse_servers(raw: Any) -> tuple[dict[str, ServerConfig], dict[str, str]]:
    """Every valid entry, and one sentence per invalid one (keyed by name)."""
    configs: dict[str, ServerConfig] = {}
    problems: dict[str, str] = {}
    if not isinstance(raw, dict):
        return configs, {"": "\"mcpServers\" in the settings file is not an object."}
    seen: dict[str, str] = {}
    for name, entry in raw.items():
        other = seen.get(str(name).casefold())
        if other is not None:
            problems[name] = f"The server names '{other}' and '{name}' differ only in case; rename one."
            continue
        seen[str(name).casefold()] = name
        try:
            configs[name] = parse_server(name, entry)
        except ConfigError as exc:
            problems[name] = str(exc)
    return configs, problems


# -- editing the settings file -------------------------------------------------
def find_name(settings: "Settings", name: str) -> str | None:
    """The existing server name equal to ``name`` ignoring case, if any."""
    for existing in settings.mcp_servers:
        if existing.casefold() == name.casefold():
            return existing
    return None


def add_server(settings: "Settings", name: str, raw: dict[str, Any]) -> ServerConfig:
    """Validate and add one entry (the caller saves). Raises ``ConfigError``."""
    existing = find_name(settings, name)
    if existing is not None:
        raise ConfigError(f"An MCP server named '{existing}' already exists; remove it first or pick another name.", key="name")
    config = parse_server(name, raw)
    settings.mcp_servers[name] = raw
    return config


def update_server(settings: "Settings", name: str, changes: dict[str, Any]) -> ServerConfig:
    """Apply ``changes`` (a key set to None is removed) to one entry, keeping every other key."""
    if name not in settings.mcp_servers:
        raise ConfigError(f"There is no MCP server named '{name}'.", key="name")
    raw = dict(settings.mcp_servers[name])
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    config = parse_server(name, raw)
    settings.mcp_servers[name] = raw
    return config


def set_enabled(settings: "Settings", name: str, enabled: bool) -> ServerConfig:
    # "disabled" (Cline/Cursor spelling) would contradict "enabled": drop it.
    return update_server(settings, name, {"enabled": enabled, "disabled": None})


def remove_server(settings: "Settings", name: str, secrets: "SecretStore | None") -> None:
    """Delete one entry, its grant, and the keychain secrets it created itself (the caller saves)."""
    raw = settings.mcp_servers.pop(name, None)
    if raw is None:
        raise ConfigError(f"There is no MCP server named '{name}'.", key="name")
    settings.set_server_grant(name, [])  # re-adding the same command must not bring the grant back
    if secrets is not None and isinstance(raw, dict):
        for ref in secret_refs(raw):
            if owns_secret(name, ref):  # never another server's or a provider's entry
                secrets.delete(ref)
    if secrets is not None:  # the sign-in's tokens and registration, which no entry references
        for ref in (secret_key(name, "oauth", "tokens"), secret_key(name, "oauth", "client")):
            secrets.delete(ref)


def _keep(secrets: "SecretStore | None", server: str, section: str, key: str, value: str) -> str:
    """Store one value (or, with no store, a placeholder reference: a dry run that only finds secrets)."""
    if secrets is None:
        return SECRET_PREFIX + secret_key(server, section, key)
    return store_secret(secrets, server, section, key, value)


def protect_values(values: dict[str, str], *, server: str, section: str, secrets: "SecretStore | None",
                   force_secret: frozenset[str] = frozenset()) -> tuple[dict[str, str], list[str]]:
    """Move secret values (by name, by shape, or ``force_secret``) of env or headers to the keychain.

    Returns the dict to write (references in place of secrets) and the keys moved.
    """
    out: dict[str, str] = {}
    moved: list[str] = []
    for key, value in values.items():
        if is_secret_ref(value):
            out[key] = value
        elif value and (key in force_secret or looks_secret(key) or value_looks_secret(value)):
            out[key] = _keep(secrets, server, section, key, value)
            moved.append(key)
        else:
            out[key] = value
    return out, moved


def _is_flag(arg: str) -> bool:
    return arg.startswith("-") and len(arg) > 1 and not arg[1:2].isdigit()


def protect_args(args: list[str], *, server: str, secrets: "SecretStore | None") -> tuple[list[str], list[int]]:
    """Move secret arguments to the keychain: the value after ``--api-key``/``--token``…, the value of
    ``--token=…``, and any argument shaped like a credential. Returns the list and the positions moved."""
    out: list[str] = []
    moved: list[int] = []
    for i, arg in enumerate(args):
        key = str(i)
        if _ARG_REF.match(arg):
            out.append(arg)
            continue
        flag, eq, value = arg.partition("=")
        if _is_flag(arg) and eq and value and (name_looks_secret(flag) or value_looks_secret(value)):
            out.append(flag + "=" + _keep(secrets, server, "args", key, value))
        elif arg and not _is_flag(arg) and (
                (i > 0 and _is_flag(args[i - 1]) and "=" not in args[i - 1] and name_looks_secret(args[i - 1]))
                or value_looks_secret(arg)):
            out.append(_keep(secrets, server, "args", key, arg))
        else:
            out.append(arg)
            continue
        moved.append(i)
    return out, moved


def protect_url(url: str, headers: dict[str, str], *, server: str,
                secrets: "SecretStore | None") -> tuple[str, dict[str, str], list[str]]:
    """Move a URL's credentials to the keychain.

    Secret query values (``?api_key=``, ``?token=``, or credential-shaped) become references
    inside the query, a secret-looking path segment (``/mcp/sk-live-…/sse``) a reference in its
    place (``keychain:mcp/<server>/url/path-<i>``); ``user:password@`` becomes an ``Authorization: Basic`` header (what the
    HTTP client would send for it anyway), itself kept in the keychain.
    Returns the URL, the headers and what was moved.
    """
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url, headers, []  # parse_server reports it
    moved: list[str] = []
    headers = dict(headers)
    if parts.password is not None or parts.username:
        if parts.password is not None:
            if any(k.lower() == "authorization" for k in headers):
                raise ConfigError(f"Server '{server}' has both a password in its URL and an Authorization "
                                  "header; keep one.", key="url")
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password)}"
            basic = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
            headers["Authorization"] = _keep(secrets, server, "headers", "Authorization", basic)
            moved.append("URL user and password (now an Authorization header)")
        netloc = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=netloc)
    if "/" not in server and any(path_segment_looks_secret(s) for s in parts.path.split("/")):
        segments = parts.path.split("/")
        for i, segment in enumerate(segments):
            if segment and not is_secret_ref(segment) and path_segment_looks_secret(segment):
                segments[i] = _keep(secrets, server, "url", f"path-{i}", unquote(segment))
                moved.append(f"URL path segment {i}")
        parts = parts._replace(path="/".join(segments))
    if parts.query:
        pieces: list[str] = []
        for piece in parts.query.split("&"):
            name, eq, value = piece.partition("=")
            if eq and value and not is_secret_ref(value) and (name_looks_secret(unquote(name))
                                                              or value_looks_secret(unquote(value))):
                key = _SAFE_KEY.sub("_", unquote(name))[:64] or f"q{len(pieces)}"
                pieces.append(f"{name}={_keep(secrets, server, 'url', key, value)}")
                moved.append(f"URL parameter {unquote(name)}")
            else:
                pieces.append(piece)
        parts = parts._replace(query="&".join(pieces))
    return urlunsplit(parts), headers, moved


def protect_entry(raw: dict[str, Any], *, server: str, secrets: "SecretStore | None",
                  force_secret: dict[str, frozenset[str]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``raw`` with every secret (env, headers, args, URL) moved to the keychain.

    With ``secrets=None`` nothing is stored: the copy holds placeholder references and the list
    says what would be moved (to refuse before storing anything when there is no keychain).
    """
    force_secret = force_secret or {}
    entry = dict(raw)
    moved: list[str] = []
    for section, label in (("env", "env"), ("headers", "header")):
        values = entry.get(section)
        if isinstance(values, dict) and values and all(isinstance(v, str) for v in values.values()):
            entry[section], keys = protect_values(values, server=server, section=section, secrets=secrets,
                                                  force_secret=force_secret.get(section, frozenset()))
            moved += [f"{label} {k}" for k in keys]
    args = entry.get("args")
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        entry["args"], positions = protect_args(args, server=server, secrets=secrets)
        moved += [f"argument {i + 1}" for i in positions]
    url = entry.get("url")
    if isinstance(url, str):
        given = entry.get("headers")
        headers: dict[str, str] = dict(given) if isinstance(given, dict) else {}
        entry["url"], new_headers, what = protect_url(url, headers, server=server, secrets=secrets)
        if new_headers:
            entry["headers"] = new_headers
        moved += what
    oauth = entry.get("oauth")
    for key, label in zip(OAUTH_SECRET_KEYS, OAUTH_SECRET_WORDS, strict=True):
        if isinstance(oauth, dict) and isinstance(oauth.get(key), str) and oauth[key] \
                and not is_secret_ref(oauth[key]):
            oauth = entry["oauth"] = {**oauth, key: _keep(secrets, server, "oauth", key, oauth[key])}
            moved.append(label)
    return entry, moved


def rename_secrets(raw: dict[str, Any], old: str, new: str, secrets: "SecretStore") -> dict[str, Any]:
    """Move the keychain entries ``old`` owns to ``new``'s names (a renamed server keeps its secrets)."""
    mapping: dict[str, str] = {}
    for ref in secret_refs(raw):
        if owns_secret(old, ref):
            value = secrets.get(ref)
            if value is not None:
                target = "mcp/" + new + ref[len("mcp/" + old):]
                secrets.set(target, value)
                mapping[ref] = target
    for what in ("tokens", "client"):  # the sign-in moves along (no entry references it)
        value = secrets.get(secret_key(old, "oauth", what))
        if value is not None:
            secrets.set(secret_key(new, "oauth", what), value)
            secrets.delete(secret_key(old, "oauth", what))
    if not mapping:
        return raw

    def swap(value: Any) -> Any:
        if isinstance(value, str):  # each match is a whole reference, so no prefix is mistaken for one
            return _REF_IN_TEXT.sub(lambda m: SECRET_PREFIX + mapping.get(m.group(0)[len(SECRET_PREFIX):],
                                                                          m.group(0)[len(SECRET_PREFIX):]), value)
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    renamed = {k: swap(v) if k in ("env", "headers", "args", "url", "oauth") else v for k, v in raw.items()}
    for ref in mapping:
        secrets.delete(ref)
    return renamed


def protect_stored_servers(settings: "Settings", secrets: "SecretStore | None") -> list[str]:
    """Move secrets that an older version (or a hand edit) left in clear in settings.json to the
    keychain, server by server; the caller saves. Returns what moved ("server: env X").

    Nothing happens without a secure keychain (a secret is never dropped, and a memory-only copy
    would be gone after this run). A server's grant (``tools.scopes``) is fingerprinted by its
    command, args and URL, so a grant that matched the entry before is carried over to its
    protected form."""
    from cks_desktop.tools.scopes import server_identity

    if secrets is None or not secrets.secure:
        return []
    moved: list[str] = []
    for name, raw in list(settings.mcp_servers.items()):
        if not isinstance(raw, dict):
            continue
        try:
            entry, found = protect_entry(raw, server=name, secrets=secrets)
        except ConfigError:
            continue  # the entry's own problem is reported where it is parsed
        if not found or secrets.last_error:
            secrets.last_error = None
            continue
        granted, identity = settings.server_grant(name)
        settings.mcp_servers[name] = entry
        if granted and identity == server_identity(raw):
            settings.set_server_grant(name, granted, server_identity(entry))
        moved += [f"{name}: {what}" for what in found]
    return moved
