"""The review panel before writing: what one extraction would add and merge, riskiest first.

Each row is a ``PlanItem`` (objects and relations): a tick box (unticked rows are not written;
rows whose quote was not found start unticked), the action, the name and type (editable in place),
and why it is risky (its quote was not found, a fuzzy or model-decided merge, a new type). The
selected row's source passages are shown below it, each with its page and some text around it.
"Split" on a merged row records that the merged names are different things (remembered for the
session) and asks the controller to plan again — from the cache, without asking the model. Apply
writes the ticked rows as one revertible change. The plan is edited in place; nothing here writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHBoxLayout, QPlainTextEdit, QPushButton,
                               QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.extraction.plan import Plan, PlanItem

COLUMNS = ("Write", "Kind", "Action", "Name", "Type", "Why to look")
CONTEXT = 160
ROLE_KEY = Qt.ItemDataRole.UserRole + 1


class ReviewDialog(QDialog):
    splitRequested = Signal(object)  # the PlanItem whose merges the person split

    def __init__(self, plan: "Plan", text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("extractionReview")
        self.setWindowTitle(f"Review before writing — {plan.document_name}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.resize(900, 620)
        self.plan = plan
        self.text = text
        self._items: dict[str, "PlanItem"] = {i.key: i for i in plan.items()}
        lay = QVBoxLayout(self)
        objs = [o for o in plan.objects if o.include]
        summary = (f"{counted(sum(1 for o in objs if o.action == 'add'), 'new object')}, "
                   f"{counted(sum(1 for o in objs if o.action == 'merge'), 'merge')} into existing objects, "
                   f"{counted(sum(1 for r in plan.relations if r.include and r.action == 'add'), 'new relation')}; "
                   f"{counted(sum(1 for i in plan.items() if not i.include), 'item')} held back.")
        lay.addWidget(plain_label(summary, name="extractionReviewSummary", wrap=True))
        for warning in plan.warnings:
            lay.addWidget(plain_label(warning, name="extractionReviewWarning", wrap=True))
        for pair in plan.pairs[:5]:
            lay.addWidget(plain_label(f"Possibly the same: {pair['a_name']} and {pair['b_name']} ({pair['reason']}); "
                                      "kept apart.", name="extractionReviewPair", wrap=True))
        self.tree = QTreeWidget()
        self.tree.setObjectName("extractionReviewTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked |
                                  QAbstractItemView.EditTrigger.EditKeyPressed)
        for item in plan.items():
            self.tree.addTopLevelItem(self._row(item))
        for col in range(len(COLUMNS) - 1):
            self.tree.resizeColumnToContents(col)
        self.tree.itemSelectionChanged.connect(self._show_sources)
        self.sources = QPlainTextEdit()
        self.sources.setObjectName("extractionReviewSources")
        self.sources.setReadOnly(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.sources)
        split.setSizes([420, 160])
        lay.addWidget(split, 1)
        row = QHBoxLayout()
        self.split_button = QPushButton("Split merge")
        self.split_button.setObjectName("extractionReviewSplit")
        self.split_button.setToolTip(plain_tooltip("These are different things: keep them apart (remembered for "
                                                   "this session) and plan again without asking the model"))
        theme.bind_icon(self.split_button, "scissors")
        self.split_button.setEnabled(False)
        self.split_button.clicked.connect(lambda *_: self._split())
        row.addWidget(self.split_button)
        row.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel)
        apply_button = buttons.button(QDialogButtonBox.StandardButton.Apply)
        apply_button.setObjectName("extractionReviewApply")
        apply_button.setText("Apply as one change")
        theme.set_role(apply_button, "primary")  # the dialog's one way forward, in the accent colour
        apply_button.clicked.connect(lambda *_: self._apply())
        buttons.rejected.connect(self.reject)
        row.addWidget(buttons)
        lay.addLayout(row)
        top = self.tree.topLevelItem(0)
        if top is not None:
            self.tree.setCurrentItem(top)

    def _row(self, item: "PlanItem") -> QTreeWidgetItem:
        if item.kind == "object":
            name, kind = item.name, "object"
        else:
            ends = {o.key: o.name for o in self.plan.objects}
            name, kind = f"{ends.get(item.source, item.source)} → {ends.get(item.target, item.target)}", "relation"
        row = QTreeWidgetItem(["", kind, item.action, name, item.type, "; ".join(item.reasons)])
        row.setData(0, ROLE_KEY, item.key)
        flags = row.flags() | Qt.ItemFlag.ItemIsUserCheckable
        if item.kind == "object" and item.action == "add":
            flags |= Qt.ItemFlag.ItemIsEditable
        row.setFlags(flags)
        row.setCheckState(0, Qt.CheckState.Checked if item.include else Qt.CheckState.Unchecked)
        return row

    def current(self) -> "PlanItem | None":
        row = self.tree.currentItem()
        return self._items.get(str(row.data(0, ROLE_KEY))) if row is not None else None

    def _show_sources(self) -> None:
        item = self.current()
        self.split_button.setEnabled(bool(item is not None and item.merges))
        if item is None:
            self.sources.setPlainText("")
            return
        parts = []
        for m in item.merges:
            parts.append(f"Merged: {m['name']} into {m['into']} ({m['tier']}, {m['score']:.2f})")
        for ev in item.evidence:
            where = f"page {ev['page']}" if ev.get("page") else f"part {ev['chunk_index'] + 1}"
            if ev.get("start") is None:
                parts.append(f"[{where}] quote not found in the document: “{ev['quote']}”")
                continue
            start, end = int(ev["start"]), int(ev["end"])
            before = self.text[max(0, start - CONTEXT):start]
            after = self.text[end:end + CONTEXT]
            parts.append(f"[{where}, {ev['alignment']}] …{before}[[{self.text[start:end]}]]{after}…")
        self.sources.setPlainText("\n\n".join(parts))

    def read_back(self) -> None:
        """The tick boxes and edited names/types into the plan."""
        for i in range(self.tree.topLevelItemCount()):
            row = self.tree.topLevelItem(i)
            if row is None:
                continue
            item = self._items[str(row.data(0, ROLE_KEY))]
            item.include = row.checkState(0) == Qt.CheckState.Checked
            if item.kind == "object" and item.action == "add":
                name, type_ = row.text(3).strip(), row.text(4).strip()
                if name:
                    item.name = name
                if type_:
                    item.type = type_

    def _apply(self) -> None:
        self.read_back()
        self.accept()

    def _split(self) -> None:
        item = self.current()
        if item is not None and item.merges:
            self.read_back()
            self.splitRequested.emit(item)
            self.done(2)


def merged_identities(item: Any) -> list[tuple[str, str]]:
    """The (merged name, kept entity) identity pairs a split of ``item`` records as different."""
    from cks_desktop.extraction.plan import split_identities

    return split_identities(item)
