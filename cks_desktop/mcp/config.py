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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cks_desktop.tools.types import Policy, Scope

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

SECRET_PREFIX = "keychain:"
DEFAULT_TIMEOUT = 120.0
PROTOCOLS = ("auto", "legacy", "2026-07-28")
STDIO_DEFAULT_SCOPES = frozenset({Scope.CODE_EXECUTE})
HTTP_DEFAULT_SCOPES = frozenset({Scope.NET_FETCH})
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie", "x-api-key", "api-key")
_KNOWN_KEYS = frozenset({
    "command", "args", "env", "cwd", "url", "headers", "type", "transport", "enabled", "disabled",
    "scopes", "approval", "toolPolicies", "enabledTools", "timeout", "protocol",
})


class ConfigError(ValueError):
    """One sentence a person can act on."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: str  # "stdio" or "http"
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

    @property
    def source(self) -> str:
        """The registry source of this server's tools."""
        return f"mcp:{self.name}"

    def tool_enabled(self, tool: str) -> bool:
        return self.enabled_tools is None or tool in self.enabled_tools

    def policy_for(self, tool: str) -> Policy:
        return self.tool_policies.get(tool, self.approval)

    def describe(self) -> str:
        """Short text for lists: what runs or where it connects."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])


# -- secrets ------------------------------------------------------------------
def looks_secret(key: str) -> bool:
    """Whether an env variable or header name suggests its value is a secret."""
    upper = key.upper()
    if key.strip().lower() in _SECRET_HEADERS:
        return True
    return any(word in upper for word in _SECRET_WORDS)


def is_secret_ref(value: str) -> bool:
    return isinstance(value, str) and value.startswith(SECRET_PREFIX)


def secret_key(server: str, section: str, key: str) -> str:
    """The keychain entry name for one secret value of one server."""
    return f"mcp/{server}/{section}/{key}"


def store_secret(secrets: "SecretStore", server: str, section: str, key: str, value: str) -> str:
    """Put ``value`` in the keychain and return the reference to write in the file."""
    name = secret_key(server, section, key)
    secrets.set(name, value)
    return SECRET_PREFIX + name


class MissingSecret(ConfigError):
    pass


def _resolve(values: dict[str, str], secrets: "SecretStore | None", server: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        if is_secret_ref(value):
            found = secrets.get(value[len(SECRET_PREFIX):]) if secrets is not None else None
            if found is None:
                raise MissingSecret(
                    f"The secret {what} {key} of MCP server '{server}' is not in the keychain; "
                    "enter it again in the server's settings.")
            out[key] = found
        else:
            out[key] = value
    return out


def resolve_env(config: ServerConfig, secrets: "SecretStore | None") -> dict[str, str]:
    return _resolve(config.env, secrets, config.name, "environment value")


def resolve_headers(config: ServerConfig, secrets: "SecretStore | None") -> dict[str, str]:
    return _resolve(config.headers, secrets, config.name, "header")


def secret_refs(raw: dict[str, Any]) -> list[str]:
    """Keychain names referenced by one raw entry (to delete them with the server)."""
    refs = []
    for section in ("env", "headers"):
        values = raw.get(section)
        if isinstance(values, dict):
            refs += [v[len(SECRET_PREFIX):] for v in values.values() if is_secret_ref(v)]
    return refs


# -- parsing ------------------------------------------------------------------
_BAD_NAME = re.compile(r"[:\x00-\x1f\x7f]")


def check_name(name: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("An MCP server needs a name.")
    if name != name.strip():
        raise ConfigError(f"The server name '{name}' starts or ends with a space.")
    if _BAD_NAME.search(name):
        raise ConfigError(f"The server name '{name}' may not contain ':' or control characters.")
    if len(name) > 64:
        raise ConfigError(f"The server name '{name[:20]}…' is longer than 64 characters.")


def _str_dict(raw: Any, name: str, key: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ConfigError(f"Server '{name}': \"{key}\" must be an object whose values are text.")
    return dict(raw)


def _policy(value: Any, name: str, where: str) -> Policy:
    try:
        return Policy(value)
    except ValueError:
        raise ConfigError(f"Server '{name}': {where} must be auto, once or always (got {value!r}).") from None


def parse_server(name: str, raw: Any) -> ServerConfig:
    """Validate one entry; raise ``ConfigError`` with one sentence on the first problem."""
    check_name(name)
    if not isinstance(raw, dict):
        raise ConfigError(f"Server '{name}' must be an object with a \"command\" or a \"url\".")
    kind = raw.get("type", raw.get("transport"))
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        if kind == "sse":
            raise ConfigError(f"Server '{name}' uses the old SSE transport, which is not supported; "
                              "use its streamable HTTP URL instead.")
        raise ConfigError(f"Server '{name}': unknown transport type {kind!r}.")
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
            raise ConfigError(f"Server '{name}': \"url\" must be an http:// or https:// address (got {url!r}).")
        common.update(transport="http", url=url, headers=_str_dict(raw.get("headers"), name, "headers"),
                      scopes=HTTP_DEFAULT_SCOPES)
    elif command is not None:
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"Server '{name}': \"command\" must be the program to run, as text.")
        args = raw.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"Server '{name}': \"args\" must be a list of text arguments.")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"Server '{name}': \"cwd\" must be a folder path.")
        common.update(transport="stdio", command=command, args=tuple(args),
                      env=_str_dict(raw.get("env"), name, "env"), cwd=cwd or None)
    else:
        raise ConfigError(f"Server '{name}' needs a \"command\" (a program to run) or a \"url\".")

    enabled = raw.get("enabled", not raw.get("disabled", False))
    if not isinstance(enabled, bool):
        raise ConfigError(f"Server '{name}': \"enabled\" must be true or false.")
    if "scopes" in raw:
        scopes = raw["scopes"]
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise ConfigError(f"Server '{name}': \"scopes\" must be a list of scope names.")
        try:
            common["scopes"] = frozenset(Scope(s) for s in scopes)
        except ValueError:
            known = ", ".join(s.value for s in Scope)
            raise ConfigError(f"Server '{name}': unknown scope in {scopes} (known: {known}).") from None
    approval = _policy(raw.get("approval", "always"), name, "\"approval\"")
    policies_raw = raw.get("toolPolicies") or {}
    if not isinstance(policies_raw, dict):
        raise ConfigError(f"Server '{name}': \"toolPolicies\" must map tool names to auto, once or always.")
    policies = {str(k): _policy(v, name, f"the policy of tool '{k}'") for k, v in policies_raw.items()}
    enabled_tools = raw.get("enabledTools")
    if enabled_tools is not None:
        if not isinstance(enabled_tools, list) or not all(isinstance(t, str) for t in enabled_tools):
            raise ConfigError(f"Server '{name}': \"enabledTools\" must be null or a list of tool names.")
        enabled_tools = frozenset(enabled_tools)
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise ConfigError(f"Server '{name}': \"timeout\" must be a positive number of seconds.")
    protocol = raw.get("protocol", "auto")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"Server '{name}': \"protocol\" must be one of {', '.join(PROTOCOLS)}.")
    return ServerConfig(name=name, enabled=enabled, approval=approval, tool_policies=policies,
                        enabled_tools=enabled_tools, timeout=float(timeout), protocol=protocol, **common)


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


def unknown_keys(raw: dict[str, Any]) -> list[str]:
    """Keys this version does not use (kept on rewrite; shown so typos are visible)."""
    return sorted(k for k in raw if k not in _KNOWN_KEYS)


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
        raise ConfigError(f"An MCP server named '{existing}' already exists; remove it first or pick another name.")
    config = parse_server(name, raw)
    settings.mcp_servers[name] = raw
    return config


def update_server(settings: "Settings", name: str, changes: dict[str, Any]) -> ServerConfig:
    """Apply ``changes`` (a key set to None is removed) to one entry, keeping every other key."""
    if name not in settings.mcp_servers:
        raise ConfigError(f"There is no MCP server named '{name}'.")
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
    """Delete one entry and the keychain secrets it referenced (the caller saves)."""
    raw = settings.mcp_servers.pop(name, None)
    if raw is None:
        raise ConfigError(f"There is no MCP server named '{name}'.")
    if secrets is not None and isinstance(raw, dict):
        for ref in secret_refs(raw):
            secrets.delete(ref)


def protect_values(values: dict[str, str], *, server: str, section: str, secrets: "SecretStore",
                   force_secret: frozenset[str] = frozenset()) -> tuple[dict[str, str], list[str]]:
    """Move secret-looking (or ``force_secret``) values to the keychain.

    Returns the dict to write (references in place of secrets) and the keys moved.
    """
    out: dict[str, str] = {}
    moved: list[str] = []
    for key, value in values.items():
        if is_secret_ref(value):
            out[key] = value
        elif key in force_secret or looks_secret(key):
            out[key] = store_secret(secrets, server, section, key, value)
            moved.append(key)
        else:
            out[key] = value
    return out, moved
