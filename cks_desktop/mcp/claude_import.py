"""Import MCP servers from Claude Desktop's ``claude_desktop_config.json``.

Where Claude Desktop keeps it:
  macOS               ~/Library/Application Support/Claude/
  Windows             %APPDATA%\\Claude\\
  Windows (Store app) %LOCALAPPDATA%\\Packages\\Claude_*\\LocalCache\\Roaming\\Claude\\
  Linux (unofficial)  ~/.config/Claude/

Each entry of its ``mcpServers`` is copied as is (so keys we do not use survive)
except that environment values and headers that look secret (KEY, TOKEN, SECRET,
PASSWORD… in the name) go to the keychain and the file gets a reference.
Entries are skipped, with the reason, when the name already exists here, when
the entry is invalid, when the file names it twice, or when it holds secrets
and there is no keychain to keep them in (only when ``allow_memory_secrets`` is
false: the CLI, whose memory dies with the process).
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
    looks_secret,
    parse_server,
    protect_values,
)

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

FILE_NAME = "claude_desktop_config.json"


class ClaudeImportError(Exception):
    """The file could not be found or read (one sentence)."""


@dataclass
class ImportReport:
    source: Path
    imported: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    secrets_stored: list[str] = field(default_factory=list)  # "server: KEY"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "imported": self.imported,
            "skipped": [{"name": n, "reason": r} for n, r in self.skipped],
            "secrets_stored": self.secrets_stored,
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
        entry = json.loads(json.dumps(raw))  # a private copy; the caller's data stays untouched
        secret_keys = [f"env {k}" for k in (entry.get("env") or {}) if looks_secret(k)]
        secret_keys += [f"header {k}" for k in (entry.get("headers") or {}) if looks_secret(k)]
        if secret_keys and not secrets.secure and not allow_memory_secrets:
            report.skipped.append((name, f"it holds secrets ({', '.join(secret_keys)}) and no secure "
                                         "keychain is available to keep them"))
            continue
        for section in ("env", "headers"):
            values = entry.get(section)
            if isinstance(values, dict) and values:
                entry[section], moved = protect_values(values, server=name, section=section, secrets=secrets)
                report.secrets_stored += [f"{name}: {k}" for k in moved]
        settings.mcp_servers[name] = entry
        report.imported.append(name)
    return report
