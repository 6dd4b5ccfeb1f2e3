"""The import preview: what a file would add, its conflicts, and the choice for them.

The numbers, the sample and the conflicts come from the core's ``ImportPreview``
(``graph/formats/conflicts.py``), computed on a worker before this opens; the
dialog only shows them. Lists are scrollable and show at most ``SHOWN`` rows —
a display cap only: the refusal sentence and the CLI always name every problem.
Names from the file are data, so every label is plain text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QDialog, QDialogButtonBox, QLabel, QListWidget,
                               QRadioButton, QVBoxLayout, QWidget)

from cks_desktop.runtime.graph_io import Conflict, ImportPreview
from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip

SHOWN = 500  # rows a list shows (the rest is counted in its last row)
CHOICES = (("skip", "Skip them: keep what is there, add only what is new"),
           ("merge", "Merge them into the existing objects (properties joined)"),
           ("rename", "Keep both: add the imported ones under a suffixed name, e.g. \u201cAda (2)\u201d"))


def _label(text: str, role: str = "", *, wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    if role:
        theme.set_role(label, role)
    return label


def fill_list(widget: QListWidget, rows: list[str], shown: int = SHOWN, tips: list[str] | None = None) -> None:
    """Rows into a list, at most ``shown`` of them, then one row that counts the others;
    ``tips`` (the full sentences) become the rows' tooltips."""
    widget.clear()
    widget.addItems(rows[:shown])
    if tips is not None:
        for i, tip in enumerate(tips[:shown]):
            widget.item(i).setToolTip(plain_tooltip(tip))
    if len(rows) > shown:
        widget.addItem(f"… and {len(rows) - shown} more (every one is named if the import is refused)")


def _list(object_name: str, rows: list[str], max_rows: int, tips: list[str] | None = None) -> QListWidget:
    widget = QListWidget()
    widget.setObjectName(object_name)
    widget.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    widget.setUniformItemSizes(True)
    widget.setWordWrap(False)
    widget.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    fill_list(widget, rows, tips=tips)
    # whole rows: as many as there are, up to ``max_rows`` (then it scrolls), never a half row
    line = widget.sizeHintForRow(0) if widget.count() else widget.fontMetrics().height() + 4
    frame = widget.frameWidth() * 2 + 2
    shown = min(max(widget.count(), 1), max_rows)
    widget.setFixedHeight(line * shown + frame + (widget.horizontalScrollBar().sizeHint().height()
                                                  if any(len(r) > 90 for r in rows[:SHOWN]) else 0))
    return widget


def types_line(types: dict[str, int], new: list[str]) -> str:
    new_keys = {t.casefold() for t in new}
    parts = [f"{t} ({n}){' — new' if t.casefold() in new_keys else ''}" for t, n in list(types.items())[:8]]
    if len(types) > 8:
        parts.append(f"and {counted(len(types) - 8, 'more type')}")
    return ", ".join(parts) if parts else "none"


def conflict_row(c: Conflict) -> str:
    """"Ada · Person — already here; a merge adds or changes: born" (the full sentence is the tooltip)."""
    what = "already in this session" if c.existing_id is not None else f"repeats {c.earlier_where}"
    merge = f"; a merge adds or changes: {', '.join(c.changes)}" if c.changes else "; a merge changes nothing"
    return f"{c.name}  \u00b7  {c.type}  \u2014  {what}{merge}"


