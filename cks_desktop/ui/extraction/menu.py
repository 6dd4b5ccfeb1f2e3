"""File → Extract knowledge… (reachable next to Add documents…).

Which document: the one selected in the Documents panel, else the one added last in this window
(for this session), else the session's only document, else the person chooses from a list (a
window-modal list dialog, ``open()``ed). No session or no document: one sentence in the status bar."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from cks_desktop.ui import theme
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.labels import plain_input_dialog
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.ui.extraction.controller import ExtractionController
    from cks_desktop.ui.main_window import MainWindow


class ExtractMenu(QObject):
    def __init__(self, window: "MainWindow", controller: "ExtractionController") -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.last_added: dict[str, str] = {}  # session id → the document added last in this window
        self.action = QAction("E&xtract knowledge…", window)
        self.action.setObjectName("extractKnowledgeAction")
        tip = ("Build objects and relations, each with its source passage, from a document of this session "
               "(the selected one, or the one added last)")
        self.action.setToolTip(plain_tooltip(tip))
        self.action.setStatusTip(tip)
        theme.bind_icon(self.action, "magic-wand")
        self.action.triggered.connect(lambda *_: window.tasks.spawn(self.choose_and_run(), name="extract-menu"))
        intake = getattr(window, "documents", None)
        if intake is not None:
            intake.added.connect(self._heard_added)

    def install(self, file_menu: QMenu) -> None:
        file_menu.addAction(self.action)

    def _heard_added(self, result: Any, _refused: Any) -> None:
        sid = self.window.current_session
        docs = list(getattr(result, "added", []) or []) + list(getattr(result, "already", []) or [])
        if sid and docs:
            self.last_added[sid] = docs[-1].id

    async def choose_and_run(self) -> None:
        import asyncio

        sid = self.window.current_session
        if not sid:
            self._say("Open or create a session first, then add a document to extract from.")
            return
        panel = self.window.documents_panel
        chosen = panel.selected() if getattr(panel, "session_id", None) == sid else None
        docs = await asyncio.to_thread(self.window.services.documents.list, sid)
        ident = chosen.id if chosen is not None else self.last_added.get(sid)
        if ident is None or all(d.id != ident for d in docs):
            if not docs:
                self._say("This session has no documents yet: add one with File → Add documents… first.")
                return
            ident = docs[0].id if len(docs) == 1 else await self._ask_which(docs)
            if ident is None:
                return
        self.controller.request(sid, ident)

    async def _ask_which(self, docs: list[Any]) -> str | None:
        dialog = plain_input_dialog(self.window, title="Extract knowledge",
                                    label="Extract knowledge from which document?")  # names are outside text
        dialog.setObjectName("extractWhichDocument")
        dialog.setComboBoxItems([d.name for d in docs])
        dialog.setComboBoxEditable(False)
        code = await run_dialog(dialog, self.controller.dialogOpened.emit)
        if code != 1:
            return None
        name = dialog.textValue()
        return next((d.id for d in docs if d.name == name), None)

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 10000)
