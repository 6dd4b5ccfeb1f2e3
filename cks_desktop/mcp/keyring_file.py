"""A secret store in one file the person named, for machines without an OS keychain (CI, servers).

``cks-desktop mcp … --keyring-file PATH`` (or ``CKS_DESKTOP_KEYRING_FILE``) keeps the
MCP sign-ins (tokens, registrations, client secrets) in ``PATH`` instead of the OS
keychain, so a headless ``mcp login`` is still signed in for the next ``mcp call``.
It is never chosen by itself: without a keychain and without this option the
commands keep refusing, as before.

The file is JSON ``{"<service>": {"<name>": "<value>"}}``, mode 0600, written whole
to a temporary file beside it and renamed over it (a crash leaves the old file or
the new one, never half of one). A file that group or others may read is refused
(one sentence), as is one that is not this format: nothing is overwritten then.
Each read loads the file again, so two commands in a row (or at once) see each
other's writes.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

from cks_desktop.secrets import SERVICE, SecretStore

MAX_BYTES = 4 * 1024 * 1024


class KeyringFileError(Exception):
    """The keyring file cannot be used; the message is one sentence naming it."""


def warning_line(path: Path) -> str:
    """The one warning a command prints when it uses the file."""
    return (f"warning: no OS keychain; MCP sign-ins and secrets are kept in {path} (mode 0600): anyone who can "
            "read that file as you can use them.")


class FileSecretStore(SecretStore):
    """``SecretStore`` over one 0600 JSON file; ``secure`` in the sense that what is set persists."""

    def __init__(self, path: Path, service: str = SERVICE) -> None:
        super().__init__(service, secure=True)
        self.path = path.expanduser()
        self._load()  # refuse a bad file before any command does anything

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise KeyringFileError(f"The keyring file {self.path} cannot be read: {exc.strerror}.") from None
        if not stat.S_ISREG(info.st_mode):
            raise KeyringFileError(f"The keyring file {self.path} is not a regular file.")
        if info.st_mode & 0o077:
            raise KeyringFileError(f"The keyring file {self.path} may be read by other users (mode "
                                   f"{stat.S_IMODE(info.st_mode):04o}); make it 0600 (chmod 600) first.")
        if info.st_size > MAX_BYTES:
            raise KeyringFileError(f"The keyring file {self.path} is larger than {MAX_BYTES // 2**20} MB; "
                                   "it is not one this app wrote.")
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, UnicodeDecodeError, ValueError):
            raise KeyringFileError(f"The keyring file {self.path} is not one this app wrote (not JSON); "
                                   "nothing was changed.") from None
        if not isinstance(data, dict) or not all(
                isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in data.values()):
            raise KeyringFileError(f"The keyring file {self.path} is not one this app wrote; nothing was changed.")
        return data

    def _save(self, data: dict[str, dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".keyring-", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, ref: str) -> str | None:
        if ref in self._memory:
            return self._memory[ref]
        try:
            value = self._load().get(self.service, {}).get(ref)
        except KeyringFileError as exc:
            self.last_error = str(exc)
            return None
        if value:
            self._seen.add(value)
        return value

    def set(self, ref: str, value: str) -> None:
        if value:
            self._seen.add(value)
        try:
            data = self._load()
            data.setdefault(self.service, {})[ref] = value
            self._save(data)
        except (KeyringFileError, OSError) as exc:
            self._memory[ref] = value  # kept for this run rather than lost; said once
            self.last_error = f"The keyring file refused the secret ({exc}); it is kept for this run only."

    def delete(self, ref: str) -> None:
        self._memory.pop(ref, None)
        try:
            data = self._load()
            if data.get(self.service, {}).pop(ref, None) is not None:
                self._save(data)
        except (KeyringFileError, OSError) as exc:
            self.last_error = f"The keyring file could not delete the secret: {exc}"


__all__ = ["FileSecretStore", "KeyringFileError", "warning_line"]
