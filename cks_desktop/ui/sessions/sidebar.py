"""The sessions sidebar widget (thin: the logic is in ``presenter.py``).

Double-click or F2 renames in place; Delete asks first (window-modal, awaited
without a nested loop). The list follows the presenter, which follows the store.

``fold_action`` folds the sidebar to a narrow rail (``rail.py``) and back; ``set_mark`` shows
a session's background activity (``activity.py``) on its row. ``keyboard_switch`` tells the
window that the current row moved by arrow keys, so the focus can stay in the list for the next
key instead of jumping to the chat input.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem, QMenu,
                               QMainWindow, QPushButton, QToolButton, QToolTip, QVBoxLayout, QWidget)

from cks_desktop.graph.errors import StoreError
from cks_desktop.ui import theme
from cks_desktop.ui.dialogs import confirm
from cks_desktop.ui.sessions.activity import Activity
from cks_desktop.ui.sessions.presenter import SessionsPresenter, TitleError
from cks_desktop.ui.sessions.rail import SidebarRail, apply_mark
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import plain_tooltip

log = logging.getLogger(__name__)

ID_ROLE = Qt.ItemDataRole.UserRole
NAVIGATION_KEYS = {Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Home,
                   Qt.Key.Key_End}


class SessionsSidebar(QWidget):
    sessionActivated = Signal(str)  # session id, or "" when none is left
    sessionDeleted = Signal(str)
    scopesRequested = Signal(str)  # session id: open its Scopes dialog (main window: ``open_session_scopes``)
    chatSettingsRequested = Signal(str)  # session id: its instructions and model parameters
    foldedChanged = Signal(bool)  # True: folded to the rail

    def __init__(self, presenter: SessionsPresenter, tasks: TaskTracker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presenter = presenter
        self.tasks = tasks
        self.current_id = ""
        self._filling = False
        self.marks: dict[str, Activity] = {}
        self.keyboard_switch = False  # the current row last moved by an arrow key
        self.last_problem = ""  # the last store failure said (see ``say``)
        self.setObjectName("sessionsSidebar")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        self.full = QWidget()
        self.full.setObjectName("sessionsFull")
        outer.addWidget(self.full)
        layout = QVBoxLayout(self.full)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)

        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("sessionFilter")
        self.filter_edit.setPlaceholderText("Filter sessions")
        self.filter_edit.setAccessibleName("Filter sessions")
        self.filter_edit.setClearButtonEnabled(True)
        self.fold_action = QAction("Fold the sessions list", self)
        self.fold_action.setObjectName("foldSessionsAction")
        self.fold_action.setCheckable(True)
        self.fold_action.setToolTip(plain_tooltip("Fold the sessions list to a narrow rail"))
        self.fold_action.toggled.connect(self.set_folded)
        theme.bind_icon(self.fold_action, "caret-double-left")
        self.fold_button = QToolButton()
        self.fold_button.setObjectName("sessionsFold")
        self.fold_button.setDefaultAction(self.fold_action)
        self.fold_button.setAutoRaise(True)
        top = QHBoxLayout()
        top.setSpacing(2)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.fold_button)
        layout.addLayout(top)

        self.list = QListWidget()
        self.list.setObjectName("sessionList")
        self.list.setAccessibleName("Sessions")
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        # A long title is elided (its tooltip shows it whole), never a horizontal scroll bar.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.installEventFilter(self)
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
        new_action = QAction("New session", self)
        new_action.setObjectName("railNewSession")
        new_action.setToolTip(plain_tooltip("New session (Ctrl+N)"))
        new_action.triggered.connect(self.create_session)
        theme.bind_icon(new_action, "plus")
        self.rail = SidebarRail(self.fold_action, new_action)
        self.rail.hide()
        outer.addWidget(self.rail)
        presenter.subscribe(self._fill)
        self._fill()

    # -- folding and marks ------------------------------------------------------------
    @property
    def folded(self) -> bool:
        return self.rail.isVisibleTo(self)

    def set_folded(self, folded: bool) -> None:
        """The rail (folded) or the whole list; the window sizes the dock to match."""
        if self.fold_action.isChecked() != folded:
            self.fold_action.setChecked(folded)  # comes back here through ``toggled``
            return
        if folded == self.folded and self.full.isVisibleTo(self) != folded:
            return
        self.full.setVisible(not folded)
        self.rail.setVisible(folded)
        text = "Unfold the sessions list" if folded else "Fold the sessions list"
        self.fold_action.setText(text)
        self.fold_action.setToolTip(plain_tooltip(text if folded else "Fold the sessions list to a narrow rail"))
        theme.bind_icon(self.fold_action, "caret-double-right" if folded else "caret-double-left")
        self.rail.show_marks(self.marks, self.presenter.title_of)
        self.foldedChanged.emit(folded)

    def set_mark(self, session_id: str, state: Activity) -> None:
        """Show a session's background activity on its row (and, folded, on the rail)."""
        if state is Activity.IDLE:
            self.marks.pop(session_id, None)
        else:
            self.marks[session_id] = state
        item = self._item_for(session_id)
        if item is not None:
            apply_mark(item, state, self._base_tooltip(session_id))
        self.rail.show_marks(self.marks, self.presenter.title_of)

    def mark_of(self, session_id: str) -> Activity:
        return self.marks.get(session_id, Activity.IDLE)

    def _base_tooltip(self, session_id: str) -> str:
        session = self.presenter.get(session_id)
        if session is None:
            return ""
        return f"{session.title}\ncreated {session.created_at[:16].replace('T', ' ')}"

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.list and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            self.keyboard_switch = event.key() in NAVIGATION_KEYS
        elif watched is self.list and event.type() == QEvent.Type.MouseButtonPress:
            self.keyboard_switch = False
        return False

    def resizeEvent(self, event: object) -> None:  # noqa: N802
        """Narrow (1024 px windows): the row of buttons shows icons only, never clipped words."""
        super().resizeEvent(event)  # type: ignore[arg-type]
        buttons = (self.new_button, self.rename_button, self.delete_button)
        words = {self.new_button: "New", self.rename_button: "Rename", self.delete_button: "Delete"}
        for button in buttons:
            button.setAccessibleName(words[button])
        for button in buttons:  # measure with words
            button.setText(words[button])
        needed = sum(b.sizeHint().width() for b in buttons) + 24
        if needed > self.full.width():
            for button in buttons:
                button.setText("")

    @property
    def editing(self) -> bool:
        """A title is being typed in place (a new session, F2): the focus must stay there."""
        return self.list.state() == QAbstractItemView.State.EditingState

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
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                apply_mark(item, self.mark_of(session.id), self._base_tooltip(session.id))
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
    def say(self, sentence: str) -> None:
        """A store failure (the team database unreachable, a locked file) as one sentence in the
        window's status bar and beside the list, never an uncaught exception."""
        self.last_problem = sentence
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(sentence, 15000)
        QToolTip.showText(self.list.mapToGlobal(QPoint(0, 0)), plain_tooltip(sentence), self.list)

    def create_session(self) -> str:
        """A new session, its title being typed in place; "" (and the sentence) when the store refuses."""
        try:
            session = self.presenter.create()
        except StoreError as exc:
            self.say(f"The session could not be created: {exc}")
            return ""
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
        except StoreError as exc:  # the old title stays (the list is refilled from the presenter)
            self.say(f"The session could not be renamed: {exc}")
            self._filling = True
            try:
                item.setText(self.presenter.title_of(session_id))
            finally:
                self._filling = False

    def ask_delete_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.tasks.spawn(self.delete_session(item.data(ID_ROLE)), name="delete-session")

    async def delete_session(self, session_id: str) -> bool:
        title = self.presenter.title_of(session_id)
        try:
            what = self.presenter.describe_for_delete(session_id)
        except StoreError as exc:
            self.say(f"The session could not be deleted: {exc}")
            return False
        ok = await confirm(self.window(), "Delete session", f"Delete the session “{title}”?",
                           informative=what, accept_text="Delete", destructive=True)
        if not ok:
            return False
        row = self.list.currentRow()
        try:
            self.presenter.delete(session_id)
        except StoreError as exc:
            self.say(f"The session could not be deleted: {exc}")
            return False
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
        self.build_menu(self.list.itemAt(pos)).popup(self.list.viewport().mapToGlobal(pos))

    def build_menu(self, item: QListWidgetItem | None) -> QMenu:
        """The list's right-click menu (for ``item``'s session, or the list's blank area)."""
        menu = QMenu(self)
        menu.addAction("New session", self.create_session)
        if item is not None:
            self.list.setCurrentItem(item)
            menu.addAction("Rename", self.rename_current)
            menu.addAction("Scopes…", lambda: self.scopesRequested.emit(self.current_id))
            menu.addAction("Chat settings…", lambda: self.chatSettingsRequested.emit(self.current_id))
            menu.addAction("Compact history…", lambda: self.tasks.spawn(
                self.compact_history(self.current_id), name="compact-history"))
            self._add_access_actions(menu, self.current_id)
            menu.addAction("Delete…", self.ask_delete_current)
        return menu

    def _add_access_actions(self, menu: QMenu, session_id: str) -> None:
        """On a team database (PostgreSQL): "Private to me" / "Shared with the team", the current
        one checked. Row-level security enforces it; only the session's creator may make it
        private (the store's sentence says so otherwise). Nothing on the embedded file."""
        store = self.presenter.store
        if getattr(store, "backend", "sqlite") != "postgresql" or not session_id:
            return
        try:
            owner, shared = store.session_access(session_id)
        except StoreError as exc:  # the server is unreachable: the menu works without these
            log.info("reading who may see the session failed: %s", exc)
            return
        group = QActionGroup(menu)
        group.setExclusive(True)
        for make_shared, text, icon, tip in (
                (False, "Private to me", "lock", f"Only {owner}, who created it, sees this session"),
                (True, "Shared with the team", "users-three", "Every member of the team database sees it")):
            action = menu.addAction(text)
            action.setObjectName("sessionShared" if make_shared else "sessionPrivate")
            action.setCheckable(True)
            action.setChecked(shared == make_shared)
            action.setToolTip(plain_tooltip(tip))
            theme.bind_icon(action, icon)
            group.addAction(action)
            action.triggered.connect(lambda _checked=False, s=make_shared: self.tasks.spawn(
                self.set_shared(session_id, s), name="session-access"))

    async def set_shared(self, session_id: str, shared: bool) -> bool:
        """The store call ``team private|shared`` makes (commands/team_cmd.py), off the loop."""
        store = self.presenter.store
        try:
            await asyncio.to_thread(store.set_session_shared, session_id, shared)
        except StoreError as exc:
            self.say(f"Who may see the session was not changed: {exc}")
            return False
        title = self.presenter.title_of(session_id)
        self.say(f"“{title}” is now " + ("shared with the team." if shared else "private to you."))
        return True
