"""The settings dialog (``settingsDialog``): Providers, Chat & agent, MCP servers, Share, Storage.

Providers and Chat & agent are saved together with Save, and only when every
field is valid (problems are listed as you type). MCP servers apply their
changes immediately, and Cancel does not undo them: next to Save and Cancel a
note says so while the MCP page is shown, and lists what was already applied
(``McpPage.applied``), so Cancel never seems to promise more than it does.
The settings file's path is shown, so the file a person edits by hand is
never a guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFrame, QHBoxLayout, QListWidget, QScrollArea,
                               QStackedWidget, QVBoxLayout, QWidget)

from cks_desktop.ui.settings.agent_page import AgentPage
from cks_desktop.ui.settings.mcp_page import McpPage
from cks_desktop.ui.settings.providers_page import ProvidersPage
from cks_desktop.ui.settings.share_page import SharePage
from cks_desktop.ui.settings.storage_page import StoragePage
from cks_desktop.ui.settings.widgets import error_label, note_label
from cks_desktop.ui.tasks import TaskTracker

if TYPE_CHECKING:
    from cks_desktop.serve.service import ShareService
    from cks_desktop.runtime import AppServices

PAGES = ("providers", "agent", "mcp", "share", "storage")
TITLES = {"providers": "Providers", "agent": "Chat & agent", "mcp": "MCP servers", "share": "Share with other apps",
          "storage": "Storage"}


class SettingsDialog(QDialog):
    saved = Signal()

    def __init__(self, services: "AppServices", tasks: TaskTracker, parent: QWidget | None = None, *,
                 share: "ShareService | None" = None) -> None:
        super().__init__(parent)
        self.services = services
        self.setObjectName("settingsDialog")
        self.setAccessibleName("Settings")
        self.setWindowTitle("Settings")
        self.resize(860, 640)
        layout = QVBoxLayout(self)
        body = QHBoxLayout()
        self.nav = QListWidget()
        self.nav.setObjectName("settingsPages")
        self.nav.setFixedWidth(160)
        self.nav.setSpacing(4)  # rows with air, like the sessions sidebar (spacing, not sheet padding: see qss.py)
        self.stack = QStackedWidget()
        self.providers_page = ProvidersPage(services.settings, services.secrets, tasks)
        self.agent_page = AgentPage(services.settings, services.registry)
        self.mcp_page = McpPage(services, tasks)
        # the window's ShareService (it outlives this dialog); a dialog of its own otherwise
        self.share_page = SharePage(share if share is not None else services.share_service(), services.cases.sharing, tasks)
        share_scroll = QScrollArea()
        share_scroll.setObjectName("sharePageScroll")
        share_scroll.setWidgetResizable(True)
        share_scroll.setFrameShape(QFrame.Shape.NoFrame)
        share_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        share_scroll.setWidget(self.share_page)
        # Chat & agent is taller (about 760 px) than a 1024×700 or 1280×800 screen leaves a dialog:
        # it scrolls, so the dialog's Save and Cancel stay on the screen.
        agent_scroll = QScrollArea()
        agent_scroll.setObjectName("agentPageScroll")
        agent_scroll.setWidgetResizable(True)
        agent_scroll.setFrameShape(QFrame.Shape.NoFrame)
        agent_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        agent_scroll.setWidget(self.agent_page)
        self.storage_page = StoragePage(services.cases.storage, services.store, services.paths.database, tasks)
        for key, page in zip(PAGES, (self.providers_page, agent_scroll, self.mcp_page, share_scroll,
                                     self.storage_page)):
            self.nav.addItem(TITLES[key])
            self.stack.addWidget(page)
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        layout.addLayout(body, 1)

        self.errors_label = error_label()
        layout.addWidget(self.errors_label)
        footer = QHBoxLayout()
        path = note_label(f"Settings file: {services.settings.path}")
        path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        footer.addWidget(path, 1)
        self.applied_note = note_label()
        self.applied_note.setObjectName("settingsAppliedNote")
        footer.addWidget(self.applied_note, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("settingsSave")
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("settingsCancel")
        self.cancel_button.setToolTip("Discard the changes to Providers and Chat & agent. "
                                      "Changes to MCP servers were applied at once and stay.")
        footer.addWidget(self.buttons)
        layout.addLayout(footer)
        self.applied_changes: list[str] = []
        self.mcp_page.applied.connect(self._mcp_applied)
        self.share_page.applied.connect(self._mcp_applied)

        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.currentRowChanged.connect(lambda _row: self._update_applied_note())
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.providers_page.changed.connect(self.validate)
        self.agent_page.changed.connect(self.validate)
        self.storage_page.changed.connect(self.validate)
        self.nav.setCurrentRow(0)
        self._update_applied_note()
        self.validate()

    def _mcp_applied(self, words: str) -> None:
        self.applied_changes.append(words)
        self._update_applied_note()

    def _update_applied_note(self) -> None:
        """What Cancel will not undo, said next to it (see the module docstring)."""
        if self.applied_changes:
            done = ", ".join(self.applied_changes[-4:])
            more = len(self.applied_changes) - 4
            text = (f"MCP servers: {done}{f' and {more} more' if more > 0 else ''} — already applied; "
                    "Cancel keeps these.")
        elif self.stack.currentWidget() is self.mcp_page:
            text = "MCP server changes apply at once; Save and Cancel are for the other pages."
        else:
            text = ""
        self.applied_note.setText(text)
        self.applied_note.setVisible(bool(text))

    def show_page(self, page: str, server: str = "") -> None:
        if page in PAGES:
            self.nav.setCurrentRow(PAGES.index(page))
        if server:
            self.mcp_page.select(server)

    def errors(self) -> list[str]:
        return self.providers_page.errors() + self.agent_page.errors() + self.storage_page.errors()

    def validate(self) -> list[str]:
        problems = self.errors()
        self.errors_label.setText("\n".join(problems))
        self.errors_label.setVisible(bool(problems))
        self.save_button.setEnabled(not problems)
        return problems

    def save(self) -> bool:
        if self.validate():
            return False
        settings = self.services.settings
        self.providers_page.save(settings)
        self.agent_page.save(settings)
        problem = self.storage_page.save()
        if problem is not None:
            self.errors_label.setText(problem)
            self.errors_label.show()
            return False
        try:
            settings.save()
        except OSError as exc:  # SettingsSaveError: one sentence (disk full, lock taken); the file is unchanged
            self.errors_label.setText(str(exc))
            self.errors_label.show()
            return False
        self.saved.emit()
        self.accept()
        return True
