"""The legend: one row per object type with its colour and count; unticking hides the type.

The legend doubles as the type filter because that is where a person looks
to learn what a colour means, and "hide the Documents" is the next thought.
Double-clicking a row selects every visible object of that type.

Coloured by community (the graph tool bar's More menu), it lists the communities instead, each
with its colour, title and size; clicking one shows its summary (plain text: model output) below
the list, and "Summarise" asks the model for those not summarised yet.

It floats over the canvas as a card (``stage.py``), so its size hint is its content: the title
row plus one line per type, and the arrow beside the title folds it down to the title alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QFrame, QHBoxLayout, QListWidget, QListWidgetItem, QPushButton, QToolButton, QVBoxLayout, QWidget,
)

from cks_desktop.ui.graph.render import Style
from cks_desktop.ui.graph.stage import LEGEND_WIDTH
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

ROLE_TYPE = Qt.ItemDataRole.UserRole + 1
ROLE_COMMUNITY = Qt.ItemDataRole.UserRole + 2


@dataclass(frozen=True)
class CommunityRow:
    """One community as the legend lists it; ``summary`` None: not summarised yet."""

    number: int
    title: str
    members: int
    colour: str
    summary: str | None


def swatch(colour: QColor, size: int = 14, square: bool = False) -> QIcon:
    """The type's mark as the canvas draws it: a disc, or a square past the palette's twelve colours."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    if square:
        p.drawRect(2, 2, size - 4, size - 4)
    else:
        p.drawEllipse(1, 1, size - 2, size - 2)
    p.end()
    return QIcon(pm)


