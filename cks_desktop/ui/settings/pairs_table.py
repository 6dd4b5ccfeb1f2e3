"""An editable list of name/value pairs with a "secret" switch per value (env, headers)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLineEdit, QPushButton, QTableWidget,
                               QVBoxLayout, QWidget)

from cks_desktop.ui.settings.mcp_form import Pair, suggests_secret


class PairsTable(QWidget):
    changed = Signal()

    def __init__(self, what: str, object_name: str) -> None:
        super().__init__()
        self.what = what
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName(object_name)
        self.table.setHorizontalHeaderLabels(["Name", "Value", "Secret"])
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(90)
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        add = QPushButton(f"Add {what}")
        add.setAutoDefault(False)
        add.clicked.connect(lambda: self.add(Pair("")))
        remove = QPushButton("Remove")
        remove.setAutoDefault(False)
        remove.clicked.connect(self._remove_current)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        layout.addLayout(buttons)
    def set_pairs(self, pairs: list[Pair]) -> None:
        self.table.setRowCount(0)
        for pair in pairs:
            self.add(pair)

    def add(self, pair: Pair) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        key = QLineEdit(pair.key)
        value = QLineEdit(pair.value)
        value.setProperty("ref", pair.ref or "")  # the keychain reference already in the file
        secret = QCheckBox()
        secret.setChecked(pair.secret)
        secret.setToolTip("Keep this value in the keychain, never in the settings file")
        self.table.setCellWidget(row, 0, key)
        self.table.setCellWidget(row, 1, value)
        self.table.setCellWidget(row, 2, secret)
        self._style_value(value, pair.secret, pair.ref)

        def key_edited(text: str, secret_box: QCheckBox = secret) -> None:
            if suggests_secret(text) and not secret_box.isChecked():
                secret_box.setChecked(True)  # a KEY/TOKEN/PASSWORD-looking name starts secret
            self.changed.emit()

        key.textChanged.connect(key_edited)
        value.textChanged.connect(lambda _t: self.changed.emit())
        secret.toggled.connect(lambda on, v=value: self._secret_toggled(v, on))
        if not pair.key:
            key.setFocus()
        self.changed.emit()

    def _secret_toggled(self, value: QLineEdit, on: bool) -> None:
        self._style_value(value, on, value.property("ref") or None)
        self.changed.emit()

    @staticmethod
    def _style_value(value: QLineEdit, secret: bool, ref: str | None) -> None:
        value.setEchoMode(QLineEdit.EchoMode.Password if secret else QLineEdit.EchoMode.Normal)
        value.setPlaceholderText("•••• saved in the keychain — type to replace" if secret and ref else "")

    def _remove_current(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            row = self.table.rowCount() - 1
        if row >= 0:
            self.table.removeRow(row)
            self.changed.emit()

    def pairs(self) -> list[Pair]:
        out: list[Pair] = []
        for row in range(self.table.rowCount()):
            key = self.table.cellWidget(row, 0)
            value = self.table.cellWidget(row, 1)
            secret = self.table.cellWidget(row, 2)
            assert isinstance(key, QLineEdit) and isinstance(value, QLineEdit) and isinstance(secret, QCheckBox)
            is_secret = secret.isChecked()
            ref = value.property("ref") or None
            out.append(Pair(key.text(), value.text(), is_secret, ref if is_secret else None))
        return out
