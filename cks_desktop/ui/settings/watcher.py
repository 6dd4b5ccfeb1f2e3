"""Notice when another process (a terminal's ``cks-desktop mcp add``, an editor) saves settings.json.

Saves are atomic renames, so the file's inode is replaced on every save and a
watch on the file alone goes deaf after the first one: the folder is watched
too, and the file's watch is re-added whenever it is back. Events are
coalesced (one check per burst) and a check only re-reads the file when its
stat signature changed, so the window's own saves and unrelated files in the
same folder (the database's journal) cost a ``stat`` and nothing else.

``Settings.reload`` keeps the window's unsaved changes, and every save merges
under the lock anyway, so a reload is never needed for correctness; it keeps
what the window *shows* (the MCP list, the providers) in line with the file.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from cks_desktop.settings import Settings

COALESCE_MS = 100
Signature = tuple[int, int, int] | None


def _signature(path: str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class SettingsWatcher(QObject):
    changed = Signal(object)  # the set of top-level keys whose value changed

    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._closed = False
        self._file = str(settings.path)
        self._last: Signature = _signature(self._file)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.addPath(str(settings.path.parent))
        self._watch_file()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COALESCE_MS)
        self._timer.timeout.connect(self.check)
        self._watcher.fileChanged.connect(lambda _p: self._timer.start())
        self._watcher.directoryChanged.connect(lambda _p: self._timer.start())
        # Both ways in: a reload here, and a save (ours) that merged in what others wrote.
        settings.subscribe(self._on_adopted)

    def _on_adopted(self, keys: set[str]) -> None:
        if not self._closed:
            self.changed.emit(keys)

    def _watch_file(self) -> None:
        if self._file not in self._watcher.files() and os.path.exists(self._file):
            self._watcher.addPath(self._file)

    def check(self) -> set[str]:
        """Re-read the file if it changed on disk; ``changed`` is emitted with what changed in memory."""
        if self._closed:
            return set()
        self._watch_file()
        signature = _signature(self._file)
        if signature == self._last:
            return set()
        self._last = signature
        return self.settings.reload()  # emits ``changed`` through _on_adopted

    def close(self) -> None:
        """Stop watching (at shutdown: no reload may start once the window's tasks are cancelled)."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