class ImportPreviewDialog(QDialog):
    """Shows an ``ImportPreview``; ``choice()`` is the conflict choice (None without conflicts)."""

    def __init__(self, parent: QWidget | None, file_name: str, session_title: str, preview: ImportPreview) -> None:
        super().__init__(parent)
        self.setObjectName("importPreviewDialog")
        self.setWindowTitle("Import graph")
        self.setMinimumWidth(560)
        self.preview = preview
        layout = QVBoxLayout(self)
        gap = theme.spacing("md")
        layout.setSpacing(gap)
        layout.setContentsMargins(gap * 2, gap * 2, gap * 2, gap * 2)
        self.title_label = _label(f"Import \u201c{file_name}\u201d into \u201c{session_title}\u201d", "title")
        layout.addWidget(self.title_label)
        p = preview
        self.counts_label = _label(f"The file holds {counted(p.objects, 'object', grouped=True)} and "
                                   f"{counted(p.relations, 'relation', grouped=True)}, "
                                   f"{counted(len(p.object_types), 'object type')}.")
        self.counts_label.setObjectName("importCounts")
        layout.addWidget(self.counts_label)
        layout.addWidget(_label("Object types", "section"))
        self.types_label = _label(types_line(p.object_types, p.new_types))
        self.types_label.setObjectName("importTypes")
        layout.addWidget(self.types_label)
        if p.relation_types:
            layout.addWidget(_label("Relation types", "section"))
            layout.addWidget(_label(types_line(p.relation_types, [])))
        if p.sample:
            more = f" (the first {len(p.sample)})" if p.objects > len(p.sample) else ""
            layout.addWidget(_label(f"Objects{more}", "section"))
            self.sample_list = _list("importSample", [f"{name}  \u00b7  {type_}" for type_, name in p.sample], 5)
            layout.addWidget(self.sample_list)
        self.conflicts_list: QListWidget | None = None
        self.group = QButtonGroup(self)
        self.buttons_by_choice: dict[str, QRadioButton] = {}
        if p.conflicts:
            n = len(p.conflicts)
            head = _label(f"{counted(n, 'conflict')}: {counted(n, 'object')} of the file "
                          f"{'has' if n == 1 else 'have'} the type and name of one already there",
                          "section")
            head.setObjectName("importConflictsHead")
            layout.addWidget(head)
            rows = [conflict_row(c) for c in p.conflicts]
            self.conflicts_list = _list("importConflicts", rows, 6, tips=[c.sentence() + (f"; a merge adds or changes: {', '.join(c.changes)}" if c.changes else "")
                                                  for c in p.conflicts])
            layout.addWidget(self.conflicts_list)
            for value, text in CHOICES:
                button = QRadioButton(text)
                button.setObjectName(f"conflict_{value}")
                self.group.addButton(button)
                self.buttons_by_choice[value] = button
                layout.addWidget(button)
            self.buttons_by_choice["skip"].setChecked(True)  # the choice that changes nothing already there
        else:
            layout.addWidget(_label("Nothing in the file is already in this session.", "muted"))
        layout.addWidget(_label("The import is one change: Edit \u2192 Undo takes it back.", "caption"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setObjectName("importButton")
        self.import_button.setDefault(True)
        theme.set_role(self.import_button, "primary")
        self.import_button.setEnabled(p.objects + p.relations > 0)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def choice(self) -> str:
        """The conflict choice for the store ("error" when there is nothing to choose)."""
        for value, button in self.buttons_by_choice.items():
            if button.isChecked():
                return value
        return "error"

    def choose(self, value: str) -> None:
        self.buttons_by_choice[value].setChecked(True)


class ProblemsDialog(QDialog):
    """A refused import: the sentence, and every problem in a scrollable list."""

    def __init__(self, parent: QWidget | None, file_name: str, problems: list[str], hint: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("importProblemsDialog")
        self.setWindowTitle("Import graph")
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        gap = theme.spacing("md")
        layout.setSpacing(gap)
        layout.setContentsMargins(gap * 2, gap * 2, gap * 2, gap * 2)
        layout.addWidget(_label(f"Nothing was imported from \u201c{file_name}\u201d", "title"))
        n = len(problems)
        layout.addWidget(_label(f"The file has {counted(n, 'problem')}"
                                + (f"; {hint}." if hint else ":") if n != 1 else
                                "The file has a problem" + (f"; {hint}." if hint else ":")))
        self.problems_list = _list("importProblems", problems, 14)
        self.problems_list.setWordWrap(True)
        self.problems_list.setUniformItemSizes(False)
        layout.addWidget(self.problems_list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
