"""The centre of the window until the graph view lands: the session's objects.

A table (name, type, properties) over a ``QAbstractTableModel``, so tens of
thousands of objects cost nothing until scrolled to. It follows the store's
``GraphChanged`` events for the shown session, so objects a tool adds appear
while the chat runs.
"""

from __future__ import annotations

import json
from typing import Any

from collections.abc import Iterable

from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, \
    QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget

from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.model import Object

COLUMNS = ("Name", "Type", "Properties")
Index = QModelIndex | QPersistentModelIndex


def _properties_text(properties: dict[str, Any]) -> str:
    parts = []
    for key, value in properties.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}: {shown}")
    text = "; ".join(parts)
    return text if len(text) <= 300 else text[:299] + "…"


class ObjectTableModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.objects: list[Object] = []
        self._row: dict[str, int] = {}

    def set_objects(self, objects: list[Object]) -> None:
        self.beginResetModel()
        self.objects = list(objects)
        self._row = {o.id: i for i, o in enumerate(self.objects)}
        self.endResetModel()

    def apply(self, event: GraphChanged) -> None:
        if event.removed_objects:
            gone = set(event.removed_objects)
            self.set_objects([o for o in self.objects if o.id not in gone])
        for obj in event.updated_objects:
            row = self._row.get(obj.id)
            if row is not None:
                self.objects[row] = obj
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        fresh = [o for o in event.added_objects if o.id not in self._row]
        if fresh:
            start = len(self.objects)
            self.beginInsertRows(QModelIndex(), start, start + len(fresh) - 1)
            for obj in fresh:
                self._row[obj.id] = len(self.objects)
                self.objects.append(obj)
            self.endInsertRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.objects)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        obj = self.objects[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            column = index.column()
            if column == 0:
                return obj.name
            if column == 1:
                return obj.type
            return _properties_text(obj.properties)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None


class ObjectListView(QWidget):
    """The same surface as the graph view: ``set_session``, ``on_store_event``,
    ``highlight_objects``/``center_on``, ``askAbout``, ``object_names``, ``aclose``."""

    askAbout = Signal(str)

    def __init__(self, store: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.session_id = ""
        self.relation_count = 0
        self.setObjectName("graphView")
        self.setAccessibleName("Graph objects")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.summary = QLabel()
        self.summary.setObjectName("graphSummary")
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("graphFilter")
        self.filter_edit.setPlaceholderText("Filter objects by name, type or property")
        self.filter_edit.setClearButtonEnabled(True)
        self.model = ObjectTableModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView()
        self.table.setObjectName("objectTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(self.summary)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.table, 1)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.table.doubleClicked.connect(self._ask_about)
        self._update_summary()

    def set_session(self, session_id: str | None) -> None:
        session_id = session_id or ""
        self.session_id = session_id
        if session_id:
            self.model.set_objects(self.store.all_objects(session_id))
            self.relation_count = int(self.store.counts(session_id).get("relations", 0))
        else:
            self.model.set_objects([])
            self.relation_count = 0
        self._update_summary()

    def on_store_event(self, event: object) -> None:
        if isinstance(event, GraphChanged) and event.session_id == self.session_id and self.session_id:
            self.model.apply(event)
            self.relation_count += len(event.added_relations) - len(event.removed_relations)
            self._update_summary()

    def object_names(self) -> list[str]:
        return [o.name for o in self.model.objects]

    def _rows_of(self, ids: Iterable[str]) -> list[int]:
        wanted = set(ids)
        rows = [self.proxy.mapFromSource(self.model.index(i, 0)).row()
                for i, obj in enumerate(self.model.objects) if obj.id in wanted]
        return [r for r in rows if r >= 0]

    def highlight_objects(self, ids: Iterable[str]) -> None:
        """Select the objects a tool call touched."""
        selection = self.table.selectionModel()
        selection.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row in self._rows_of(ids):
            selection.select(self.proxy.index(row, 0), flags)

    def center_on(self, ids: Iterable[str]) -> None:
        rows = self._rows_of(ids)
        if rows:
            self.table.scrollTo(self.proxy.index(rows[0], 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    def _ask_about(self, index: QModelIndex) -> None:
        obj = self.model.objects[self.proxy.mapToSource(index).row()]
        self.askAbout.emit(f"“{obj.name}” ({obj.type}, {obj.id})")

    async def aclose(self) -> None:
        return None

    def _update_summary(self) -> None:
        if not self.session_id:
            self.summary.setText("No session is open. Create one with Ctrl+N.")
            return
        n = len(self.model.objects)
        r = self.relation_count
        self.summary.setText(f"{n} object{'s' if n != 1 else ''}, {r} relation{'s' if r != 1 else ''}")
