"""The legend: one row per object type with its colour and count; unticking hides the type.

The legend doubles as the type filter because that is where a person looks
to learn what a colour means, and "hide the Documents" is the next thought.
Double-clicking a row selects every visible object of that type.

It floats over the canvas as a card (``stage.py``), so its size hint is its content: the title
row plus one line per type, and the arrow beside the title folds it down to the title alone.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QFrame, QHBoxLayout, QListWidget, QListWidgetItem, QPushButton, QToolButton, QVBoxLayout, QWidget,
)

from cks_desktop.ui.graph.render import Style
from cks_desktop.ui.labels import plain_label

ROLE_TYPE = Qt.ItemDataRole.UserRole + 1


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
        self._updating = False
        self._shown: list[tuple[str, int, bool, str, bool]] = []
        self.hide()  # until there is a type to list (``set_types``)

    def set_folded(self, folded: bool) -> None:
        """Show only the title row (the card stays where it is, a line high)."""
        if self.fold.isChecked() != folded:
            self.fold.setChecked(folded)
            return
        self.fold.setArrowType(Qt.ArrowType.RightArrow if folded else Qt.ArrowType.DownArrow)
        self.fold.setToolTip("Show the legend" if folded else "Fold the legend to its title")
        self.list.setVisible(not folded)
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
        return QSize(width + extra_w, height + extra_h)

    def set_types(self, types: list[tuple[str, int]], hidden: set[str], style: Style) -> None:
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

    def _changed(self, item: QListWidgetItem) -> None:
        if not self._updating:
            self.typeToggled.emit(item.data(ROLE_TYPE), item.checkState() == Qt.CheckState.Checked)
