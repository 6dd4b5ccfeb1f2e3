"""The settings file: one JSON file, written atomically, unknown keys preserved.

The file's raw dict is the source of truth; typed accessors read and write
sections of it, so keys this version does not know (written by a newer
version, or by hand) survive a save. A file that cannot be read (truncated,
invalid UTF-8, not an object) is moved aside as ``settings.json.broken-<time>``
the first time we save, never silently overwritten, and ``problem`` says what
was wrong so the UI and the CLI can tell the person.

Several processes share the file (the window, any number of ``cks-desktop``
commands in terminals), so a save is a three-way merge, never a blind rewrite:
``load`` keeps a copy of what it read (the base); ``save`` takes the lock file
beside ``settings.json`` (``filelock``), re-reads the file, applies only the key
paths that differ between the base and this object's data (set or deleted;
nested objects key by key, each ``mcpServers`` entry as one unit), writes
atomically and adopts the merged result. Callers keep mutating ``data`` and
the typed accessors as before: the change set is computed, not declared, so
none of them can forget to declare one. ``reload`` brings in what others
saved while keeping this object's unsaved changes.

Code outside this package reads and writes the file through its typed sections
(``section(Extraction)`` / ``set_section(value)``, ``sections.py``), never through
``data``: a test walks the code for it. Reading a section replaces each bad value by its
default and says so in ``problem`` (the file keeps the value: a newer version may know
it); setting one checks every value first and raises ``SettingsError`` (one sentence
naming the key) without writing anything. The shapes older versions wrote are migrated
when the file is read (``schema.migrate``), and written in today's shape on the next save.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cks_desktop.callbacks import Callbacks
from cks_desktop.diskfull import disk_full_sentence, is_disk_full
from cks_desktop.filelock import LockTimeout, file_lock
from cks_desktop.settings import schema
from cks_desktop.settings.schema import SettingsError
from cks_desktop.settings.sections import DEFAULT_MAX_ITERATIONS, PROVIDERS, ProviderEntry, Providers

__all__ = ["DEFAULTS", "DEFAULT_MAX_ITERATIONS", "LOCK_TIMEOUT", "PROVIDERS", "Settings", "SettingsError",
           "SettingsSaveError", "apply_changes", "atomic_write_text", "changes_between"]
S = TypeVar("S", bound=schema.SectionValue)

def _entry_defaults(entry: ProviderEntry) -> dict[str, Any]:
    """A provider's entry as a new settings file holds it (from its section's defaults, ``sections.py``)."""
    return {"model": entry.model, "base_url": entry.base_url, **({"num_ctx": entry.num_ctx} if entry.num_ctx else {})}


DEFAULTS: dict[str, Any] = {
    "providers": {"default": "", **{name: _entry_defaults(Providers().entry(name)) for name in PROVIDERS}},
    "agent": {"max_iterations": DEFAULT_MAX_ITERATIONS, "tool_policies": {}, "allowed_folders": []},
    "mcpServers": {},
    "ui": {"enter_sends": True, "theme": "system"},
}


log = logging.getLogger(__name__)
LOCK_TIMEOUT = 10.0
# Objects whose entries are replaced whole by a merge, never key by key: a server
# entry merged field by field with a concurrent edit could become a mix of two
# servers (a command from one, the env of the other).
_ATOMIC_CHILDREN: frozenset[tuple[str, ...]] = frozenset({("mcpServers",)})
_DELETED = object()
Change = tuple[tuple[str, ...], Any]  # (key path, new value or _DELETED)


class SettingsSaveError(SettingsError, OSError):
    """A save failed; the message is one sentence and the file on disk is unchanged.

    An ``OSError`` too, so callers that already catch ``OSError`` around
    ``save()`` keep working.
    """


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``True == 1`` and ``1 == 1.0`` in Python, not in the file)."""
    return type(a) is type(b) and (a == b if not isinstance(a, (dict, list)) else
                                   json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True))


