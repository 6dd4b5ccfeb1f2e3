"""The inspector's Value column reads as words: a list is one line per item and an object one line
per key, not JSON; editing the cell still shows (and parses back) the exact JSON, so nothing about
the stored value changes by being shown."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QLineEdit, QStyleOptionViewItem

from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.graph.value_words import plain_words
from tests.ui.graph.test_view import open_view


def test_plain_words_of_each_kind_of_value() -> None:
    assert plain_words('["Nobel Prize in Physics 1903", "Nobel Prize in Chemistry 1911"]') == (
        "• Nobel Prize in Physics 1903\n• Nobel Prize in Chemistry 1911")
    assert plain_words('["only one"]') == "only one"
    assert plain_words('{"city": "Paris", "year": 1891, "married": true, "left": null}') == (
        "city: Paris\nyear: 1891\nmarried: yes\nleft: —")
    assert plain_words("[]") == "(none)"
    assert plain_words("[not json") == "[not json"  # text that only looks like JSON stays as typed
    assert plain_words("1867") == "1867" and plain_words("physics, chemistry") == "physics, chemistry"


def _shown(view, index: QModelIndex) -> str:
    delegate = view.itemDelegateForIndex(index)
    option = QStyleOptionViewItem()
    delegate.initStyleOption(option, index)
    return option.text


@pytest.mark.asyncio
async def test_a_list_property_shows_as_lines_and_edits_as_json(store: GraphStore, registry, session, qtbot) -> None:
    prizes = ["Nobel Prize in Physics 1903", "Nobel Prize in Chemistry 1911"]
    store.apply(session, [{"op": "add_object", "type": "Person", "name": "Marie Curie",
                           "properties": {"observations": prizes, "born": 1867}}], "model")
    async with open_view(store, registry, session) as view:
        oid = store.resolve(session, "Marie Curie").id
        view.state.select(oid)
        await view.inspect(oid)
        table = view.inspector.props
        rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
        index = table.model().index(rows["observations"], 1)
        shown = _shown(table, index)
        assert shown == "• Nobel Prize in Physics 1903\u2028• Nobel Prize in Chemistry 1911"  # two drawn lines
        assert "[" not in shown and '"' not in shown
        assert table.rowHeight(rows["observations"]) >= 2 * table.fontMetrics().height()  # both lines show
        assert _shown(table, table.model().index(rows["born"], 1)) == "1867"
        table.setCurrentIndex(index)
        table.edit(index)
        editor = table.findChild(QLineEdit)
        assert editor is not None and editor.text().startswith('["Nobel Prize')  # the exact value to edit
        table.closePersistentEditor(table.item(rows["observations"], 1))
        assert store.get_object(session, oid).properties["observations"] == prizes
        assert index.data(Qt.ItemDataRole.EditRole).startswith("[")
