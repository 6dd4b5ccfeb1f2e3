"""Settings → Share with other apps: serve the shared sessions to MCP hosts from the window.

The page drives the window's ``ShareService`` (``cks_desktop.serve.service``), which
belongs to the main window, not to this dialog: the server keeps running in the window's
background when Settings closes, and the window stops it on shutdown. Like the MCP page,
everything here applies at once (Save and Cancel are for the other pages): starting a
server, sharing a session, the approval choice and rotating the token cannot be "cancelled".

The token is hidden until Show; Copy and the URL snippets carry it. The approval choice
"this app asks too" reaches the window's approval dialog through the service's
``app_approver`` (the window's ``GuiApprover``, the one chats use).
"""

from __future__ import annotations

import json
import time
from typing import Literal, TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QHeaderView,
                               QLineEdit, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton,
                               QRadioButton, QSpinBox, QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.settings.widgets import error_label, note_label
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.serve.service import ShareService
    from cks_desktop.runtime.sharing import SharingUseCase

HOST_TITLES = {"claude_desktop": "Claude Desktop", "vscode": "VS Code", "cursor": "Cursor"}
FORMS = ("stdio", "url")
CLIENTS_REFRESH_MS = 1000
HIDDEN = "•" * 16


def copy_text(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


class SharePage(QWidget):
    applied = Signal(str)  # a change made at once, in a few words (the dialog's footer lists them)
    serverChanged = Signal(bool)  # started (True) or stopped (False): tests wait on it

    def __init__(self, service: "ShareService", sharing: "SharingUseCase", tasks: TaskTracker) -> None:
        super().__init__()
        self.service = service  # the window's running server
        self.sharing = sharing  # which sessions are shared, the approval choice, the token
        self.store = sharing.store
        self.tasks = tasks
        self.setObjectName("sharePage")
        layout = QVBoxLayout(self)
        layout.addWidget(note_label("Let Claude Desktop, VS Code, Cursor or any MCP host read and grow the "
                                    "sessions you share. Changes here apply at once."))

        # -- the server -------------------------------------------------------------------
        server = QGroupBox("Server")
        grid = QGridLayout(server)
        self.switch = QPushButton("Start")
        self.switch.setObjectName("shareSwitch")
        self.switch.setCheckable(True)
        self.switch.setToolTip(plain_tooltip("Serve the shared sessions over HTTP while this window is open."))
        self.port = QSpinBox()
        self.port.setObjectName("sharePort")
        self.port.setRange(0, 65535)
        self.port.setSpecialValueText("any free port")
        self.port.setAccessibleName("Port")
        self.port.setToolTip(plain_tooltip("The port on 127.0.0.1 (this computer only). 0: any free port."))
        self.status = plain_label("Stopped", name="shareStatus")
        theme.set_role(self.status, "muted")
        grid.addWidget(self.switch, 0, 0)
        grid.addWidget(plain_label("Port on 127.0.0.1:"), 0, 1)
        grid.addWidget(self.port, 0, 2)
        grid.addWidget(self.status, 0, 3)
        grid.setColumnStretch(3, 1)

        grid.addWidget(plain_label("URL:"), 1, 0)
        self.url = plain_label("", name="shareUrl", selectable=True)
        self.copy_url = QPushButton("Copy")
        self.copy_url.setObjectName("shareCopyUrl")
        url_row = QHBoxLayout()
        url_row.addWidget(self.copy_url)
        url_row.addStretch(1)
        grid.addWidget(self.url, 1, 1, 1, 3)
        grid.addLayout(url_row, 1, 4)

        grid.addWidget(plain_label("Token:"), 2, 0)
        self.token = QLineEdit()
        self.token.setObjectName("shareToken")
        self.token.setReadOnly(True)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setAccessibleName("Token")
        tokens = QHBoxLayout()
        self.show_token = QPushButton("Show")
        self.show_token.setObjectName("shareShowToken")
        self.show_token.setCheckable(True)
        self.copy_token = QPushButton("Copy")
        self.copy_token.setObjectName("shareCopyToken")
        self.rotate = QPushButton("Rotate")
        self.rotate.setObjectName("shareRotate")
        self.rotate.setToolTip(plain_tooltip("Make a new token: hosts using the old one must be given the new one."))
        for button in (self.show_token, self.copy_token, self.rotate):
            tokens.addWidget(button)
        grid.addWidget(self.token, 2, 1, 1, 3)
        grid.addLayout(tokens, 2, 4)
        self.error = error_label()
        self.error.setObjectName("shareError")
        grid.addWidget(self.error, 3, 0, 1, 5)
        layout.addWidget(server)

        # -- sessions and clients, side by side ---------------------------------------------
        middle = QHBoxLayout()
        sessions = QGroupBox("Shared sessions")
        sessions_layout = QVBoxLayout(sessions)
        self.sessions = QListWidget()
        self.sessions.setObjectName("shareSessions")
        self.sessions.setSpacing(2)  # the rows' 16 px check boxes would otherwise touch
        self.sessions.setAccessibleName("Shared sessions")
        sessions_layout.addWidget(self.sessions)
        middle.addWidget(sessions, 1)
        clients = QGroupBox("Connected clients")
        clients_layout = QVBoxLayout(clients)
        self.clients = QTreeWidget()
        self.clients.setObjectName("shareClients")
        self.clients.setAccessibleName("Connected clients")
        self.clients.setRootIsDecorated(False)
        self.clients.setHeaderLabels(["Client", "Protocol", "Calls", "Last seen"])
        header = self.clients.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        clients_layout.addWidget(self.clients)
        middle.addWidget(clients, 1)
        layout.addLayout(middle, 1)

        # -- approvals ------------------------------------------------------------------------
        approval = QGroupBox("Removals, merges and reverts asked for by a host")
        approval_layout = QHBoxLayout(approval)
        self.approve_host = QRadioButton("The host asks")
        self.approve_host.setObjectName("shareApprovalHost")
        self.approve_app = QRadioButton("This app asks too")
        self.approve_app.setObjectName("shareApprovalApp")
        self.approve_app.setToolTip(plain_tooltip("Show this window's approval dialog as well as the host's prompt."))
        self.approval_group = QButtonGroup(self)
        for radio in (self.approve_host, self.approve_app):
            self.approval_group.addButton(radio)
            approval_layout.addWidget(radio)
        approval_layout.addStretch(1)
        layout.addWidget(approval)

        # -- snippets ---------------------------------------------------------------------
        snippets = QGroupBox("Configuration for a host")
        snippets_layout = QVBoxLayout(snippets)
        row = QHBoxLayout()
        self.host = QComboBox()
        self.host.setObjectName("shareHost")
        self.host.setAccessibleName("Host")
        for key, title in HOST_TITLES.items():
            self.host.addItem(title, key)
        self.copy_snippet = QPushButton("Copy")
        self.copy_snippet.setObjectName("shareCopySnippet")
        row.addWidget(self.host)
        row.addStretch(1)
        row.addWidget(self.copy_snippet)
        snippets_layout.addLayout(row)
        self.forms = QTabWidget()
        self.forms.setObjectName("shareForms")
        self.snippet_views: dict[str, QPlainTextEdit] = {}
        for form, title in zip(FORMS, ("stdio (the host starts it)", "URL (this window serves)")):
            view = QPlainTextEdit()
            view.setObjectName(f"shareSnippet_{form}")
            view.setReadOnly(True)
            view.setFont(theme.code_font())
            view.setMinimumHeight(110)
            self.snippet_views[form] = view
            self.forms.addTab(view, title)
        snippets_layout.addWidget(self.forms)
        layout.addWidget(snippets)

        self.timer = QTimer(self)
        self.timer.setInterval(CLIENTS_REFRESH_MS)
        self.timer.timeout.connect(self.refresh_clients)

        self.switch.clicked.connect(self._switch_clicked)
        self.copy_url.clicked.connect(lambda: copy_text(self.service.url or ""))
        self.show_token.toggled.connect(self._show_token)
        self.copy_token.clicked.connect(lambda: copy_text(self.service.token or ""))
        self.rotate.clicked.connect(lambda: self.tasks.spawn(self.rotate_token(), name="share-rotate"))
        self.sessions.itemChanged.connect(self._session_toggled)
        self.approval_group.buttonClicked.connect(self._approval_clicked)
        self.host.currentIndexChanged.connect(lambda _i: self.refresh_snippets())
        self.copy_snippet.clicked.connect(self._copy_snippet)
        self.refresh()

    # -- showing ------------------------------------------------------------------------
    def refresh(self) -> None:
        self.refresh_sessions()
        self.refresh_server()
        (self.approve_app if self.sharing.approval() == "app" else self.approve_host).setChecked(True)

    def refresh_sessions(self) -> None:
        shared = set(self.sharing.shared_ids())
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for session in self.store.list_sessions():
            item = QListWidgetItem(session.title or session.id)
            item.setData(Qt.ItemDataRole.UserRole, session.id)
            item.setToolTip(plain_tooltip(session.id))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if session.id in shared else Qt.CheckState.Unchecked)
            self.sessions.addItem(item)
        self.sessions.blockSignals(False)

    def refresh_server(self) -> None:
        running = self.service.running
        self.switch.setChecked(running)
        self.switch.setText("Stop" if running else "Start")
        self.port.setEnabled(not running)
        self.url.setText(self.service.url or "Not serving: Start to get a URL.")
        theme.set_role(self.url, "" if running else "muted")
        self.status.setText("Serving" if running else "Stopped")
        theme.set_role(self.status, "success" if running else "muted")
        self.token.setText(self.service.token or "")
        self.token.setPlaceholderText("shown while serving")
        for button in (self.copy_url, self.copy_token, self.show_token):
            button.setEnabled(running)
        self.timer.start()  # also when not serving: hosts of `mcp serve` processes come and go
        self.refresh_clients()
        self.refresh_snippets()

    def refresh_clients(self) -> None:
        records = self.service.clients()
        self.clients.clear()
        now = time.time()
        for record in records:
            name = f"{record.name} {record.version}".strip() or "unnamed"
            if record.process:  # a host talking to `mcp serve`, not to this window's server
                name += f" · via {record.process}"
            ago = max(0, int(now - record.last_seen))
            item = QTreeWidgetItem([name, record.protocol, str(record.requests), f"{ago} s ago"])
            item.setToolTip(0, plain_tooltip(name))
            self.clients.addTopLevelItem(item)
        if not records:
            empty = QTreeWidgetItem(["No host connected" if self.service.running else
                                     "Not serving, and no mcp serve is running"])
            self.clients.addTopLevelItem(empty)
            empty.setFirstColumnSpanned(True)  # a sentence, not a client's name: across the columns

    def snippet(self, host: str, form: str) -> str:
        """The JSON a person pastes into ``host`` (``form``: stdio or url), or a sentence."""
        value = self.service.snippets()[host][form]
        if value is None:
            return "Start the server to get the URL form."
        return json.dumps(value, indent=2)

    def refresh_snippets(self) -> None:
        host = self.host.currentData()
        for form, view in self.snippet_views.items():
            view.setPlainText(self.snippet(host, form))

    # -- acting ---------------------------------------------------------------------------
    def _switch_clicked(self, checked: bool) -> None:
        self.switch.setEnabled(False)
        self.tasks.spawn(self.start() if checked else self.stop(), name="share-switch")

    async def start(self) -> bool:
        from cks_desktop.serve.http import HttpStartError

        self.error.hide()
        try:
            await self.service.start(port=self.port.value())
        except (HttpStartError, OSError) as exc:
            self.error.setText(f"Could not start: {exc}")
            self.error.show()
            return False
        finally:
            self.switch.setEnabled(True)
            self.refresh_server()
        self.applied.emit("sharing started")
        self.serverChanged.emit(True)
        return True

    async def stop(self) -> None:
        try:
            await self.service.stop()
        finally:
            self.switch.setEnabled(True)
            self.refresh_server()
        self.applied.emit("sharing stopped")
        self.serverChanged.emit(False)

    async def rotate_token(self) -> None:
        """A new token in the keychain; a running server restarts on the same port to use it."""
        from cks_desktop.runtime.sharing import SharingRefused

        try:
            self.sharing.token(rotate=True)
        except SharingRefused as exc:
            self._refused(exc)
            return
        if self.service.running:
            url = self.service.url or ""
            port = int(url.rsplit(":", 1)[1].split("/", 1)[0]) if ":" in url else 0
            self.port.setValue(port)
            await self.service.stop()
            await self.start()
        self.applied.emit("token rotated")
        self.refresh_server()

    def _show_token(self, shown: bool) -> None:
        self.token.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.show_token.setText("Hide" if shown else "Show")

    def _session_toggled(self, item: QListWidgetItem) -> None:
        from cks_desktop.runtime.sharing import SharingRefused

        session_id = item.data(Qt.ItemDataRole.UserRole)
        try:
            if item.checkState() == Qt.CheckState.Checked:
                self.sharing.share(session_id)
                self.applied.emit(f"shared “{item.text()}”")
            else:
                self.sharing.unshare(session_id)
                self.applied.emit(f"unshared “{item.text()}”")
        except SharingRefused as exc:
            self._refused(exc)
            self.refresh_sessions()

    def _approval_clicked(self, button: QRadioButton) -> None:
        from cks_desktop.runtime.sharing import SharingRefused

        mode: Literal["host", "app"] = "app" if button is self.approve_app else "host"
        if mode != self.sharing.approval():
            try:
                self.sharing.set_approval(mode)
            except SharingRefused as exc:
                self._refused(exc)
                return
            self.applied.emit("the app asks too" if mode == "app" else "the host asks")

    def _refused(self, exc: Exception) -> None:
        self.error.setText(str(exc))
        self.error.show()

    def _copy_snippet(self) -> None:
        copy_text(self.snippet_views[FORMS[self.forms.currentIndex()]].toPlainText())
