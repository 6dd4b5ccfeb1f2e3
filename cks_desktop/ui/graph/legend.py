"""The legend: one row per object type with its colour and count; unticking hides the type.

The legend doubles as the type filter because that is where a person looks
to learn what a colour means, and "hide the Documents" is the next thought.
Double-clicking a row selects every visible object of that type.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget,
)

from cks_desktop.ui.graph.render import Style
from cks_desktop.ui.labels import plain_label

ROLE_TYPE = Qt.ItemDataRole.UserRole + 1


def swatch(colour: QColor, size: int = 14) -> QIcon:
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    p.drawEllipse(1, 1, size - 2, size - 2)
    p.end()
    return QIcon(pm)


class Legend(QWidget):
    typeToggled = Signal(str, bool)  # type, visible
    showAllRequested = Signal()
    typeActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphLegend")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        head = QHBoxLayout()
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
        head.addWidget(self.show_all)
        layout.addLayout(head)
        self.list = QListWidget()
        self.list.setObjectName("legendList")
        self.list.setIconSize(QSize(14, 14))
        self.list.setFrameShape(QListWidget.Shape.NoFrame)
        self.list.setToolTip("Untick a type to hide it; double-click to select all of that type")
        self.list.itemChanged.connect(self._changed)
        self.list.itemDoubleClicked.connect(lambda item: self.typeActivated.emit(item.data(ROLE_TYPE)))
        layout.addWidget(self.list, 1)
        self._updating = False
        self._shown: list[tuple[str, int, bool, str]] = []

    def set_types(self, types: list[tuple[str, int]], hidden: set[str], style: Style) -> None:
        rows = [(name, count, name not in hidden, style.colour_of(name).name()) for name, count in types]
        if rows == self._shown:
            return
        self._shown = rows
        self._updating = True
        try:
            self.list.clear()
            for name, count, visible, colour in rows:
                item = QListWidgetItem(swatch(QColor(colour)), f"{name}  ({count:,})")
                item.setData(ROLE_TYPE, name)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if visible else Qt.CheckState.Unchecked)
                self.list.addItem(item)
        finally:
            self._updating = False
        self.show_all.setEnabled(bool(hidden))

    def _changed(self, item: QListWidgetItem) -> None:
        if not self._updating:
            self.typeToggled.emit(item.data(ROLE_TYPE), item.checkState() == Qt.CheckState.Checked)
