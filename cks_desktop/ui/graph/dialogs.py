"""Two small questions the graph view asks: a new object's type and name, a relation's type.

Opened window-modal with ``open()`` and awaited (``ui.dialogs.run_dialog``),
never ``exec()``: a nested event loop inside a coroutine wedges every other
task (STACK.md §2.6). The OK button stays disabled until the answer is usable.

The type box is an editable combo of the session's own types, most used first,
then the types the session declared (``define_type``) but has no object of yet:
a new object most likely joins a type that exists. "Thing" is offered only
when the session has no type at all. The dialog is wide enough that the window
manager's title ("Add an object — CKS Desktop") is not elided.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import (
    QApplication, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QVBoxLayout, QWidget,
)

from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.labels import plain_label

DEFAULT_TYPE = "Thing"
DEFAULT_RELATION = "related_to"
MIN_WIDTH = 400  # px: room for a name, and for the title the window manager shows
TITLE_CHROME = 140  # px: the window manager's buttons and margins around the title


def object_type_choices(live: Iterable[tuple[str, int]], declared: Iterable[str]) -> list[str]:
    """Types to offer for a new object: those in use, most used first, then declared ones unused
    so far (alphabetically, names differing only in case counted once), else ``DEFAULT_TYPE``."""
    used = [name for name, count in sorted(live, key=lambda p: (-p[1], p[0].casefold())) if count > 0]
    out: list[str] = []
    seen: set[str] = set()
    for name in used + sorted(declared, key=lambda n: (n.casefold(), n)):
        if name.casefold() not in seen:
            seen.add(name.casefold())
            out.append(name)
    return out or [DEFAULT_TYPE]


def fit_title(dialog: QDialog, minimum: int = MIN_WIDTH) -> None:
    """A minimum width that shows the whole title as window managers draw it ("… — App name")."""
    app = QApplication.applicationDisplayName() or "CKS Desktop"
    needed = dialog.fontMetrics().horizontalAdvance(f"{dialog.windowTitle()} — {app}") + TITLE_CHROME
    dialog.setMinimumWidth(max(minimum, needed))


def _combo(name: str, items: list[str], current: str) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.addItems(items)
    combo.setCurrentText(current)
    return combo


class NewObjectDialog(QDialog):
    def __init__(self, parent: QWidget | None, types: list[str]) -> None:
        super().__init__(parent)
        self.setObjectName("newObjectDialog")
        self.setWindowTitle("Add an object")
        fit_title(self)
        types = types or [DEFAULT_TYPE]
        self.type_edit = _combo("newObjectType", types, types[0])
        self.type_edit.setToolTip("One of this session's types (most used first), or type a new one.")
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("newObjectName")
        self.name_edit.setPlaceholderText("Name")
        form = QFormLayout()
        form.addRow("Type", self.type_edit)
        form.addRow("Name", self.name_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.name_edit.textChanged.connect(self._check)
        self.type_edit.currentTextChanged.connect(self._check)
        self._check()
        self.name_edit.setFocus()

    def _check(self) -> None:
        ok = bool(self.name_edit.text().strip() and self.type_edit.currentText().strip())
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)

    def answer(self) -> tuple[str, str]:
        return self.type_edit.currentText().strip(), self.name_edit.text().strip()


class RelationTypeDialog(QDialog):
    def __init__(self, parent: QWidget | None, source: str, target: str, types: list[str]) -> None:
        super().__init__(parent)
        self.setObjectName("relationTypeDialog")
        self.setWindowTitle("Relate two objects")
        fit_title(self)
        label = plain_label(f"How is “{source}” related to “{target}”?", name="relationQuestion", wrap=True)
        self.type_edit = _combo("relationTypeInput", types, types[0] if types else DEFAULT_RELATION)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.type_edit)
        layout.addWidget(self.buttons)
        self.type_edit.currentTextChanged.connect(
            lambda t: self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(t.strip())))

    def answer(self) -> str:
        return self.type_edit.currentText().strip()


async def ask_new_object(parent: QWidget | None, types: list[str]) -> tuple[str, str] | None:
    dialog = NewObjectDialog(parent, types)
    try:
        accepted = await run_dialog(dialog)
        return dialog.answer() if accepted else None
    finally:
        dialog.deleteLater()


async def ask_relation_type(parent: QWidget | None, source: str, target: str, types: list[str]) -> str | None:
    dialog = RelationTypeDialog(parent, source, target, types)
    try:
        accepted = await run_dialog(dialog)
        return (dialog.answer() or None) if accepted else None
    finally:
        dialog.deleteLater()
