"""Settings → Storage: the embedded file, or a team's PostgreSQL database.

The choice is saved with the dialog's Save and takes effect at the next start
(the window keeps the store it opened: switching under an open chat would mix
two graphs). The password goes to the system keychain, never to the settings
file. Every step goes through the storage use case (``runtime/storage.py``). "Test connection" and "Copy" run on a
worker thread (``asyncio.to_thread``): a slow or unreachable server never
freezes the window. Copy takes the selected session of the store the window
uses now into the other one (file ↔ team database), ids kept.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLineEdit,
                               QPushButton, QRadioButton, QSpinBox, QVBoxLayout, QWidget)

from cks_desktop.runtime.storage import SSL_MODES, PgSettings, StorageRefused
from cks_desktop.graph.errors import StoreError
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.settings.widgets import error_label, mark, note_label
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from pathlib import Path

    from cks_desktop.graph.store import GraphStore
    from cks_desktop.runtime.storage import StorageUseCase

TLS_TITLES = {"disable": "Off", "prefer": "If the server offers it", "require": "Required",
              "verify-ca": "Required, check the certificate", "verify-full": "Required, check certificate and host"}


class StoragePage(QWidget):
    changed = Signal()
    tested = Signal(str)  # the result sentence of "Test connection" (tests wait on it)
    copied = Signal(str)  # the result sentence of "Copy"

    def __init__(self, storage: "StorageUseCase", store: "GraphStore", file_path: "Path", tasks: TaskTracker) -> None:
        super().__init__()
        self.setObjectName("storagePage")
        self.storage = storage
        self.store = store
        self.file_path = file_path
        self.tasks = tasks
        layout = QVBoxLayout(self)
        layout.addWidget(note_label("Where this app keeps its graphs. A team database lets everyone on the team "
                                    "work on the same sessions and see each other's changes live. "
                                    "The choice applies the next time CKS Desktop starts."))
        self.file_choice = QRadioButton("Embedded file on this computer")
        self.file_choice.setObjectName("storageFile")
        self.pg_choice = QRadioButton("Team database (PostgreSQL)")
        self.pg_choice.setObjectName("storagePostgres")
        group = QButtonGroup(self)
        group.addButton(self.file_choice)
        group.addButton(self.pg_choice)
        layout.addWidget(self.file_choice)
        layout.addWidget(plain_label(str(file_path), name="storageFilePath", selectable=True))
        layout.addWidget(self.pg_choice)

        box = QGroupBox("Connection")
        form = QFormLayout(box)
        self.host = QLineEdit()
        self.host.setObjectName("storageHost")
        self.port = QSpinBox()
        self.port.setObjectName("storagePort")
        self.port.setRange(1, 65535)
        self.database = QLineEdit()
        self.database.setObjectName("storageDatabase")
        self.user = QLineEdit()
        self.user.setObjectName("storageUser")
        self.password = QLineEdit()
        self.password.setObjectName("storagePassword")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setToolTip(plain_tooltip("Kept in the system keychain, never in the settings file. "
                                               "Leave empty to keep the saved one (or to use a PGPASSFILE)."))
        self.tls = QComboBox()
        self.tls.setObjectName("storageTls")
        for mode in SSL_MODES:
            self.tls.addItem(TLS_TITLES[mode], mode)
        self.ca_file = QLineEdit()
        self.ca_file.setObjectName("storageCaFile")
        self.ca_file.setPlaceholderText("the server's CA certificate (for the checking TLS modes)")
        for label, widget in (("Host", self.host), ("Port", self.port), ("Database", self.database),
                              ("User", self.user), ("Password", self.password), ("TLS", self.tls),
                              ("CA certificate", self.ca_file)):
            widget.setAccessibleName(label)
            form.addRow(label, widget)
        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("storageTest")
        self.test_button.setToolTip(plain_tooltip("Connect once with these settings; nothing is written."))
        self.test_result = plain_label(name="storageTestResult", wrap=True)
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        form.addRow(test_row)
        layout.addWidget(box)
        self.connection_box = box

        copy_box = QGroupBox("Copy a session to the other storage")
        copy_row = QHBoxLayout(copy_box)
        self.copy_session = QComboBox()
        self.copy_session.setObjectName("storageCopySession")
        self.copy_session.setAccessibleName("Session to copy")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName("storageCopy")
        self.copy_button.setToolTip(plain_tooltip("Copy the session (its graph and type definitions, ids kept) "
                                                  "into the storage not in use now. The original stays."))
        self.copy_result = plain_label(name="storageCopyResult", wrap=True)
        copy_row.addWidget(self.copy_session, 1)
        copy_row.addWidget(self.copy_button)
        layout.addWidget(copy_box)
        layout.addWidget(self.copy_result)
        self.errors_label = error_label()
        layout.addWidget(self.errors_label)
        layout.addStretch(1)

        pg = storage.chosen()
        (self.pg_choice if pg is not None else self.file_choice).setChecked(True)
        self._fill(pg or PgSettings())
        self.reload_sessions()
        for signal in (self.host.textChanged, self.database.textChanged, self.user.textChanged,
                       self.ca_file.textChanged):
            signal.connect(self._changed)
        self.port.valueChanged.connect(self._changed)
        self.tls.currentIndexChanged.connect(self._changed)
        self.pg_choice.toggled.connect(self._changed)
        self.test_button.clicked.connect(lambda: self.tasks.spawn(self.test_connection(), name="storage-test"))
        self.copy_button.clicked.connect(lambda: self.tasks.spawn(self.copy_selected(), name="storage-copy"))
        self._changed()

    # -- the form ---------------------------------------------------------------------------

    def _fill(self, pg: PgSettings) -> None:
        self.host.setText(pg.host)
        self.port.setValue(int(pg.port))
        self.database.setText(pg.database)
        self.user.setText(pg.user)
        index = self.tls.findData(pg.sslmode)
        self.tls.setCurrentIndex(index if index >= 0 else self.tls.findData("prefer"))
        self.ca_file.setText(pg.sslrootcert)

    def pg_settings(self) -> PgSettings:
        return PgSettings(host=self.host.text().strip(), port=self.port.value(),
                          database=self.database.text().strip(), user=self.user.text().strip(),
                          sslmode=str(self.tls.currentData()), sslrootcert=self.ca_file.text().strip())

    def errors(self) -> list[str]:
        if not self.pg_choice.isChecked():
            return []
        problem = self.pg_settings().problem()
        return [f"Storage: {problem}"] if problem else []

    def _changed(self) -> None:
        team = self.pg_choice.isChecked()
        self.connection_box.setEnabled(team)
        problems = self.errors()
        mark(self.host, "Enter the host." if team and not self.host.text().strip() else None)
        mark(self.database, "Enter the database." if team and not self.database.text().strip() else None)
        mark(self.user, "Enter your user name." if team and not self.user.text().strip() else None)
        self.errors_label.setText("\n".join(problems))
        self.errors_label.setVisible(bool(problems))
        on_team = getattr(self.store, "backend", "sqlite") == "postgresql"
        self.copy_button.setEnabled(self.copy_session.count() > 0
                                    and (on_team or self.pg_settings().problem() is None))
        self.changed.emit()

    def save(self) -> str | None:
        """Record the choice in the settings (the dialog saves the file) and a typed password in
        the keychain; the one sentence saying why not, or None."""
        try:
            self.storage.choose(self.pg_settings() if self.pg_choice.isChecked() else None, self.password.text())
        except StorageRefused as exc:
            return str(exc)
        self.password.clear()
        return None

    # -- actions (worker threads) -----------------------------------------------------------

    async def test_connection(self) -> str:
        pg = self.pg_settings()
        problem = pg.problem()
        if problem is None:
            self.test_button.setEnabled(False)
            self.test_result.setText("Connecting…")
            try:
                problem = await asyncio.to_thread(self.storage.check, pg.url(), self.password.text())
            finally:
                self.test_button.setEnabled(True)
        text = problem or f"The connection to {pg.host}/{pg.database} works."
        self.test_result.setText(text)
        self.tested.emit(text)
        return text

    def reload_sessions(self) -> None:
        self.copy_session.clear()
        try:
            for session in self.store.list_sessions():
                self.copy_session.addItem(session.title, session.id)
        except Exception as exc:  # noqa: BLE001 - an unreachable database: say so, keep the page usable
            self.copy_result.setText(str(exc))

    async def copy_selected(self) -> str:
        session_id = self.copy_session.currentData()
        if not session_id:
            return ""
        on_team = getattr(self.store, "backend", "sqlite") == "postgresql"
        pg = self.pg_settings()
        typed = self.password.text()
        target_name = "this computer's file" if on_team else f"the team database {pg.host}/{pg.database}"

        def work() -> str:
            if on_team:
                target = self.storage.open_file(self.file_path)
            else:
                target = self.storage.open_team(pg, typed)
            try:
                copy = self.storage.copy(self.store, str(session_id), target)
                return f"Copied “{copy.title}” to {target_name}."
            finally:
                target.close()

        self.copy_button.setEnabled(False)
        self.copy_result.setText("Copying…")
        try:
            text = await asyncio.to_thread(work)
        except (StoreError, StorageRefused) as exc:
            text = str(exc)
        finally:
            self.copy_button.setEnabled(True)
        self.copy_result.setText(text)
        self.copied.emit(text)
        return text
