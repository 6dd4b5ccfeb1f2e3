"""What the graph view does on the person's behalf: hand edits, re-layout, export, the context menu.

A mixin of ``GraphView`` (kept apart to keep modules small). Edits go through
``GraphEditor`` (the tool registry, caller USER); their effect on the picture
arrives as store events like any tool's writes, so nothing here patches the
model directly except the position of an object added "here".
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from cks_desktop.graph.errors import StoreError
from cks_desktop.ui.graph.dialogs import ask_new_object, ask_relation_type, object_type_choices
from cks_desktop.ui.graph.editor import EditResult
from cks_desktop.ui.graph.export import export_png, export_svg
from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.text import no_mnemonic
from cks_desktop.plural import counted, noun

if TYPE_CHECKING:
    from PySide6.QtGui import QAction

    from cks_desktop.graph.store import GraphStore
    from cks_desktop.ui.graph.canvas import GraphCanvas
    from cks_desktop.ui.graph.editor import GraphEditor
    from cks_desktop.ui.graph.hops import HopChoice
    from cks_desktop.ui.graph.sync import GraphSync
    from cks_desktop.ui.graph.viewstate import ViewState


def reference_text(model: GraphModel, ids: Iterable[str]) -> str:
    """How an object is named in the chat input: type, name and id (the id is unambiguous)."""
    parts = []
    for oid in ids:
        i = model.index.get(oid)
        if i is not None:
            parts.append(f'{model.type_of(i)} "{model.names[i]}" ({oid})')
    return ", ".join(parts)


class ViewActions:
    if TYPE_CHECKING:  # provided by GraphView
        model: GraphModel
        store: GraphStore
        state: ViewState
        canvas: GraphCanvas
        editor: GraphEditor
        sync: GraphSync
        focus_action: QAction
        hops: HopChoice
        askAbout: Any

        @property
        def session_id(self) -> str | None: ...
        def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
        def _say(self, text: str) -> None: ...
        def _update_actions(self) -> None: ...
        def _activated(self, oid: str) -> None: ...
        def focus_on(self, ids: list[str]) -> None: ...
        def show_path(self) -> None: ...
        def _toggle_pin(self, oid: str) -> None: ...
        def _select_type(self, type_name: str) -> None: ...
        def _toggle_focus(self) -> None: ...

    def _report(self, result: EditResult, done: str = "") -> EditResult:
        self._say((done or result.message) if result.ok else result.message)
        return result

    async def add_object_at(self, where: tuple[float, float] | None) -> EditResult | None:
        if self.session_id is None:
            return None
        answer = await ask_new_object(self._as_widget(), await self._object_types(self.session_id))
        if answer is None:
            return None
        type_name, name = answer
        result = await self.editor.add_object(type_name, name)
        if result.ok and result.created_id:
            vp = self.canvas.viewport
            x, y = where if where is not None else (vp.cx, vp.cy)
            i = self.model.index.get(result.created_id)
            if i is None:
                self.sync.requested_positions[result.created_id] = (x, y)
            else:
                self.canvas.grid.move(i, x, y)
                self.model.set_position(i, x, y)
                self.canvas.buffers.move(self.model, [i])
                self.sync.mark_moved([i])
                self.canvas.update()
            self.state.select(result.created_id)
        return self._report(result, f"Added {type_name} “{name}”. Ctrl+Z removes it.")

    async def _object_types(self, session: str) -> list[str]:
        """The session's types for the Add dialog: in use (the model's counts) and declared but unused."""
        try:
            defs = await asyncio.to_thread(self.store.type_defs, session)
        except StoreError:  # a damaged or locked store: the types in the picture still help
            defs = []
        return object_type_choices(self.model.live_types(), [d.name for d in defs if d.kind == "object"])

    async def connect_nodes(self, source: str, target: str) -> EditResult | None:
        types = self.model.live_rel_types()
        a, b = (self.model.names[self.model.index[x]] for x in (source, target))
        type_name = await ask_relation_type(self._as_widget(), a, b, types)
        if not type_name:
            return None
        result = await self.editor.add_relation(source, target, type_name)
        return self._report(result, f"Related {a} → {type_name} → {b}.")

    async def delete_selected(self) -> EditResult | None:
        return await self.delete_objects(list(self.state.selection))

    async def delete_objects(self, ids: list[str]) -> EditResult | None:
        if not ids:
            self._say("Select the objects to delete first.")
            return None
        result = await self.editor.remove_objects(ids)
        n = len(ids)
        return self._report(result, f"Deleted {counted(n, 'object')}. Ctrl+Z brings "
                                    f"{noun(n, 'it', 'them')} back.")

    async def undo(self) -> EditResult:
        await self.editor.settle()  # an undo still running must be in the stack and in ``made`` first
        stack = self.editor.undo_stack
        session = self.session_id
        if stack and session is not None:  # others built upon it since: ask first (ui/revert_ask.py)
            from cks_desktop.ui.revert_ask import confirm_revert

            if not await confirm_revert(self._as_widget(), self.store, session, stack[-1], own=self.editor.made):
                return EditResult(False, "Nothing was undone.")
        result = await self.editor.undo()
        self._report(result)
        self._update_actions()
        return result

    async def redo(self) -> EditResult:
        result = await self.editor.redo()
        self._report(result)
        self._update_actions()
        return result

    async def relayout(self) -> bool:
        if self.session_id is None or self.sync.layout_running:
            return False
        self.canvas.status_text = f"Laying out {counted(self.model.node_count, 'object', grouped=True)}…"
        self.canvas.update()
        task = self.sync.start_relayout()
        return bool(await task)

    async def export_dialog(self, kind: str) -> Path | None:
        from cks_desktop.ui.dialogs import run_dialog

        dialog = QFileDialog(self._as_widget(), f"Export the graph as {kind.upper()}")
        dialog.setObjectName("graphExportDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("PNG image (*.png)" if kind == "png" else "SVG drawing (*.svg)")
        dialog.setDefaultSuffix(kind)
        dialog.selectFile(f"graph.{kind}")
        try:
            if not await run_dialog(dialog) or not dialog.selectedFiles():
                return None
            path = Path(dialog.selectedFiles()[0])
        finally:
            dialog.deleteLater()
        return self.export(path, kind)

    def export(self, path: Path, kind: str) -> Path | None:
        try:
            if kind == "png":
                export_png(self.canvas, path)
            else:
                export_svg(self.canvas, path)
        except OSError as exc:
            self._say(str(exc))
            return None
        self._say(f"Saved {path.name}.")
        return path

    def _as_widget(self) -> QWidget:
        """The view this mixin is part of, as the parent of its dialogs and menus."""
        assert isinstance(self, QWidget)  # GraphView is a QWidget
        return self

    def _leave_focus(self) -> None:
        self.focus_action.setChecked(False)
        self._toggle_focus()

    # -- context menu --------------------------------------------------------------------------------
    def _context_menu(self, where: QPoint, oid: str | None, wx: float, wy: float) -> None:
        menu = QMenu(self._as_widget())
        menu.setObjectName("graphContextMenu")
        if oid is not None:
            sel = list(self.state.selection) or [oid]
            menu.addAction("Ask about this", lambda: self.askAbout.emit(reference_text(self.model, sel)))
            menu.addAction("Inspect", lambda: self._activated(oid))
            menu.addAction("Focus on its neighbourhood", lambda: self.focus_on(sel))
            if len(sel) == 2:
                menu.addAction("Shortest path between the two", self.show_path)
            i = self.model.index[oid]
            menu.addAction("Unpin" if i in self.model.pinned else "Pin here", lambda: self._toggle_pin(oid))
            menu.addAction(no_mnemonic(f"Select all {self.model.type_of(i)}"),  # a type name's "&" is a character
                           lambda: self._select_type(self.model.type_of(i)))
            menu.addSeparator()
            label = "Delete" if len(sel) == 1 else f"Delete {counted(len(sel), 'object')}"
            menu.addAction(label, lambda: self.spawn(self.delete_objects(sel)))
        else:
            menu.addAction("Add object here…", lambda: self.spawn(self.add_object_at((wx, wy))))
            menu.addAction("Fit to view", self.canvas.fit)
            menu.addAction("Re-layout", lambda: self.spawn(self.relayout()))
            if self.model.pinned:
                menu.addAction("Unpin all", self._unpin_all)
            if self.state.focused:
                menu.addAction("Leave focus mode", self._leave_focus)
        menu.popup(where)

    def _unpin_all(self) -> None:
        pinned = list(self.model.pinned)
        self.model.pinned.clear()
        self.sync.mark_moved(pinned)
