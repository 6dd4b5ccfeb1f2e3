"""The session's *Scopes…* dialog: which scopes a chat in this session grants.

Reached from the session's context menu in the Sessions list. "Use the defaults"
stores no choice for the session (``agent.session_scopes`` loses its entry), so a later
change of the defaults applies to it; otherwise the ticked scopes are stored. ``fs.read``
is granted only while an allowed folder exists (Settings → Agent), and the dialog says so.
``net.fetch`` and ``code.execute`` are off unless ticked here, or granted to one MCP
server in its editor. The grant is read at the start of every chat turn
(``tools/scopes.py``), so a change applies to the next turn.

Opened with ``open()``, never ``exec()``: no nested event loop (DESIGN.md).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QGridLayout, QLabel, QVBoxLayout, QWidget)

from cks_desktop.settings import Settings
from cks_desktop.tools.scopes import DEFAULT_GRANT, chosen_for_session, effective_grant, parse_scopes
from cks_desktop.tools.types import Scope
from cks_desktop.ui.text import SCOPE_WORDS


class SessionScopesDialog(QDialog):
    def __init__(self, settings: Settings, session_id: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionScopesDialog")
        self.settings = settings
        self.session_id = session_id
        self.setWindowTitle("Scopes of this session")
        layout = QVBoxLayout(self)
        heading = QLabel()
        heading.setTextFormat(Qt.TextFormat.PlainText)
        heading.setText(f"What the assistant may use in chats of “{title}”:")  # a title is untrusted text
        heading.setWordWrap(True)
        layout.addWidget(heading)
        own = settings.session_scopes(session_id)
        self.use_defaults = QCheckBox("Use the defaults")
        self.use_defaults.setChecked(own is None)
        layout.addWidget(self.use_defaults)
        grid = QGridLayout()
        self.boxes: dict[Scope, QCheckBox] = {}
        chosen = chosen_for_session(settings, session_id)
        ticked = DEFAULT_GRANT if chosen is None else chosen
        for i, scope in enumerate(Scope):
            box = QCheckBox(f"{scope.value} — {SCOPE_WORDS.get(scope.value, scope.value)}")
            box.setChecked(scope in ticked)
            self.boxes[scope] = box
            grid.addWidget(box, i, 0)
        layout.addLayout(grid)
        self.note = QLabel()
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.error = QLabel()
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        layout.addWidget(buttons)
        self.use_defaults.toggled.connect(self._refresh)
        for box in self.boxes.values():
            box.toggled.connect(self._refresh)
        self._refresh()

    def chosen(self) -> list[str] | None:
        """What OK stores: None for the defaults, else the ticked scopes."""
        if self.use_defaults.isChecked():
            return None
        return sorted(s.value for s, box in self.boxes.items() if box.isChecked())

    def granted(self) -> frozenset[Scope]:
        """What a chat would be granted with the dialog as it is (fs.read needs a folder)."""
        chosen = self.chosen()
        if chosen is None:
            default = self.settings.default_scopes
            base = DEFAULT_GRANT if default is None else parse_scopes(default)
        else:
            base = parse_scopes(chosen)
        return effective_grant(base, self.settings.allowed_folders)

    def _refresh(self) -> None:
        defaults = self.use_defaults.isChecked()
        if defaults:
            default = self.settings.default_scopes
            base = DEFAULT_GRANT if default is None else parse_scopes(default)
            for scope, box in self.boxes.items():
                box.blockSignals(True)
                box.setChecked(scope in base)
                box.blockSignals(False)
        for box in self.boxes.values():
            box.setEnabled(not defaults)
        notes = []
        if self.boxes[Scope.FS_READ].isChecked() and not self.settings.allowed_folders:
            notes.append("fs.read takes effect once a folder is allowed in Settings → Agent → Allowed folders.")
        if not self.boxes[Scope.CODE_EXECUTE].isChecked():
            notes.append("Tools of MCP servers started from a command need code.execute (or a grant in the "
                         "server's settings); remote servers need net.fetch.")
        self.note.setText(" ".join(notes))
        self.note.setVisible(bool(notes))

    def accept(self) -> None:
        before = self.settings.session_scopes(self.session_id)
        self.settings.set_session_scopes(self.session_id, self.chosen())
        try:
            self.settings.save()
        except OSError as exc:  # the file is unchanged; say why in one sentence and stay open
            self.settings.set_session_scopes(self.session_id, before)  # nor is a half-made choice kept
            self.error.setText(str(exc))
            self.error.show()
            return
        super().accept()

