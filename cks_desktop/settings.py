"""Settings: one JSON file, written atomically, unknown keys preserved.

The file's raw dict is the source of truth; typed accessors read and write
sections of it, so keys this version does not know (written by a newer
version, or by hand) survive a save. A file that cannot be read (truncated,
invalid UTF-8, not an object) is moved aside as ``settings.json.broken-<time>``
the first time we save, never silently overwritten, and ``problem`` says what
was wrong so the UI and the CLI can tell the person.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MAX_ITERATIONS = 8
PROVIDERS = ("anthropic", "ollama", "openai", "gemini")

DEFAULTS: dict[str, Any] = {
    "providers": {
        "default": "",
        "anthropic": {"model": "claude-sonnet-5", "base_url": ""},
        "ollama": {"model": "llama3.1", "base_url": "http://127.0.0.1:11434", "num_ctx": 16384},
        "openai": {"model": "gpt-4.1-mini", "base_url": ""},
        "gemini": {"model": "gemini-2.5-flash", "base_url": ""},
    },
    "agent": {"max_iterations": DEFAULT_MAX_ITERATIONS, "tool_policies": {}, "allowed_folders": []},
    "mcpServers": {},
    "ui": {"enter_sends": True},
}


class SettingsError(Exception):
    pass


def _merge_defaults(data: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, value in defaults.items():
        if key not in data:
            data[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(data[key], dict):
            _merge_defaults(data[key], value)


def atomic_write_text(path: Path, text: str) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@dataclass
class Settings:
    path: Path
    data: dict[str, Any]
    problem: str | None = None
    _broken: bool = False

    @classmethod
    def load(cls, path: Path) -> "Settings":
        problem = None
        broken = False
        data: dict[str, Any] = {}
        if path.exists():
            try:
                raw = json.loads(path.read_bytes().decode("utf-8-sig"))  # -sig: Notepad's BOM is harmless
                if not isinstance(raw, dict):
                    raise ValueError("the top level is not a JSON object")
                data = raw
            except RecursionError:
                problem = (f"The settings file {path} could not be read (it is nested too deeply); "
                           "defaults are used until you save.")
                broken = True
            except (UnicodeDecodeError, ValueError, OSError) as exc:
                problem = f"The settings file {path} could not be read ({exc}); defaults are used until you save."
                broken = True
        settings = cls(path=path, data=data, problem=problem, _broken=broken)
        settings._sanitize()
        return settings

    def _sanitize(self) -> None:
        """Replace sections of the wrong type with defaults (and say so), keep the rest."""
        for key, value in DEFAULTS.items():
            if key in self.data and isinstance(value, dict) and not isinstance(self.data[key], dict):
                self._note(f"'{key}' in the settings file was not an object and was reset.")
                self.data[key] = copy.deepcopy(value)
        _merge_defaults(self.data, DEFAULTS)
        agent = self.data["agent"]
        if not isinstance(agent.get("max_iterations"), int) or isinstance(agent.get("max_iterations"), bool) \
                or agent["max_iterations"] < 1:
            self._note("agent.max_iterations was not a positive whole number and was reset to 8.")
            agent["max_iterations"] = DEFAULT_MAX_ITERATIONS
        for key, kind in (("tool_policies", dict), ("allowed_folders", list)):
            if not isinstance(agent.get(key), kind):
                self._note(f"agent.{key} had the wrong type and was reset.")
                agent[key] = kind()

    def _note(self, text: str) -> None:
        self.problem = f"{self.problem} {text}".strip() if self.problem else text

    def save(self) -> None:
        if self._broken and self.path.exists():
            aside = self.path.with_name(f"{self.path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.path, aside)
            self._broken = False
        atomic_write_text(self.path, json.dumps(self.data, indent=2, ensure_ascii=False) + "\n")

    # -- typed accessors ------------------------------------------------------
    def provider(self, name: str) -> dict[str, Any]:
        section = self.data["providers"].setdefault(name, {})
        if not isinstance(section, dict):
            section = self.data["providers"][name] = {}
        return section

    @property
    def default_provider(self) -> str:
        value = self.data["providers"].get("default") or ""
        return value if value in PROVIDERS else ""

    @default_provider.setter
    def default_provider(self, name: str) -> None:
        self.data["providers"]["default"] = name

    @property
    def max_iterations(self) -> int:
        return int(self.data["agent"]["max_iterations"])

    @max_iterations.setter
    def max_iterations(self, value: int) -> None:
        self.data["agent"]["max_iterations"] = int(value)

    @property
    def tool_policies(self) -> dict[str, str]:
        return {k: v for k, v in self.data["agent"]["tool_policies"].items()
                if v in ("auto", "once", "always")}

    def set_tool_policy(self, tool: str, policy: str | None) -> None:
        policies = self.data["agent"]["tool_policies"]
        if policy is None:
            policies.pop(tool, None)
        else:
            policies[tool] = policy

    def reset_tool_policies(self) -> None:
        self.data["agent"]["tool_policies"] = {}

    @property
    def allowed_folders(self) -> list[Path]:
        return [Path(p).expanduser() for p in self.data["agent"]["allowed_folders"] if isinstance(p, str) and p]

    @property
    def mcp_servers(self) -> dict[str, Any]:
        servers = self.data.get("mcpServers")
        if not isinstance(servers, dict):
            servers = self.data["mcpServers"] = {}
        return servers
