"""The inspector: one object's type, name, properties, relations and history, all editable.

Every edit goes through ``GraphEditor`` (the tool registry, origin "user"),
so it is validated like a model's write, recorded, and undone with Ctrl+Z.
The inspector never patches its own display after an edit: the store's
change event comes back through the view, which calls ``refresh``, so what is
shown is always what was written.

Property values: text that parses as a JSON number, boolean, null, list or
object is stored as that; anything else is stored as text (so typing 42
stores a number, "42" with quotes stores text).

It reads like a document: the properties table and the relation and history
lists are as tall as their rows, each row as tall as its wrapped text at the
width it has (``wrapped_items.py``), and they fit again whenever the sheet's
width changes, so only the sheet scrolls and no last line is cut. A relation
list with nothing in it is one quiet line ("No incoming relations").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QFormLayout, QFrame, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QLineEdit,
    QListWidget, QListWidgetItem, QMenu, QPushButton, QScrollArea, QSizePolicy, QTableWidget, QTableWidgetItem,
    QToolButton, QVBoxLayout, QWidget,
)

from cks_desktop.graph.edit_base import CHANGED_ELSEWHERE
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.model import Change, Object, Relation
from cks_desktop.ui.flow_layout import FlowLayout
from cks_desktop.ui.graph.editor import EditResult, GraphEditor
from cks_desktop.ui.graph.legend import swatch
from cks_desktop.ui.graph.value_words import PlainValueDelegate, plain_words
from cks_desktop.ui.labels import plain_input_dialog, plain_label
from cks_desktop.ui.provenance.sources_view import ObjectSources, SourcesView, read_sources
from cks_desktop.ui.text import plain_tooltip
from cks_desktop.ui.theme import set_role
from cks_desktop.ui.wrapped_items import WrappedTextDelegate

ROLE_ID = Qt.ItemDataRole.UserRole + 1
Spawn = Callable[[Coroutine[Any, Any, Any]], Any]
NameOf = Callable[[str], tuple[str, str]]  # object id -> (name, type)
RELATIONS_MAX, HISTORY_MAX = 220, 200  # px: a longer list scrolls inside the sheet
EMPTY_TABLE_ROWS = 26  # px below the header of a table without properties
ALIASES = "aliases"  # the property extraction keeps an object's other names in (extraction/plan.py)


def aliases_of(properties: dict[str, Any]) -> list[str] | None:
    """An object's other names when its ``aliases`` property is a list of text (shown as chips),
    else None (any other value stays an editable property)."""
    value = properties.get(ALIASES)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    return None


def value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parse_value(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value


def _when(at: str) -> str:
    try:
        stamp = datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return at
    return stamp.strftime("%d %b %H:%M")


def _section(text: str) -> QLabel:
    label = plain_label(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(0, 8, 0, 0)
    return label


def _fit_list(lst: QListWidget, most: int) -> None:
    """``lst`` as tall as its rows (each wrapped at the width the list has now), up to ``most`` px."""
    lst.doItemsLayout()
    rows = 0
    if lst.count():
        last = lst.visualItemRect(lst.item(lst.count() - 1))
        rows = last.bottom() + 1 + lst.verticalScrollBar().value() + lst.spacing()
    lst.setFixedHeight(min(most, rows + 2 * lst.frameWidth() + 2))


def _quiet(label: QLabel, quiet: bool) -> None:
    """A section heading that says there is nothing under it reads quieter: muted, not bold."""
    role = "muted" if quiet else ""
    if label.property("cksRole") != role:
        set_role(label, role)  # first: re-polishing gives the label its earlier font back
    font = label.font()
    font.setBold(not quiet)
    label.setFont(font)


class Inspector(QFrame):
    askAbout = Signal(str)  # object id
    navigate = Signal(str)  # object id
    focusRequested = Signal(str)
    deleteRequested = Signal(str)
    pinToggled = Signal(str)
    message = Signal(str)
    closed = Signal()
    loaded = Signal()  # after the shown object was (re)read from the store
    viewerOpened = Signal(object)  # the document viewer, once a clicked source is shown in it

    def __init__(self, store: Any, editor: GraphEditor, spawn: Spawn, name_of: NameOf,
                 colour_of: Callable[[str], QColor], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphInspector")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.store = store
        self.editor = editor
        self.spawn = spawn
        self.name_of = name_of
        self.colour_of = colour_of
        self.object: Object | None = None
        self.incoming: list[Relation] = []
        self.outgoing: list[Relation] = []
        self.history: list[Change] = []
        self.version: str | None = None  # the shown object's version: edits are made on top of it
        self.sources_data = ObjectSources([], [])  # where the object came from
        self.types: list[str] = []
        self.pinned = False
        self._filling = False
        self._load_gen = 0
        self._build()

    # -- layout -----------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.setContentsMargins(10, 8, 6, 4)
        self.dot = plain_label()
        self.title = plain_label()  # an object's name is data: never HTML
        self.title.setObjectName("inspectorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.title.setWordWrap(True)
        self.close_button = QToolButton()
        self.close_button.setObjectName("inspectorClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close the inspector")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.closed)
        head.addWidget(self.dot)
        head.addWidget(self.title, 1)
        head.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        outer.addLayout(head)

        actions = QHBoxLayout()
        actions.setContentsMargins(10, 0, 10, 4)
        self.ask_button = QPushButton("Ask about this")
        self.ask_button.setObjectName("askAboutButton")
        self.ask_button.setToolTip("Put a reference to this object into the chat input")
        self.ask_button.clicked.connect(lambda: self._emit_for_object(self.askAbout))
        self.focus_button = QPushButton("Focus")
        self.focus_button.setObjectName("inspectorFocus")
        self.focus_button.setToolTip("Show only this object's neighbourhood")
        self.focus_button.clicked.connect(lambda: self._emit_for_object(self.focusRequested))
        self.pin_button = QPushButton("Pin")
        self.pin_button.setObjectName("inspectorPin")
        self.pin_button.clicked.connect(lambda: self._emit_for_object(self.pinToggled))
        for b in (self.ask_button, self.focus_button, self.pin_button):
            actions.addWidget(b)
        actions.addStretch(1)
        outer.addLayout(actions)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(10, 0, 10, 10)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("inspectorName")
        self.name_edit.editingFinished.connect(self._name_done)
        self.type_edit = QComboBox()
        self.type_edit.setObjectName("inspectorType")
        self.type_edit.setEditable(True)
        self.type_edit.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line = self.type_edit.lineEdit()
        assert line is not None  # an editable combo box has its line edit
        line.editingFinished.connect(self._type_done)
        self.type_edit.activated.connect(lambda _: self._type_done())
        form.addRow("Name", self.name_edit)
        form.addRow("Type", self.type_edit)
        self.aliases_box = QWidget()
        self.aliases_box.setObjectName("inspectorAliases")
        self.aliases_box.setAccessibleName("Also known as")
        self._aliases_flow = FlowLayout(self.aliases_box)
        form.addRow("Also known as", self.aliases_box)
        self._aliases_form = form
        lay.addLayout(form)

        lay.addWidget(_section("Properties"))
        self.props = QTableWidget(0, 2)
        self.props.setObjectName("inspectorProperties")
        self.props.setHorizontalHeaderLabels(["Property", "Value"])
        self.props.verticalHeader().hide()
        self.props.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.props.horizontalHeader().setStretchLastSection(True)
        self.props.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.props.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.props.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.props.setWordWrap(True)
        # The table is as tall as its rows (``_fit_properties``): the sheet scrolls, never the table.
        self.props.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # A column's new width reaches the table after ``sectionResized`` returns: fit on the next turn.
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self._fit_all)
        self.props.horizontalHeader().sectionResized.connect(lambda *_: self._fit_timer.start())
        self.props.setItemDelegateForColumn(1, PlainValueDelegate(self.props))  # lists as lines, not JSON
        self.props.itemChanged.connect(self._prop_changed)
        lay.addWidget(self.props)
        add_row = QHBoxLayout()
        self.new_key = QLineEdit()
        self.new_key.setObjectName("inspectorNewKey")
        self.new_key.setPlaceholderText("property")
        self.new_value = QLineEdit()
        self.new_value.setObjectName("inspectorNewValue")
        self.new_value.setPlaceholderText("value")
        self.new_value.returnPressed.connect(self._add_property)
        self.add_prop = QToolButton()
        self.add_prop.setObjectName("inspectorAddProperty")
        self.add_prop.setText("+")
        self.add_prop.setToolTip("Add this property")
        self.add_prop.clicked.connect(self._add_property)
        self.remove_prop = QToolButton()
        self.remove_prop.setObjectName("inspectorRemoveProperty")
        self.remove_prop.setText("−")
        self.remove_prop.setToolTip("Remove the selected property")
        self.remove_prop.clicked.connect(self._remove_property)
        for w in (self.new_key, self.new_value, self.add_prop, self.remove_prop):
            add_row.addWidget(w)
        lay.addLayout(add_row)

        self.out_label = _section("Outgoing relations")
        self.out_list = self._relation_list("inspectorOutgoing")
        self.in_label = _section("Incoming relations")
        self.in_list = self._relation_list("inspectorIncoming")
        for section in (self.out_label, self.out_list, self.in_label, self.in_list):
            lay.addWidget(section)
        self.sources_label = _section("Sources")
        self.sources = SourcesView(self._relation_label)
        self.sources.openRequested.connect(self.open_source)
        self.sources.reviewRequested.connect(lambda source, review: self.spawn(self.mark_reviewed(source, review)))
        lay.addWidget(self.sources_label)
        lay.addWidget(self.sources)
        lay.addWidget(_section("History"))
        self.history_list = QListWidget()
        self.history_list.setObjectName("inspectorHistory")
        self.history_list.setWordWrap(True)
        self.history_list.setItemDelegate(WrappedTextDelegate(self.history_list))
        self.history_list.installEventFilter(self)
        self.history_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lay.addWidget(self.history_list)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        self.delete_button = QPushButton("Delete object")
        self.delete_button.setObjectName("inspectorDelete")
        self.delete_button.setToolTip("Delete this object and its relations (Ctrl+Z brings it back)")
        self.delete_button.clicked.connect(lambda: self._emit_for_object(self.deleteRequested))
        bottom.addWidget(self.delete_button)
        lay.addLayout(bottom)
        self.status = plain_label()
        self.status.setObjectName("inspectorStatus")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        lay.addStretch(1)
        self.setMinimumWidth(280)

    def _relation_list(self, name: str) -> QListWidget:
        lst = QListWidget()
        lst.setObjectName(name)
        lst.setWordWrap(True)
        lst.setItemDelegate(WrappedTextDelegate(lst))  # a wrapped relation's rows measured as drawn
        lst.installEventFilter(self)
        lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lst.setTextElideMode(Qt.TextElideMode.ElideRight)
        lst.setToolTip("Double-click to go to the other object; right-click to change or remove")
        lst.itemDoubleClicked.connect(lambda item: self.navigate.emit(item.data(ROLE_ID + 1)))
        lst.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        lst.customContextMenuRequested.connect(lambda pos, lst=lst: self._relation_menu(lst, pos))
        return lst

    # -- loading ----------------------------------------------------------------
    async def load(self, object_id: str) -> bool:
        """Read the object, its relations and history (in a worker thread) and show them."""
        self._load_gen += 1
        gen = self._load_gen
        session = self.editor.session_id
        if session is None:
            return False

        def read() -> tuple[Object, list[Relation], list[Relation], list[Change], ObjectSources, str | None]:
            version = self.store.object_version(session, object_id)  # before: an edit between is caught
            obj = self.store.get_object(session, object_id)
            incoming, outgoing = self.store.relations_of(session, object_id)
            sources = read_sources(self.store, session, object_id, outgoing + incoming)
            return obj, incoming, outgoing, self.store.changes_touching(session, object_id, 30), sources, version

        try:
            obj, incoming, outgoing, history, sources, version = await asyncio.to_thread(read)
        except Exception:  # gone meanwhile (deleted by a tool): nothing to show
            if gen == self._load_gen:
                self.object = None
                self.hide()
            return False
        if gen != self._load_gen:
            return False
        self.object, self.incoming, self.outgoing, self.history = obj, incoming, outgoing, history
        self.version = version
        self.sources_data = sources
        self._fill()
        self.loaded.emit()
        return True

    def refresh(self) -> None:
        if self.object is not None:
            self.spawn(self.load(self.object.id))

    def sources_changed(self, event: Any) -> None:
        """A change added, moved or removed sources (maybe of the shown object): read again."""
        if self.object is not None and getattr(event, "session_id", None) == self.editor.session_id \
                and self.isVisible():
            self.refresh()

    def _relation_label(self, rel: Relation) -> str:
        if self.object is not None and rel.source_id == self.object.id:
            return f"{rel.type} → {self.name_of(rel.target_id)[0]}"
        return f"{self.name_of(rel.source_id)[0]} → {rel.type}"

    def open_source(self, source: Any) -> None:
        """Open the window's document viewer at the source's passage."""
        from cks_desktop.ui.provenance.viewer import viewer_for

        session = self.editor.session_id
        doc_id = source.evidence.document_id
        if session is None or not doc_id:
            self.status.setText("This source is not a passage of a document.")
            return
        viewer = viewer_for(self.window(), self.store, self.spawn, self.navigate.emit)

        async def show() -> None:
            if await viewer.open_document(session, doc_id, source.evidence.start, source.evidence.end):
                self.viewerOpened.emit(viewer)

        self.spawn(show())

    async def mark_reviewed(self, source: Any, review: str) -> EditResult:
        """Record a person's check of a source (``set_evidence_review``, graph/evidence.py) as
        one change on the editor's undo stack; the evidence event refreshes the list."""
        session = self.editor.session_id
        if session is None:
            return EditResult(False, "Open a session first.")
        op = {"op": "set_evidence_review", "evidence_id": source.evidence.id, "review": review}
        try:
            applied = await asyncio.to_thread(self.store.apply, session, [op], "user")
        except StoreError as exc:
            result = EditResult(False, str(exc))
        else:
            change_id = applied.change.id if applied.change is not None else None
            if change_id:
                self.editor.record(change_id)
            result = EditResult(True, applied.summary, change_id)
        self._report(result)
        return result

    def set_types(self, types: list[str]) -> None:
        self.types = types

    def set_pinned(self, pinned: bool) -> None:
        self.pinned = pinned
        self.pin_button.setText("Unpin" if pinned else "Pin")
        self.pin_button.setToolTip("Let the layout move this object again" if pinned else
                                   "Keep this object where it is when the graph is laid out again")

    def _fill(self) -> None:
        obj = self.object
        if obj is None:
            return
        self._filling = True
        try:
            self.dot.setPixmap(swatch(self.colour_of(obj.type), 16).pixmap(16, 16))
            self.title.setText(obj.name)
            self.title.setToolTip(plain_tooltip(f"{obj.type} · {obj.id}"))
            if not self.name_edit.hasFocus():
                self.name_edit.setText(obj.name)
            self.type_edit.clear()
            self.type_edit.addItems(sorted(set(self.types) | {obj.type}, key=str.casefold))
            self.type_edit.setCurrentText(obj.type)
            aliases = aliases_of(obj.properties)
            self._fill_aliases(aliases or [])
            self.props.setRowCount(0)
            for key, value in obj.properties.items():
                if key == ALIASES and aliases is not None:
                    continue  # shown as chips above
                row = self.props.rowCount()
                self.props.insertRow(row)
                k = QTableWidgetItem(key)
                k.setData(ROLE_ID, key)
                v = QTableWidgetItem(value_text(value))
                v.setData(ROLE_ID, key)
                v.setToolTip(plain_tooltip(plain_words(value_text(value))))
                self.props.setItem(row, 0, k)
                self.props.setItem(row, 1, v)
            self._fit_properties()
            self._fill_relations(self.out_label, self.out_list, self.outgoing, outgoing=True)
            self._fill_relations(self.in_label, self.in_list, self.incoming, outgoing=False)
            self.sources.show_sources(self.sources_data)
            self.sources_label.setText(f"Sources ({self.sources.count()})")
            self.history_list.clear()
            for change in self.history:
                text = f"{_when(change.at)} · {change.origin} · {change.summary or 'change'}"
                if change.reverts:
                    text += " (undo)"
                item = QListWidgetItem(text)
                item.setToolTip(plain_tooltip(change.id))
                self.history_list.addItem(item)
            if not self.history:
                self.history_list.addItem("No recorded changes.")
            _fit_list(self.history_list, HISTORY_MAX)
        finally:
            self._filling = False

    def _fit_all(self) -> None:
        """The sheet's width changed: every table and list wraps its rows anew and takes their height."""
        self._fit_properties()
        _fit_list(self.out_list, RELATIONS_MAX)
        _fit_list(self.in_list, RELATIONS_MAX)
        _fit_list(self.history_list, HISTORY_MAX)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if event.type() == QEvent.Type.Resize and isinstance(event, QResizeEvent) \
                and event.size().width() != event.oldSize().width():
            self._fit_timer.start()  # a list's width changed: its rows wrap anew (on the next turn)
        return False

    def _fit_properties(self) -> None:
        """Rows as tall as their wrapped values at the width they have now, the table as tall as
        all of them: its frame, header and rows plus the grid's last line, so no row is cut and no
        inner scroll bar shows. Runs again whenever a column's width changes (the sheet resized)."""
        table = self.props
        table.resizeRowsToContents()
        rows = table.verticalHeader().length() if table.rowCount() else EMPTY_TABLE_ROWS
        chrome = table.horizontalHeader().height() + 2 * table.frameWidth()
        if table.horizontalScrollBar().maximum() > 0:  # a key wider than the sheet: its bar shows
            chrome += table.horizontalScrollBar().sizeHint().height()
        table.setFixedHeight(chrome + rows + 1)

    def _fill_aliases(self, aliases: list[str]) -> None:
        """The other names as chips, one each (data: plain text, long ones elided); the row hides without any."""
        while (item := self._aliases_flow.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.deleteLater()
        for alias in aliases:
            chip = plain_label(alias)
            chip.setProperty("cksRole", "chip")
            chip.setToolTip(plain_tooltip(alias))
            chip.setMaximumWidth(240)
            chip.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            self._aliases_flow.addWidget(chip)
        self._aliases_form.setRowVisible(self.aliases_box, bool(aliases))

    def _fill_relations(self, label: QLabel, lst: QListWidget, relations: list[Relation], *, outgoing: bool) -> None:
        """The relations under their heading; none at all is one quiet line instead of an empty box."""
        lst.clear()
        word = "Outgoing" if outgoing else "Incoming"
        _quiet(label, not relations)
        label.setText(word + f" relations ({len(relations)})" if relations else "No " + word.lower() + " relations")
        lst.setVisible(bool(relations))
        for rel in relations:
            other = rel.target_id if outgoing else rel.source_id
            name, type_ = self.name_of(other)
            text = f"{rel.type} → {name} ({type_})" if outgoing else f"{name} ({type_}) → {rel.type}"
            item = QListWidgetItem(text)
            item.setData(ROLE_ID, rel.id)
            item.setData(ROLE_ID + 1, other)
            item.setToolTip(plain_tooltip(f"{rel.id}\n{json.dumps(rel.properties, ensure_ascii=False)}"
                                          if rel.properties else rel.id))
            lst.addItem(item)
        _fit_list(lst, RELATIONS_MAX)

    # -- edits --------------------------------------------------------------------
    def _report(self, result: EditResult) -> None:
        self.status.setText("" if result.ok else result.message)
        self.message.emit(result.message)

    async def _edit(self, coro: Coroutine[Any, Any, EditResult]) -> EditResult:
        shown = self.object.id if self.object is not None else None
        result = await coro
        if result.ok and result.change_id and self.object is not None and self.object.id == shown:
            self.version = result.change_id  # our own edit is the newest version: the next builds on it
        if not result.ok and CHANGED_ELSEWHERE in result.message and shown is not None:
            # Someone else changed what was edited: read the fresh values, then say why.
            await self.load(shown)
            self._report(result)
            return result
        self._report(result)
        if not result.ok:
            self._fill()  # show the stored value again
        return result

    def _update(self, obj: Object, **changes: Any) -> Coroutine[Any, Any, EditResult]:
        """An update of the shown object, made on top of the version shown (graph/edit_base.py)."""
        return self.editor.update_object(obj.id, if_unchanged_since=self.version, **changes)

    def _name_done(self) -> None:
        obj = self.object
        text = self.name_edit.text().strip()
        if obj is None or self._filling or text == obj.name:
            return
        if not text:
            self.name_edit.setText(obj.name)
            return
        self.spawn(self._edit(self._update(obj, name=text)))

    def _type_done(self) -> None:
        obj = self.object
        text = self.type_edit.currentText().strip()
        if obj is None or self._filling or not text or text == obj.type:
            return
        self.spawn(self._edit(self._update(obj, type_name=text)))

    def _prop_changed(self, item: QTableWidgetItem) -> None:
        obj = self.object
        if obj is None or self._filling:
            return
        old_key = item.data(ROLE_ID)
        row = item.row()
        key_item, value_item = self.props.item(row, 0), self.props.item(row, 1)
        if key_item is None or value_item is None:
            return
        key = key_item.text().strip()
        value = parse_value(value_item.text())
        if not key:
            self._fill()
            return
        if key != old_key:
            coro = self._update(obj, set_properties={key: obj.properties.get(old_key)},
                                             remove_properties=[old_key])
        elif obj.properties.get(key) == value and value_text(value) == value_text(obj.properties.get(key)):
            return
        else:
            coro = self._update(obj, set_properties={key: value})
        self.spawn(self._edit(coro))

    def _add_property(self) -> None:
        obj = self.object
        key = self.new_key.text().strip()
        if obj is None or not key:
            self.new_key.setFocus()
            return
        value = parse_value(self.new_value.text())
        self.new_key.clear()
        self.new_value.clear()
        self.spawn(self._edit(self._update(obj, set_properties={key: value})))

    def _emit_for_object(self, signal: SignalInstance) -> None:
        if self.object is not None:
            signal.emit(self.object.id)

    def _remove_property(self) -> None:
        obj = self.object
        rows = sorted({i.row() for i in self.props.selectedItems()})
        keys = [item.data(ROLE_ID) for r in rows if (item := self.props.item(r, 0)) is not None]
        if obj is None or not keys:
            self.status.setText("Select a property to remove.")
            return
        self.spawn(self._edit(self._update(obj, remove_properties=keys)))

    def _relation_menu(self, lst: QListWidget, pos: Any) -> None:
        item = lst.itemAt(pos)
        if item is None or item.data(ROLE_ID) is None:
            return
        rel = next((r for r in self.incoming + self.outgoing if r.id == item.data(ROLE_ID)), None)
        if rel is None:
            return
        menu = QMenu(self)
        menu.addAction("Go to the other object", lambda: self.navigate.emit(item.data(ROLE_ID + 1)))
        menu.addAction("Change type…", lambda: self.spawn(self.retype_relation(rel)))
        menu.addAction("Edit properties…", lambda: self.spawn(self.edit_relation_properties(rel)))
        menu.addAction("Remove relation", lambda: self.spawn(self._edit(self.editor.remove_relation(rel.id))))
        menu.popup(lst.viewport().mapToGlobal(pos))

    async def retype_relation(self, rel: Relation) -> None:
        from cks_desktop.ui.dialogs import run_dialog

        dialog = plain_input_dialog(self, title="Relation type", label="New type for this relation:")
        dialog.setObjectName("relationRetypeDialog")
        dialog.setTextValue(rel.type)
        if await run_dialog(dialog) and dialog.textValue().strip() and dialog.textValue().strip() != rel.type:
            await self._edit(self.editor.replace_relation(rel.id, rel.source_id, rel.target_id,
                                                          dialog.textValue().strip(), rel.properties))
        dialog.deleteLater()

    async def edit_relation_properties(self, rel: Relation) -> None:
        """A relation's properties as one JSON object (relations rarely have more than a few)."""
        from cks_desktop.ui.dialogs import run_dialog

        dialog = plain_input_dialog(self, title=f"Properties of “{rel.type}”",
                                    label=f"Properties of “{rel.type}” as a JSON object:")
        dialog.setObjectName("relationPropertiesDialog")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput, True)
        dialog.setTextValue(json.dumps(rel.properties, ensure_ascii=False, indent=2))
        try:
            if not await run_dialog(dialog):
                return
            try:
                props = json.loads(dialog.textValue() or "{}")
            except ValueError as exc:
                self.status.setText(f"Those properties are not valid JSON: {exc}.")
                return
            if not isinstance(props, dict):
                self.status.setText("Relation properties must be a JSON object, like {\"since\": 2020}.")
                return
            if props != rel.properties:
                await self._edit(self.editor.replace_relation(rel.id, rel.source_id, rel.target_id, rel.type, props))
        finally:
            dialog.deleteLater()