class Legend(QFrame):
    typeToggled = Signal(str, bool)  # type, visible
    showAllRequested = Signal()
    typeActivated = Signal(str)
    summariseRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphLegend")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        head = QHBoxLayout()
        self.fold = QToolButton()
        self.fold.setObjectName("legendFold")
        self.fold.setAutoRaise(True)
        self.fold.setCheckable(True)
        self.fold.setArrowType(Qt.ArrowType.DownArrow)
        self.fold.setToolTip("Fold the legend to its title")
        self.fold.toggled.connect(self.set_folded)
        head.addWidget(self.fold)
        title = plain_label("Types")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        self.title = title
        head.addWidget(title)
        head.addStretch(1)
        self.show_all = QPushButton("Show all")
        self.show_all.setObjectName("legendShowAll")
        self.show_all.setFlat(True)
        self.show_all.setToolTip("Show every type again")
        self.show_all.clicked.connect(self.showAllRequested)
        self.show_all.hide()
        head.addWidget(self.show_all)
        layout.addLayout(head)
        self.list = QListWidget()
        self.list.setObjectName("legendList")
        self.list.setAccessibleName("Types in the graph")
        self.list.setIconSize(QSize(14, 14))
        self.list.setFrameShape(QListWidget.Shape.NoFrame)
        self.list.setToolTip("Untick a type to hide it; double-click to select all of that type")
        self.list.itemChanged.connect(self._changed)
        self.list.itemDoubleClicked.connect(lambda item: self.typeActivated.emit(item.data(ROLE_TYPE)))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout.addWidget(self.list, 1)
        self.summary = plain_label()
        self.summary.setObjectName("legendCommunitySummary")
        self.summary.setWordWrap(True)
        self.summary.hide()
        layout.addWidget(self.summary)
        self.summarise = QPushButton("Summarise")
        self.summarise.setObjectName("legendSummarise")
        self.summarise.clicked.connect(self.summariseRequested)
        self.summarise.hide()
        layout.addWidget(self.summarise)
        self.list.currentItemChanged.connect(self._current_changed)
        self._updating = False
        self._shown: list[tuple[str, int, bool, str, bool]] = []
        self._communities: list[CommunityRow] | None = None
        self.hide()  # until there is a type to list (``set_types``)

    def set_folded(self, folded: bool) -> None:
        """Show only the title row (the card stays where it is, a line high)."""
        if self.fold.isChecked() != folded:
            self.fold.setChecked(folded)
            return
        self.fold.setArrowType(Qt.ArrowType.RightArrow if folded else Qt.ArrowType.DownArrow)
        self.fold.setToolTip("Show the legend" if folded else "Fold the legend to its title")
        self.list.setVisible(not folded)
        communities = self._communities is not None and not folded
        self.summary.setVisible(communities and bool(self.summary.text()))
        self.summarise.setVisible(communities and self.summarise.isEnabled())
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802
        """Its content: the title row, and (unfolded) one line per type, as wide as the longest."""
        margins = self.contentsMargins()
        layout = self.layout()
        first = layout.itemAt(0) if layout is not None else None
        if layout is None or first is None:
            return super().sizeHint()
        lay = layout.contentsMargins()
        head = first.sizeHint()
        width = head.width()
        height = head.height()
        if self.list.isVisibleTo(self) and self.list.count():
            rows = sum(self.list.sizeHintForRow(r) for r in range(self.list.count()))
            height += layout.spacing() + rows + 2 * self.list.frameWidth() + 2
            width = max(width, self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + 8)
        extra_w = margins.left() + margins.right() + lay.left() + lay.right()
        extra_h = margins.top() + margins.bottom() + lay.top() + lay.bottom()
        for extra in (self.summary, self.summarise):
            if extra.isVisibleTo(self):
                width = max(width, min(extra.sizeHint().width(), LEGEND_WIDTH[1] - extra_w))
                # as the stage lays it out, a few pixels narrower: a wrap never needs a line more than counted
                inner = max(LEGEND_WIDTH[0], min(LEGEND_WIDTH[1], width + extra_w)) - extra_w - 4
                height += layout.spacing() + (extra.heightForWidth(inner) if extra.hasHeightForWidth()
                                              else extra.sizeHint().height())
        return QSize(width + extra_w, height + extra_h)

    def set_types(self, types: list[tuple[str, int]], hidden: set[str], style: Style) -> None:
        self._types = (types, hidden, style)
        if self._communities is not None:
            return  # listed again when the legend shows types (``show_types``)
        rows = [(name, count, name not in hidden, style.colour_of(name).name(), name in style.square_types)
                for name, count in types]
        if rows == self._shown:
            return
        self._shown = rows
        self._updating = True
        try:
            self.list.clear()
            for name, count, visible, colour, square in rows:
                item = QListWidgetItem(swatch(QColor(colour), square=square), f"{name}  ({count:,})")
                item.setData(ROLE_TYPE, name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if visible else Qt.CheckState.Unchecked)
                self.list.addItem(item)
        finally:
            self._updating = False
        self.show_all.setEnabled(bool(hidden))
        self.show_all.setVisible(bool(hidden))  # only when there is something to show again
        self.setVisible(bool(rows))  # an empty graph shows its call to action, not an empty card
        self.updateGeometry()  # the card follows its rows (``stage.py`` listens)

    def set_communities(self, rows: list[CommunityRow], *, can_summarise: bool) -> None:
        """List the communities instead of the types (the canvas is coloured by community)."""
        current = self.list.currentItem()
        keep = current.data(ROLE_COMMUNITY) if current is not None and self._communities is not None else None
        self._communities = rows
        self._shown = []
        self._stretch_summary(True)
        self.title.setText("Communities")
        self.show_all.hide()
        self._updating = True
        try:
            self.list.clear()
            self.list.setToolTip("Click a community to read its summary")
            self.list.setAccessibleName("Communities in the graph")
            for row in rows:
                item = QListWidgetItem(swatch(QColor(row.colour)), f"{row.title}  ({row.members:,})")
                item.setData(ROLE_COMMUNITY, row.number)
                self.list.addItem(item)
        finally:
            self._updating = False
        rows_px = sum(self.list.sizeHintForRow(r) for r in range(self.list.count()))
        self.list.setFixedHeight(rows_px + 2 * self.list.frameWidth() + 2)  # the summary gets the rest
        missing = sum(1 for r in rows if r.summary is None)
        self.summarise.setEnabled(can_summarise and missing > 0)
        self.summarise.setText(f"Summarise {missing}" if missing else "Summarise")
        self.summarise.setToolTip(plain_tooltip(f"Ask the model for the {missing} summaries not written yet, one call "
                                                "each" if missing != 1 else
                                                "Ask the model for the summary not written yet (one call)"))
        self.summarise.setVisible(self.summarise.isEnabled() and not self.fold.isChecked())
        if not rows:
            self._say("No objects are related yet, so the graph has no communities.")
        else:
            index = next((i for i, r in enumerate(rows) if r.number == keep), 0)
            self.list.setCurrentRow(index)
        self.setVisible(True)
        self.updateGeometry()

    def show_types(self) -> None:
        """List the types again (the canvas is coloured by type)."""
        self._communities = None
        self._stretch_summary(False)
        self.list.setMinimumHeight(0)
        self.list.setMaximumHeight(16777215)  # QWIDGETSIZE_MAX: the type list sizes with the card again
        self.title.setText("Types")
        self.list.setToolTip("Untick a type to hide it; double-click to select all of that type")
        self.list.setAccessibleName("Types in the graph")
        self.summary.hide()
        self.summary.setText("")
        self.summarise.hide()
        self._shown = []
        if hasattr(self, "_types"):
            self.set_types(*self._types)

    def _stretch_summary(self, on: bool) -> None:
        """Room left over goes to the summary (its lines must all show), else to the list."""
        layout = self.layout()
        if isinstance(layout, QVBoxLayout):
            layout.setStretchFactor(self.list, 0 if on else 1)
            layout.setStretchFactor(self.summary, 1 if on else 0)

    def _say(self, text: str) -> None:
        self.summary.setText(text)
        self.summary.setVisible(bool(text) and not self.fold.isChecked())
        self.updateGeometry()

    def _current_changed(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if self._communities is None or item is None:
            return
        number = item.data(ROLE_COMMUNITY)
        row = next((r for r in self._communities if r.number == number), None)
        if row is not None:
            self._say(row.summary if row.summary is not None else
                      "Not summarised yet: Summarise asks the model for it.")

    def _changed(self, item: QListWidgetItem) -> None:
        if not self._updating and self._communities is None:
            self.typeToggled.emit(item.data(ROLE_TYPE), item.checkState() == Qt.CheckState.Checked)
