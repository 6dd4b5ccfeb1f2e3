"""Import MCP servers from Claude Desktop's ``claude_desktop_config.json``.

Where Claude Desktop keeps it:
  macOS               ~/Library/Application Support/Claude/
  Windows             %APPDATA%\\Claude\\
  Windows (Store app) %LOCALAPPDATA%\\Packages\\Claude_*\\LocalCache\\Roaming\\Claude\\
  Linux (unofficial)  ~/.config/Claude/

The file is untrusted input (anyone may hand a person a config to import):

- its trust keys are ignored — ``approval``, ``scopes``, ``toolPolicies``,
  ``inheritEnv`` and other hosts' auto-approve lists — so an imported server gets
  this app's defaults for a new server: every call asks, default scopes, a
  minimal environment;
- ``keychain:`` references are never resolved from it: a server whose entry holds
  one is skipped with the reason (otherwise it could name a provider's key or
  another server's token and receive it);
- secrets (by name or shape, in env, headers, arguments or the URL) go to the
  keychain under this server's own names, so removing it deletes only those.

Other keys are copied as is (so keys we do not use survive). Entries are also
skipped, with the reason, when the name already exists here, when the entry is
invalid, when the file names it twice, or when it holds secrets and there is no
keychain to keep them in (only when ``allow_memory_secrets`` is false: the CLI,
whose memory dies with the process).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.mcp.config import (
    ConfigError,
    find_name,
    foreign_refs,
    parse_server,
    protect_entry,
)

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

FILE_NAME = "claude_desktop_config.json"
# Keys by which a file could grant itself trust: dropped, the app's defaults apply.
TRUST_KEYS = ("approval", "scopes", "toolPolicies", "inheritEnv", "autoApprove", "alwaysAllow", "trust",
              "trusted")


class ClaudeImportError(Exception):
    """The file could not be found or read (one sentence)."""


@dataclass
class ImportReport:
    source: Path
    imported: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    secrets_stored: list[str] = field(default_factory=list)  # "server: KEY"
    ignored: list[str] = field(default_factory=list)  # "server: approval, scopes" (trust keys dropped)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "imported": self.imported,
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "secrets_stored": self.secrets_stored,
            "ignored": self.ignored,
        }


def candidate_paths(platform: str | None = None, home: Path | None = None,
                    environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where Claude Desktop may keep its config on this platform, most likely first."""
    platform = platform or sys.platform
    home = home or Path.home()
    env = os.environ if environ is None else environ
    if platform == "darwin":
        return [home / "Library" / "Application Support" / "Claude" / FILE_NAME]
    if platform == "win32":
        paths: list[Path] = []
        appdata = env.get("APPDATA") or str(home / "AppData" / "Roaming")
        paths.append(Path(appdata) / "Claude" / FILE_NAME)
        local = Path(env.get("LOCALAPPDATA") or str(home / "AppData" / "Local"))
        packages = local / "Packages"
        try:
            stores = sorted(packages.glob("Claude_*"))
        except OSError:
            stores = []
        paths += [p / "LocalCache" / "Roaming" / "Claude" / FILE_NAME for p in stores]
        return paths
    config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [config_home / "Claude" / FILE_NAME]


def find_config(platform: str | None = None, home: Path | None = None,
                environ: Mapping[str, str] | None = None) -> Path | None:
    for path in candidate_paths(platform, home, environ):
        if path.is_file():
            return path
    return None


def _pairs_keep_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON object hook that remembers keys given twice (json.loads would keep only the last)."""
    out: dict[str, Any] = {}
    dupes: list[str] = []
    for key, value in pairs:
        if key in out:
            dupes.append(key)
        out[key] = value
    if dupes:
        out["\0duplicates"] = dupes
    return out


def read_servers(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The ``mcpServers`` object of a Claude config, and the names it lists twice."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ClaudeImportError(f"There is no file at {path}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaudeImportError(f"{path} could not be read: {exc}.") from None
    try:
        data = json.loads(text, object_pairs_hook=_pairs_keep_duplicates)
    except json.JSONDecodeError as exc:
        raise ClaudeImportError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise ClaudeImportError(f"{path} cannot be read as JSON ({why}).") from None
    if not isinstance(data, dict):
        raise ClaudeImportError(f"{path} does not hold a JSON object.")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ClaudeImportError(f"\"mcpServers\" in {path} is not an object.")
    dupes = servers.pop("\0duplicates", [])
    return servers, dupes


def _strip_markers(value: Any) -> Any:
    if isinstance(value, dict):
        value.pop("\0duplicates", None)
        for v in value.values():
            _strip_markers(v)
    return value


def import_claude(settings: "Settings", secrets: "SecretStore", path: Path | None = None, *,
                  allow_memory_secrets: bool = True) -> ImportReport:
    """Add the servers of a Claude Desktop config to ``settings`` (the caller saves)."""
    if path is None:
        path = find_config()
        if path is None:
            where = ", ".join(str(p) for p in candidate_paths())
            raise ClaudeImportError(f"No Claude Desktop config was found (looked in {where}).")
    servers, dupes = read_servers(path)
    report = ImportReport(source=path)
    for name, raw in servers.items():
        _strip_markers(raw)
        if name in dupes:
            report.skipped.append((name, "the file names this server more than once"))
            continue
        existing = find_name(settings, name)
        if existing is not None:
            report.skipped.append((name, f"a server named '{existing}' already exists here"))
            continue
        try:
            parse_server(name, raw)
        except ConfigError as exc:
            report.skipped.append((name, f"invalid entry: {exc}"))
            continue
        refs = foreign_refs(raw)
        if refs:
            report.skipped.append((name, f"it refers to keychain entries ({', '.join(sorted(set(refs)))}), and an "
                                         "imported file may not use this app's keychain; add the server by "
                                         "hand and type its secrets"))
            continue
        entry = json.loads(json.dumps(raw))  # a private copy; the caller's data stays untouched
        dropped = [k for k in TRUST_KEYS if k in entry]
        for key in dropped:
            entry.pop(key)
        try:
            _, secret_keys = protect_entry(entry, server=name, secrets=None)  # a dry run: what is secret
        except ConfigError as exc:
            report.skipped.append((name, f"invalid entry: {exc}"))
            continue
        if secret_keys and not secrets.secure and not allow_memory_secrets:
            report.skipped.append((name, f"it holds secrets ({', '.join(secret_keys)}) and no secure "
                                         "keychain is available to keep them"))
            continue
        entry, moved = protect_entry(entry, server=name, secrets=secrets)
        report.secrets_stored += [f"{name}: {k.split(' ', 1)[1] if k.startswith(('env ', 'header ')) else k}"
                                  for k in moved]
        if dropped:
            report.ignored.append(f"{name}: {', '.join(dropped)}")
        settings.mcp_servers[name] = entry
        report.imported.append(name)
    return report
