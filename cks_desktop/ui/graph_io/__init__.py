"""File → Import graph… and File → Export graph…: graph data in and out, from the window.

Import: a file dialog (``open()``, never ``exec()``), then on a worker the file is read
and previewed by the core (``GraphStore.preview_import``: counts, types, a sample and
every conflict), the preview dialog asks what to do with conflicts, and the store's
streaming import writes it as ONE change with that choice — the same code as
``cks-desktop sessions import --on-conflict``. The change joins the graph view's undo
stack, so Edit → Undo takes the import back. A refused import shows every problem.

Export: json, graphml, markdown, mermaid and memory-jsonl through the store's exports
on a worker (written atomically); PNG and SVG through the graph view's own export.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QFileDialog, QMenu

from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip
from cks_desktop.ui.dialogs import run_dialog

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.ui.toast import Tone

ALL_IMPORTS = "Graph files (*.json *.graphml *.xml *.jsonl)"
IMPORT_FILTERS = {"json": "CKS graph JSON (*.json)", "graphml": "GraphML (*.graphml *.xml)",
                  "memory-jsonl": "MCP memory server JSONL (*.jsonl *.json)"}
EXPORTS = (("json", "CKS graph JSON (*.json)", "json"), ("graphml", "GraphML (*.graphml)", "graphml"),
           ("markdown", "Markdown (*.md)", "md"), ("mermaid", "Mermaid diagram (*.mmd)", "mmd"),
           ("memory-jsonl", "MCP memory server JSONL (*.jsonl)", "jsonl"),
           ("png", "PNG image of the view (*.png)", "png"), ("svg", "SVG drawing of the view (*.svg)", "svg"))
IMPORT_ORIGIN = "user"  # the person's own change, like a hand edit


def guess_import_format(path: Path, text: str, chosen_filter: str = "") -> str:
    """The format the chosen filter names, else the file's: extension, then a look at the start."""
    for fmt, name in IMPORT_FILTERS.items():
        if chosen_filter == name:
            return fmt
    suffix = path.suffix.lower()
    if suffix in (".graphml", ".xml"):
        return "graphml"
    if suffix == ".jsonl":
        return "memory-jsonl"
    head = text.lstrip()[:4000]
    if head.startswith("<"):
        return "graphml"
    return "json" if '"cks-graph"' in head else "memory-jsonl"


def export_format_of(chosen_filter: str, path: Path) -> tuple[str, str]:
    """(format, suffix) for the chosen filter, else by the file's extension; JSON by default."""
    for fmt, name, suffix in EXPORTS:
        if chosen_filter == name:
            return fmt, suffix
    for fmt, _name, suffix in EXPORTS:
        if path.suffix.lower() == "." + suffix:
            return fmt, suffix
    return "json", "json"