def changes_between(base: dict[str, Any], current: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[Change]:
    """The key paths set or deleted from ``base`` to ``current`` (objects recursed into)."""
    out: list[Change] = []
    atomic = prefix in _ATOMIC_CHILDREN
    for key in base:
        if key not in current:
            out.append(((*prefix, key), _DELETED))
    for key, value in current.items():
        path = (*prefix, key)
        if key not in base:
            out.append((path, value))
        elif isinstance(value, dict) and isinstance(base[key], dict) and not atomic:
            out.extend(changes_between(base[key], value, path))
        elif not _same(base[key], value):
            out.append((path, value))
    return out


def apply_changes(target: dict[str, Any], changes: list[Change]) -> None:
    """Apply ``changes`` to ``target`` in place; missing parents are created as objects."""
    for path, value in changes:
        node = target
        for key in path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        if value is _DELETED:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = copy.deepcopy(value)


def _replace_in_place(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Make ``target`` equal ``source``, keeping the identity of nested dicts (callers hold them)."""
    for key in [k for k in target if k not in source]:
        del target[key]
    for key, value in source.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _replace_in_place(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


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
class _Read:
    data: dict[str, Any]
    problem: str | None
    broken: bool  # the file exists but could not be read


def _read(path: Path) -> _Read:
    if not path.exists():
        return _Read({}, None, False)
    try:
        raw = json.loads(path.read_bytes().decode("utf-8-sig"))  # -sig: Notepad's BOM is harmless
        if not isinstance(raw, dict):
            raise ValueError("the top level is not a JSON object")
        return _Read(raw, None, False)
    except RecursionError:
        return _Read({}, f"The settings file {path} could not be read (it is nested too deeply); "
                         "defaults are used until you save.", True)
    except FileNotFoundError:  # replaced between exists() and the read: as if it was never there
        return _Read({}, None, False)
    except (UnicodeDecodeError, ValueError, OSError) as exc:
        return _Read({}, f"The settings file {path} could not be read ({exc}); defaults are used until you save.",
                     True)


@dataclass
class Settings:
    path: Path
    data: dict[str, Any]
    problem: str | None = None
    _broken: bool = False
    _base: dict[str, Any] = field(default_factory=dict, repr=False)  # what the file held when last read
    # A listener's bug must not turn a done save into a failed one: Callbacks logs and skips it.
    _adopted: Callbacks[[set[str]]] = field(default_factory=lambda: Callbacks("settings"), repr=False,
                                            compare=False)

    @classmethod
    def load(cls, path: Path) -> "Settings":
        read = _read(path)
        settings = cls(path=path, data=read.data, problem=read.problem, _broken=read.broken)
        settings._sanitize()
        settings._base = copy.deepcopy(settings.data)
        return settings

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(f"{self.path.name}.lock")

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
        schema.migrate(self.data)

    def _note(self, text: str) -> None:
        if self.problem and text in self.problem:  # a section read twice says it once
            return
        self.problem = f"{self.problem} {text}".strip() if self.problem else text

    def _fresh(self) -> tuple["Settings", bool]:
        """The file as it is now, sanitized like ``load`` does; and whether it could not be read."""
        read = _read(self.path)
        fresh = Settings(path=self.path, data=read.data, problem=read.problem, _broken=read.broken)
        fresh._sanitize()
        return fresh, read.broken

    def pending_changes(self) -> list[Change]:
        """What this object would write: the key paths changed since the file was last read."""
        return changes_between(self._base, self.data)

    def save(self, *, timeout: float = LOCK_TIMEOUT) -> None:
        """Merge this object's changes into the file as it is now, under the lock.

        Raises ``SettingsSaveError`` (one sentence; the file is unchanged) when
        the disk is full, the folder is not writable or the lock stays taken.
        """
        try:
            with file_lock(self.lock_path, timeout, what="the settings file"):
                fresh, broken = self._fresh()
                if broken and self.path.exists():
                    # Never silently overwritten: kept aside, and our whole view (the best
                    # readable state there is) is written in its place.
                    aside = self.path.with_name(f"{self.path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
                    os.replace(self.path, aside)
                    merged = copy.deepcopy(self.data)
                else:
                    merged = fresh.data
                    apply_changes(merged, self.pending_changes())
                atomic_write_text(self.path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
        except LockTimeout as exc:
            raise SettingsSaveError(str(exc)) from None
        except OSError as exc:
            if isinstance(exc, SettingsSaveError):
                raise
            if is_disk_full(exc, self.path.parent):  # Windows' ERROR_DISK_FULL arrives as ENOSPC too
                raise SettingsSaveError(disk_full_sentence(self.path, f"the settings file {self.path}")) from None
            raise SettingsSaveError(f"The settings could not be saved to {self.path} "
                                    f"({exc.strerror or exc}); the file was left as it was.") from None
        self._broken = False
        self._adopt(merged, copy.deepcopy(merged))

    def reload(self) -> set[str]:
        """Take in what other processes saved, keeping this object's unsaved changes.

        Returns the top-level keys whose value changed in ``data`` (empty when
        nothing did). A file that cannot be read now is left to ``save`` (which
        keeps it aside) and changes nothing here.
        """
        fresh, broken = self._fresh()
        if broken:
            self.problem = fresh.problem
            return set()
        merged = copy.deepcopy(fresh.data)
        apply_changes(merged, self.pending_changes())
        self._broken = False
        return self._adopt(merged, fresh.data)

    def subscribe(self, listener: Callable[[set[str]], None]) -> Callable[[], None]:
        """Call ``listener(keys)`` whenever a save or reload brought in what others wrote.

        ``keys`` are the top-level keys whose in-memory value changed. A save
        that merged a terminal's new server into the window's view is such a
        change, though the window itself saved: what it shows must follow.
        Returns the function that unsubscribes ``listener``.
        """
        return self._adopted.subscribe(listener)

    def _adopt(self, merged: dict[str, Any], base: dict[str, Any]) -> set[str]:
        """Make ``merged`` the in-memory view (in place) and ``base`` the last-read file; tell listeners."""
        changed = {k for k in set(merged) | set(self.data)
                   if k not in merged or k not in self.data or not _same(merged[k], self.data[k])}
        _replace_in_place(self.data, merged)
        self._base = base
        if changed:
            self._adopted.emit(changed)
        return changed

    # -- typed sections (sections.py) ---------------------------------------------------------------
    def section(self, kind: type[S]) -> S:
        """The section's typed value: defaults filled in; a bad value is replaced by its default
        and ``problem`` says so (the file keeps it until that section is set)."""
        value, notes = schema.read(kind, self.data.get(kind.KEY))
        for note in notes:
            self._note(note)
        return value

    def set_section(self, value: schema.SectionValue) -> None:
        """Check every value, then write the ones that changed (the caller saves). A bad value
        raises ``SettingsError`` with one sentence naming its key, and nothing is written."""
        checked = schema.validated(value)
        raw = self.data.get(checked.KEY)
        if not isinstance(raw, dict):
            raw = self.data[checked.KEY] = {}
        schema.write(checked, raw)

    # -- typed accessors ------------------------------------------------------
    def provider_entry(self, name: str) -> ProviderEntry:
        """One provider's typed entry (``providers.<name>``), its defaults where the file says nothing."""
        return self.section(Providers).entry(name)

    def set_provider_entry(self, name: str, entry: ProviderEntry) -> None:
        """Replace one provider's entry (checked first: ``SettingsError`` names a bad key, nothing set)."""
        if name not in PROVIDERS:
            raise SettingsError(f"There is no provider named {name!r}.")
        changed: dict[str, Any] = {name: entry}
        self.set_section(replace(self.section(Providers), **changed))

    def provider(self, name: str) -> dict[str, Any]:
        """The raw entry of one provider, for tests that write a file as a person or an older
        version would; the app reads and writes ``provider_entry``."""
        section = self.data["providers"].setdefault(name, {})
        if isinstance(section, dict):
            return section
        fresh: dict[str, Any] = {}
        self.data["providers"][name] = fresh
        return fresh

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

    @property
    def allowed_folders(self) -> list[Path]:
        return [Path(p).expanduser() for p in self.data["agent"]["allowed_folders"] if isinstance(p, str) and p]

    # -- scopes a chat grants (tools/scopes.py computes the grant; these only store the choice) ---------
    def _agent_map(self, key: str) -> dict[str, Any]:
        section = self.data["agent"].get(key)
        if isinstance(section, dict):
            return section
        fresh: dict[str, Any] = {}
        self.data["agent"][key] = fresh
        return fresh

    @staticmethod
    def _scope_list(value: Any) -> list[str] | None:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None

    @property
    def default_scopes(self) -> list[str] | None:
        """Scopes a chat grants when its session has no choice of its own; None: the built-in defaults."""
        return self._scope_list(self.data["agent"].get("granted_scopes"))

    def set_default_scopes(self, scopes: list[str] | None) -> None:
        if scopes is None:
            self.data["agent"].pop("granted_scopes", None)
        else:
            self.data["agent"]["granted_scopes"] = sorted(set(scopes))

    def session_scopes(self, session_id: str) -> list[str] | None:
        """The scopes chats in this session grant; None: the defaults."""
        return self._scope_list(self._agent_map("session_scopes").get(session_id))

    def set_session_scopes(self, session_id: str, scopes: list[str] | None) -> None:
        section = self._agent_map("session_scopes")
        if scopes is None:
            section.pop(session_id, None)
        else:
            section[session_id] = sorted(set(scopes))

    def server_grant(self, server: str) -> tuple[list[str], str]:
        """Scopes every chat grants the tools of this MCP server, and the identity (command/URL
        fingerprint, ``tools.scopes.server_identity``) of the server they were granted to."""
        entry = self._agent_map("server_scopes").get(server)
        if not isinstance(entry, dict):
            return [], ""
        identity = entry.get("identity")
        return self._scope_list(entry.get("scopes")) or [], identity if isinstance(identity, str) else ""

    def set_server_grant(self, server: str, scopes: list[str], identity: str = "") -> None:
        section = self._agent_map("server_scopes")
        if scopes:
            section[server] = {"scopes": sorted(set(scopes)), "identity": identity}
        else:
            section.pop(server, None)

    @property
    def mcp_servers(self) -> dict[str, Any]:
        servers = self.data.get("mcpServers")
        if not isinstance(servers, dict):
            servers = self.data["mcpServers"] = {}
        return servers
