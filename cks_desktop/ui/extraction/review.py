"""The review panel before writing: what one extraction would add and merge, riskiest first.

Each row is a ``PlanItem`` (objects and relations): a tick box (unticked rows are not written;
rows whose quote was not found start unticked), the action, the name and type (editable in place),
and why it is risky (its quote was not found, a fuzzy or model-decided merge, a new type). The
selected row's source passages are shown below it, each with its page and some text around it.
"Merge these" folds two or more selected object rows of one type into one (the first row in the
list, or the one already in the graph): names become aliases, properties are kept with conflicts,
sources and relations move — the review file's ``merge_into``, folded at once so the kept row shows
every source. "Split" on a merged row records that the merged names are different things (remembered for the
session) and asks the controller to plan again — from the cache, without asking the model. Apply
writes the ticked rows as one revertible change. The plan is edited in place; nothing here writes.
What the extraction bounds left out is listed above the rows, every note, grouped, each group with
why it cannot be ticked back in (``extraction/left_out.py`` holds the decision).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHBoxLayout, QPlainTextEdit, QPushButton,
                               QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.provenance.viewer import passage_mark
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.extraction.plan import Plan, PlanItem

COLUMNS = ("Write", "Kind", "Action", "Name", "Type", "Why to look")
CONTEXT = 160
# plain words for how a mention joined another and how its quote was found in the document
MERGE_WORDS = {"exact": "the same name", "alias": "a name it is also known by", "fuzzy": "a name spelled nearly the same",
               "model": "the model said they are one", "spelling": "the same name spelled another way",
               "short form": "a shorter form of the name", "source": "the same passage of this document as before"}
FOUND_WORDS = {"exact": "word for word", "fuzzy": "nearly word for word"}
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
        self._folded: dict[str, str] = {}  # folded item key → the kept object's name
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
        self.left_out: QPlainTextEdit | None = None
        if plan.skipped:  # what the model said that could not be written (too much for a part, a bad type)
            lay.addWidget(plain_label(f"Left out of the model's answers ({len(plan.skipped):,}); these are "
                                      "not written and cannot be ticked in (why below each group):",
                                      name="extractionReviewSkipped", wrap=True))
            self.left_out = QPlainTextEdit(self._left_out_text(plan.skipped))
            self.left_out.setObjectName("extractionReviewLeftOut")
            self.left_out.setReadOnly(True)
            self.left_out.setMaximumHeight(110)
            lay.addWidget(self.left_out)
        for pair in plan.pairs[:5]:
            lay.addWidget(plain_label(f"Possibly the same: {pair['a_name']} and {pair['b_name']} ({pair['reason']}); "
                                      "kept apart.", name="extractionReviewPair", wrap=True))
        self.tree = QTreeWidget()
        self.tree.setObjectName("extractionReviewTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
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
        self._marks: list[tuple[int, int]] = []
        manager = theme.manager()
        if manager is not None:  # the passages' marks are drawn in the scheme's colours: redraw on a switch
            manager.themeChanged.connect(self._remark)
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
        self.merge_button = QPushButton("Merge these")
        self.merge_button.setObjectName("extractionReviewMerge")
        self.merge_button.setToolTip(plain_tooltip("The selected objects (two or more, of one type) are one thing: "
                                                   "keep the first, its names, sources and relations together"))
        theme.bind_icon(self.merge_button, "git-merge")
        self.merge_button.setEnabled(False)
        self.merge_button.clicked.connect(lambda *_: self._merge())
        row.addWidget(self.merge_button)
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

    @staticmethod
    def _left_out_text(notes: list[str]) -> str:
        """Every left-out note, grouped by kind, each group under the sentence that says why it
        cannot be ticked in (``extraction/left_out.py``: the decision and its reasons)."""
        from cks_desktop.extraction.left_out import WHY, Kind, kind

        groups: dict[Kind, list[str]] = {}
        for note in notes:
            groups.setdefault(kind(note), []).append(note)
        parts = []
        order: tuple[Kind, ...] = ("over_bound", "malformed", "unknown")
        for key in order:
            if key in groups:
                parts.append(WHY[key] + "\n" + "\n".join(f"  • {n}" for n in groups[key]))
        return "\n\n".join(parts)

    def _row(self, item: "PlanItem") -> QTreeWidgetItem:
        if item.kind == "object":
            name, kind = item.name, "object"
        else:
            ends = {o.key: o.name for o in self.plan.objects}
            name, kind = f"{ends.get(item.source, item.source)} → {ends.get(item.target, item.target)}", "relation"
        into = self._folded.get(item.key)
        action = f"merged into {into}" if into is not None else item.action
        row = QTreeWidgetItem(["", kind, action, name, item.type, "; ".join(item.reasons)])
        row.setData(0, ROLE_KEY, item.key)
        row.setCheckState(0, Qt.CheckState.Checked if item.include else Qt.CheckState.Unchecked)
        flags = row.flags() | Qt.ItemFlag.ItemIsUserCheckable
        if into is not None:  # folded into another row: written as part of it, nothing to tick or edit
            flags &= ~(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable)
        elif item.kind == "object" and item.action == "add":
            flags |= Qt.ItemFlag.ItemIsEditable
        row.setFlags(flags)
        return row

    def selected(self) -> "list[PlanItem]":
        """The selected rows' items, in the list's order."""
        rows = sorted(self.tree.selectedItems(), key=self.tree.indexOfTopLevelItem)
        return [self._items[str(r.data(0, ROLE_KEY))] for r in rows]

    def _mergeable(self) -> "list[PlanItem] | None":
        """The selection when "Merge these" can fold it: two or more objects of one type, not folded
        already, at most one of them already in the graph (two existing objects: merge_objects)."""
        items = self.selected()
        if len(items) < 2 or any(i.kind != "object" or i.key in self._folded for i in items):
            return None
        if len({i.type.casefold() for i in items}) != 1 or sum(1 for i in items if i.action != "add") > 1:
            return None
        return items

    def _merge(self) -> None:
        from cks_desktop.extraction.plan import fold_hand_merges

        items = self._mergeable()
        if items is None:
            return
        self.read_back()  # keep the ticks and edits made so far
        kept = next((i for i in items if i.action != "add"), items[0])
        for item in items:
            if item is not kept:
                item.merge_into = kept.key
                self._folded[item.key] = kept.name
        fold_hand_merges(self.plan)
        self._rebuild(kept.key)

    def _rebuild(self, current: str) -> None:
        self.tree.clear()
        for item in self.plan.items():
            row = self._row(item)
            self.tree.addTopLevelItem(row)
            if item.key == current:
                self.tree.setCurrentItem(row)

    def current(self) -> "PlanItem | None":
        row = self.tree.currentItem()
        return self._items.get(str(row.data(0, ROLE_KEY))) if row is not None else None

    def _show_sources(self) -> None:
        item = self.current()
        self.split_button.setEnabled(bool(item is not None and item.merges))
        self.merge_button.setEnabled(self._mergeable() is not None)
        if item is None:
            self.sources.setPlainText("")
            return
        parts: list[str] = []
        marks: list[tuple[int, int]] = []  # (start, end) in the shown text of each source passage
        for m in item.merges:
            parts.append(f"Joined with {m['into']}: “{m['name']}” — {MERGE_WORDS.get(m['tier'], m['tier'])}"
                         f" ({m['score']:.0%} sure)")
        for ev in item.evidence:
            where = f"Page {ev['page']}" if ev.get("page") else f"Part {ev['chunk_index'] + 1}"
            if ev.get("start") is None:
                parts.append(f"{where}: the quote was not found in the document: “{ev['quote']}”")
                continue
            start, end = int(ev["start"]), int(ev["end"])
            before = self.text[max(0, start - CONTEXT):start]
            after = self.text[end:end + CONTEXT]
            head = f"{where}, {FOUND_WORDS.get(ev['alignment'], ev['alignment'])}:\n…{before}"
            offset = sum(len(x) + 2 for x in parts) + len(head)
            marks.append((offset, offset + end - start))
            parts.append(f"{head}{self.text[start:end]}{after}…")
        self.sources.setPlainText("\n\n".join(parts))
        self._marks = marks
        self._remark("")

    def _remark(self, _scheme: str) -> None:
        self.sources.setExtraSelections([passage_mark(self.sources.document(), a, b) for a, b in self._marks])

    def marked_passages(self) -> list[str]:
        """The source passages marked in the sources pane, in order."""
        shown = self.sources.toPlainText()
        return [shown[a:b] for a, b in self._marks]

    def read_back(self) -> None:
        """The tick boxes and edited names/types into the plan."""
        for i in range(self.tree.topLevelItemCount()):
            row = self.tree.topLevelItem(i)
            if row is None:
                continue
            item = self._items[str(row.data(0, ROLE_KEY))]
            if item.key in self._folded:
                continue  # written as part of the row it was merged into
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