class GraphIO(QObject):
    """The window's graph import and export; one per window."""

    dialogOpened = Signal(object)  # each dialog this opens (file, preview, problems), once it is open
    imported = Signal(object)  # the ApplyResult
    exported = Signal(object)  # the Path written
    failed = Signal(str)  # one sentence, also in the status bar

    def __init__(self, window: "MainWindow") -> None:
        super().__init__(window)
        self.window = window
        self.import_action: QAction | None = None
        self.export_action: QAction | None = None

    # -- menus -----------------------------------------------------------------------------
    def install(self, file_menu: QMenu, before: QAction | None = None) -> None:
        """File → Import graph… / Export graph… (icons from the theme), above ``before``."""
        self.import_action = self._action("&Import graph…", "importGraphAction", "download-simple",
                                          "Ctrl+Shift+I", "Add the objects and relations of a graph file to "
                                          "this session (json, GraphML, memory JSONL); shows what it adds first")
        self.export_action = self._action("&Export graph…", "exportGraphAction", "export", "Ctrl+Shift+E",
                                          "Save this session's graph as json, GraphML, Markdown, Mermaid, "
                                          "memory JSONL, PNG or SVG")
        self.import_action.triggered.connect(lambda *_: self.window.tasks.spawn(self.import_graph(),
                                                                                name="import-graph"))
        self.export_action.triggered.connect(lambda *_: self.window.tasks.spawn(self.export_graph(),
                                                                                name="export-graph"))
        for action in (self.import_action, self.export_action):
            if before is not None:
                file_menu.insertAction(before, action)
            else:
                file_menu.addAction(action)
        if before is not None:
            file_menu.insertSeparator(before)

    def _action(self, text: str, name: str, icon: str, keys: str, tip: str) -> QAction:
        action = QAction(text, self.window)
        action.setObjectName(name)
        action.setShortcut(QKeySequence(keys))
        action.setToolTip(plain_tooltip(tip))
        action.setStatusTip(tip)
        theme.bind_icon(action, icon)
        return action

    # -- dialogs ---------------------------------------------------------------------------
    async def _run(self, dialog: QDialog) -> int:
        return await run_dialog(dialog, self.dialogOpened.emit)

    def _say(self, text: str, tone: "Tone" = "info") -> None:
        """The session's own status line, and a toast where the person is looking."""
        from cks_desktop.ui.toast import show_toast

        self.window.graph_view._say(text)
        show_toast(self.window, text, tone)

    def _fail(self, text: str) -> None:
        self._say(text, "danger")
        self.failed.emit(text)

    def _session(self) -> str | None:
        sid = self.window.current_session
        if not sid:
            self._fail("Open a session first.")
            return None
        return sid

    # -- import ----------------------------------------------------------------------------
    async def import_graph(self) -> "ApplyResult | None":
        """Ask for a file, then preview and import it."""
        if self._session() is None:
            return None
        dialog = QFileDialog(self.window, "Import a graph into this session")
        dialog.setObjectName("importGraphFileDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters([ALL_IMPORTS, *IMPORT_FILTERS.values(), "All files (*)"])
        try:
            if not await self._run(dialog) or not dialog.selectedFiles():
                return None
            path, chosen = Path(dialog.selectedFiles()[0]), dialog.selectedNameFilter()
        finally:
            dialog.deleteLater()
        return await self.import_file(path, chosen_filter=chosen)

    async def import_file(self, path: Path, fmt: str | None = None, *, chosen_filter: str = "") -> "ApplyResult | None":
        """Preview ``path`` (on a worker), ask, import with the chosen conflict handling."""
        from cks_desktop.graph.errors import StoreError
        from cks_desktop.runtime.graph_io import ImportRefused
        from cks_desktop.ui.graph_io.dialog import ImportPreviewDialog

        sid = self._session()
        if sid is None:
            return None
        graph_io = self.window.services.graph_io

        def read_and_preview() -> tuple[str, str, Any]:
            text = path.read_text(encoding="utf-8-sig")
            chosen = fmt or guess_import_format(path, text, chosen_filter)
            return text, chosen, graph_io.preview(sid, chosen, text)

        self._say(f"Reading {path.name}…")
        try:
            text, chosen, preview = await asyncio.to_thread(read_and_preview)
        except ImportRefused as exc:
            await self._show_problems(path, exc.problems, exc.hint)
            return None
        except UnicodeDecodeError:
            self._fail(f"{path.name} is not a text file (it is not UTF-8); nothing was imported.")
            return None
        except (OSError, StoreError) as exc:
            self._fail(_sentence(exc, path))
            return None
        box = ImportPreviewDialog(self.window, path.name, self.window._session_title(sid), preview)
        try:
            if not await self._run(box):
                self._say("Nothing was imported.")
                return None
            choice = box.choice()
        finally:
            box.deleteLater()
        self._say(f"Importing {path.name}…")
        try:
            # json brings its documents and their sources back too (runtime/graph_io.py)
            result = (await asyncio.to_thread(graph_io.import_text, sid, chosen, text, IMPORT_ORIGIN, choice)).result
        except ImportRefused as exc:  # e.g. the graph changed since the preview
            await self._show_problems(path, exc.problems, exc.hint)
            return None
        except StoreError as exc:
            self._fail(_sentence(exc, path))
            return None
        editor = self.window.graph_view.editor
        if result.change is not None and editor.session_id == sid:
            editor.record(result.change.id)  # Edit → Undo takes the import back
        self._say(f"Imported {path.name}: {result.summary or 'nothing new'}.", "success")
        self.imported.emit(result)
        return result

    async def _show_problems(self, path: Path, problems: list[str], hint: str) -> None:
        from cks_desktop.plural import counted
        from cks_desktop.ui.graph_io.dialog import ProblemsDialog

        self._fail(f"Nothing was imported from {path.name}: {counted(len(problems), 'problem')}.")
        box = ProblemsDialog(self.window, path.name, problems, hint)
        try:
            await self._run(box)
        finally:
            box.deleteLater()

    # -- export ----------------------------------------------------------------------------
    async def export_graph(self) -> Path | None:
        sid = self._session()
        if sid is None:
            return None
        dialog = QFileDialog(self.window, "Export this session's graph")
        dialog.setObjectName("exportGraphFileDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([name for _fmt, name, _suffix in EXPORTS])
        dialog.setDefaultSuffix("json")
        dialog.filterSelected.connect(lambda name: dialog.setDefaultSuffix(export_format_of(name, Path())[1]))
        dialog.selectFile(_safe_file_name(self.window._session_title(sid)) + ".json")
        try:
            if not await self._run(dialog) or not dialog.selectedFiles():
                return None
            path, chosen = Path(dialog.selectedFiles()[0]), dialog.selectedNameFilter()
        finally:
            dialog.deleteLater()
        fmt, _suffix = export_format_of(chosen, path)
        return await self.export_file(path, fmt)

    async def export_file(self, path: Path, fmt: str) -> Path | None:
        """Write the session's graph as ``fmt`` to ``path``; json & co on a worker, atomically."""
        from cks_desktop.graph.errors import StoreError

        sid = self._session()
        if sid is None:
            return None
        if fmt in ("png", "svg"):
            written = self.window.graph_view.export(path, fmt)
            if written is not None:
                self.exported.emit(written)
            return written
        graph_io = self.window.services.graph_io  # json carries the session's documents (runtime/graph_io.py)
        self._say(f"Exporting to {path.name}…")
        try:
            await asyncio.to_thread(graph_io.export_file, sid, fmt, path)
        except (OSError, StoreError) as exc:
            self._fail(_sentence(exc, path))
            return None
        self._say(f"Saved {path.name}.")
        self.exported.emit(path)
        return path


def _sentence(exc: BaseException, path: Path) -> str:
    if isinstance(exc, OSError):
        from cks_desktop.diskfull import disk_full_sentence, is_disk_full

        if is_disk_full(exc):
            return disk_full_sentence(path)
        return f"Cannot use {path}: {exc.strerror or exc}."
    return str(exc)


def _safe_file_name(title: str) -> str:
    kept = "".join(c if c.isalnum() or c in " -_." else "_" for c in title).strip(" .")
    return kept[:80] or "graph"


def install(window: "MainWindow", file_menu: QMenu, before: QAction | None = None) -> GraphIO:
    io = GraphIO(window)
    io.install(file_menu, before)
    return io


__all__: list[str] = ["GraphIO", "install", "guess_import_format", "export_format_of"]
