"""The sessions sidebar widget (thin: the logic is in ``presenter.py``).

Double-click or F2 renames in place; Delete asks first (window-modal, awaited
without a nested loop). The list follows the presenter, which follows the store.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem, QMenu,
                               QPushButton, QToolTip, QVBoxLayout, QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.dialogs import confirm
from cks_desktop.ui.sessions.presenter import SessionsPresenter, TitleError
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import plain_tooltip

ID_ROLE = Qt.ItemDataRole.UserRole


class SessionsSidebar(QWidget):
    sessionActivated = Signal(str)  # session id, or "" when none is left
    sessionDeleted = Signal(str)
    scopesRequested = Signal(str)  # session id: open its Scopes dialog (main window: ``open_session_scopes``)

    def __init__(self, presenter: SessionsPresenter, tasks: TaskTracker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presenter = presenter
        self.tasks = tasks
        self.current_id = ""
        self._filling = False
        self.setObjectName("sessionsSidebar")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)

        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("sessionFilter")
        self.filter_edit.setPlaceholderText("Filter sessions")
        self.filter_edit.setAccessibleName("Filter sessions")
        self.filter_edit.setClearButtonEnabled(True)
        layout.addWidget(self.filter_edit)

        self.list = QListWidget()
        self.list.setObjectName("sessionList")
        self.list.setAccessibleName("Sessions")
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        layout.addWidget(self.list, 1)

        buttons = QHBoxLayout()
        self.new_button = QPushButton("New")
        self.new_button.setObjectName("newSessionButton")
        self.new_button.setToolTip("New session (Ctrl+N)")
        self.rename_button = QPushButton("Rename")
        self.rename_button.setObjectName("renameSessionButton")
        self.rename_button.setToolTip("Rename the session (F2)")
        self.delete_button = QPushButton("Delete")
        self.delete_button.setObjectName("deleteSessionButton")
        self.delete_button.setToolTip("Delete the session, its graph and its chat")
        for button, icon in ((self.new_button, "plus"), (self.rename_button, "pencil-simple"),
                             (self.delete_button, "trash")):
            theme.bind_icon(button, icon)
        theme.bind_icon(self.filter_edit.addAction(theme.icon("magnifying-glass"),
                                                   QLineEdit.ActionPosition.LeadingPosition), "magnifying-glass")
        for button in (self.new_button, self.rename_button, self.delete_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        layout.addLayout(buttons)

        delete_action = QAction("Delete session", self.list)
        delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete_action.triggered.connect(self.ask_delete_current)
        self.list.addAction(delete_action)

        self.filter_edit.textChanged.connect(presenter.set_filter)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemChanged.connect(self._item_edited)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.new_button.clicked.connect(self.create_session)
        self.rename_button.clicked.connect(self.rename_current)
        self.delete_button.clicked.connect(self.ask_delete_current)
        presenter.subscribe(self._fill)
        self._fill()

    # -- list ------------------------------------------------------------------
    def _shown(self) -> list[tuple[str, str]]:
        return [(self.list.item(r).data(ID_ROLE), self.list.item(r).text()) for r in range(self.list.count())]

    def _fill(self) -> None:
        wanted = self.presenter.visible()
        if self._shown() == [(s.id, s.title) for s in wanted]:
            return  # e.g. after an in-place rename: rebuilding would pull the item from under the editor
        self._filling = True
        try:
            self.list.clear()
            for session in wanted:
                item = QListWidgetItem(session.title)
                item.setData(ID_ROLE, session.id)
                item.setToolTip(plain_tooltip(f"{session.title}\ncreated {session.created_at[:16].replace('T', ' ')}"))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.addItem(item)
                if session.id == self.current_id:
                    self.list.setCurrentItem(item)
        finally:
            self._filling = False
        has = self.list.currentItem() is not None
        self.rename_button.setEnabled(has)
        self.delete_button.setEnabled(has)
        if self.current_id and self.presenter.get(self.current_id) is None:
            # The current session was deleted elsewhere (a tool, the CLI): move on to another one.
            self.current_id = ""
            if self.list.count():
                self.list.setCurrentRow(0)
            else:
                self.sessionActivated.emit("")

    def _item_for(self, session_id: str) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(ID_ROLE) == session_id:
                return item
        return None

    def select(self, session_id: str) -> None:
        """Make ``session_id`` current (clears a filter that hides it)."""
        if self._item_for(session_id) is None and self.filter_edit.text():
            self.filter_edit.clear()
        item = self._item_for(session_id)
        if item is not None:
            self.list.setCurrentItem(item)
        elif session_id != self.current_id:
            self.current_id = session_id
            self.sessionActivated.emit(session_id)

    def _current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if self._filling or current is None:
            return
        session_id = current.data(ID_ROLE)
        self.rename_button.setEnabled(True)
        self.delete_button.setEnabled(True)
        if session_id != self.current_id:
            self.current_id = session_id
            self.sessionActivated.emit(session_id)

    # -- actions -----------------------------------------------------------------
    def create_session(self) -> str:
        session = self.presenter.create()
        self.select(session.id)
        item = self._item_for(session.id)
        if item is not None:
            self.list.editItem(item)  # type the real title right away
        return session.id

    def rename_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def _item_edited(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        session_id = item.data(ID_ROLE)
        try:
            self.presenter.rename(session_id, item.text())
        except TitleError as exc:
            QToolTip.showText(self.list.mapToGlobal(self.list.visualItemRect(item).bottomLeft()),
                             plain_tooltip(str(exc)), self.list)
            self._fill()

    def ask_delete_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.tasks.spawn(self.delete_session(item.data(ID_ROLE)), name="delete-session")

    async def delete_session(self, session_id: str) -> bool:
        title = self.presenter.title_of(session_id)
        ok = await confirm(self.window(), "Delete session", f"Delete the session “{title}”?",
                           informative=self.presenter.describe_for_delete(session_id), accept_text="Delete",
                           destructive=True)
        if not ok:
            return False
        row = self.list.currentRow()
        self.presenter.delete(session_id)
        self.sessionDeleted.emit(session_id)
        if session_id == self.current_id:
            self.current_id = ""
            if self.list.count():
                self.list.setCurrentRow(min(max(row, 0), self.list.count() - 1))
            else:
                self.sessionActivated.emit("")
        return True

    async def compact_history(self, session_id: str) -> object | None:
        """Offer what to keep (each choice says how many changes it drops), then drop the rest.

        Dropped changes can no longer be reverted; the dialog says so before anything goes.
        Returns the store's ``CompactResult``, or None when the person kept everything.
        """
        from cks_desktop.ui.dialogs import choose

        store = self.presenter.store
        options = (("days30", "the last 30 days", {"keep_days": 30}),
                   ("last100", "the last 100 changes", {"keep_last": 100}),
                   ("last1", "only the latest change", {"keep_last": 1}))
        previews = {key: await asyncio.to_thread(store.history_compaction_preview, session_id, **kw)
                    for key, _, kw in options}
        choices = [(key, f"Keep {label} (drops {previews[key][0]})") for key, label, _ in options
                   if previews[key][0]]
        title = self.presenter.title_of(session_id)
        if not choices:
            await choose(self.window(), "Compact history", f"The history of “{title}” has nothing to drop.",
                         [("ok", "OK")], default="ok", escape="ok", object_name="compactDialog")
            return None
        picked = await choose(
            self.window(), "Compact history", f"Drop the oldest changes of “{title}”?", [*choices, ("cancel", "Cancel")],
            informative="Dropped changes can no longer be reverted (Undo and Revert stop at the oldest change "
                        "kept). The graph itself stays exactly as it is.",
            default="cancel", escape="cancel", object_name="compactDialog")
        kwargs = next((kw for key, _, kw in options if key == picked), None)
        if kwargs is None:
            return None
        return await asyncio.to_thread(store.compact_history, session_id, **kwargs)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        menu = QMenu(self)
        menu.addAction("New session", self.create_session)
        if item is not None:
            self.list.setCurrentItem(item)
            menu.addAction("Rename", self.rename_current)
            menu.addAction("Scopes…", lambda: self.scopesRequested.emit(self.current_id))
            menu.addAction("Compact history…", lambda: self.tasks.spawn(
                self.compact_history(self.current_id), name="compact-history"))
            menu.addAction("Delete…", self.ask_delete_current)
        menu.popup(self.list.viewport().mapToGlobal(pos))
