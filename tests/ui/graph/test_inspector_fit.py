"""The inspector reads like a document: the properties table is exactly as tall as its rows, each
row as tall as its wrapped value at the width the cell has, so no line is cut and the table never
scrolls inside the sheet (the sheet scrolls); narrowing the sheet fits them again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem, QTableWidget

from cks_desktop.graph.store import GraphStore
from cks_desktop.ui import theme
from cks_desktop.ui.graph.value_words import PlainValueDelegate
from tests.ui.graph.test_view import open_view

SUMMARY = ("Marie Curie was a physicist and chemist who conducted pioneering research on radioactivity. "
           "She was the first woman to win a Nobel Prize.\nShe remains the only person to win Nobel Prizes "
           "in two different sciences, and her notebooks are still kept in lead-lined boxes.")
PRIZES = ["Nobel Prize in Physics 1903 with Pierre Curie and Henri Becquerel",
          "Nobel Prize in Chemistry 1911 for the discovery of radium and polonium"]


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[theme.ThemeManager]:
    manager = theme.install(qapp, "light")  # the theme's paddings must fit too
    yield manager
    theme.uninstall()


async def until_true(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Waits (bounded) until ``predicate`` holds, re-checking as the loop runs Qt's posted layout
    requests (never ``processEvents`` inside a coroutine: STACK.md's qasync rule 2)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.005)


def _needed(table: QTableWidget, row: int, column: int) -> int:
    """The height the cell's text needs, measured independently of the delegate's own sum: the
    style's text rectangle at the column's width, less the text margins, word-wrapped."""
    index = table.model().index(row, column)
    delegate = table.itemDelegateForIndex(index)
    option = QStyleOptionViewItem()
    option.initFrom(table)
    delegate.initStyleOption(option, index)
    width = table.columnWidth(column) - (1 if table.showGrid() else 0)
    option.rect = QRect(0, 0, width, table.rowHeight(row))
    style = table.style()
    text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, table)
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, option, table) + 1
    bounds = option.fontMetrics.boundingRect(QRect(0, 0, text.width() - 2 * margin, 100_000),
                                             Qt.TextFlag.TextWordWrap, option.text.replace("\u2028", "\n"))
    return bounds.height()


def fits(table: QTableWidget) -> bool:
    delegate = table.itemDelegateForColumn(1)
    assert isinstance(delegate, PlainValueDelegate)
    for row in range(table.rowCount()):
        index = table.model().index(row, 1)
        option = QStyleOptionViewItem()
        option.initFrom(table)
        option.widget = table
        width = table.columnWidth(1) - (1 if table.showGrid() else 0)
        if table.rowHeight(row) < delegate.needed_height(option, index, width):
            return False
        if table.rowHeight(row) < _needed(table, row, 1) + 2:  # and its lines do not touch the grid
            return False
    chrome = table.horizontalHeader().height() + 2 * table.frameWidth()
    return (not table.verticalScrollBar().isVisible() and table.verticalScrollBar().maximum() == 0
            and table.height() >= chrome + table.verticalHeader().length())


@pytest.mark.asyncio
async def test_every_wrapped_line_of_a_property_shows(themed, store: GraphStore, registry, session) -> None:
    store.apply(session, [{"op": "add_object", "type": "Person", "name": "Marie Curie",
                           "properties": {"born": 1867, "summary": SUMMARY, "observations": PRIZES}}], "model")
    async with open_view(store, registry, session) as view:
        oid = store.resolve(session, "Marie Curie").id
        view.state.select(oid)
        await view.inspect(oid)
        table = view.inspector.props
        await until_true(lambda: table.isVisible() and table.width() > 200 and fits(table))
        line = table.fontMetrics().height()
        rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
        wide = table.rowHeight(rows["summary"])
        assert wide >= 3 * line  # the summary wraps over several lines, all of them in the row
        assert table.height() == (table.horizontalHeader().height() + 2 * table.frameWidth()
                                  + table.verticalHeader().length() + 1)

        before = table.columnWidth(1)
        view.resize(560, 700)  # the sheet narrows to its least width: the value column with it
        await until_true(lambda: table.columnWidth(1) < before - 40 and fits(table))
        assert table.rowHeight(rows["summary"]) > wide  # more lines at the narrower width, every one shown


@pytest.mark.asyncio
async def test_no_relations_is_one_quiet_line_not_an_empty_box(themed, store: GraphStore, registry, session) -> None:
    store.apply(session, [{"op": "add_object", "type": "Person", "name": "Marie Curie", "label": "$m"},
                          {"op": "add_object", "type": "City", "name": "Paris", "label": "$p"},
                          {"op": "add_object", "type": "Note", "name": "Loose note"},
                          {"op": "add_relation", "source": "$m", "target": "$p", "type": "worked_in"}], "model")
    async with open_view(store, registry, session) as view:
        ins = view.inspector

        async def show(name: str) -> None:
            oid = store.resolve(session, name).id
            view.state.select(oid)
            await view.inspect(oid)
            await until_true(lambda: ins.isVisible())

        await show("Marie Curie")  # relations out, none in
        assert ins.out_list.isVisible() and ins.out_label.text() == "Outgoing relations (1)"
        assert ins.out_label.font().bold() and ins.out_label.property("cksRole") == ""
        assert not ins.in_list.isVisible() and ins.in_label.text() == "No incoming relations"
        assert ins.in_label.isVisible() and not ins.in_label.font().bold()
        assert ins.in_label.property("cksRole") == "muted"  # quiet: the theme's muted colour

        await show("Paris")  # the other way round
        assert ins.in_list.isVisible() and ins.in_label.text() == "Incoming relations (1)"
        assert ins.in_label.font().bold()
        assert not ins.out_list.isVisible() and ins.out_label.text() == "No outgoing relations"

        await show("Loose note")
        assert not ins.out_list.isVisible() and not ins.in_list.isVisible()
        assert (ins.out_label.text(), ins.in_label.text()) == ("No outgoing relations", "No incoming relations")
        assert ins.out_list.count() == ins.in_list.count() == 0  # no "None" row pretending to be a relation


@pytest.mark.asyncio
async def test_the_sheet_never_hides_a_fitted_graph_even_when_it_takes_most_of_the_canvas(store, registry) -> None:
    from tests.ui.graph.test_fit_labels_and_empty_graph import frame_now, small_graph

    sid = small_graph(store, 6)
    async with open_view(store, registry, sid) as view:
        view.resize(540, 600)  # a 1024 px window's graph: the sheet is wider than half of it
        canvas = view.canvas
        await until_true(lambda: canvas.width() <= 540)
        canvas.fit()
        hub = view.model.node_id(0)
        view.state.select(hub)
        await view.inspect(hub)
        await until_true(lambda: view.inspector.isVisible() and view.stage.covered_right() > canvas.width() / 2)

        def seen_whole() -> bool:
            frame_now(view)
            clear = canvas.width() - view.stage.covered_right()
            vp, model = canvas.viewport, view.model
            nodes = all(0 < vp.to_screen(model.xs[i], model.ys[i])[0] < clear for i in model.nodes())
            front = canvas.frames.front
            assert front is not None
            labels = canvas.renderer.placed_labels  # frame coordinates: the widget's origin is (mx, my)
            return nodes and bool(labels) and all(r.right() - front.mx <= clear + 2 for r in labels)

        assert seen_whole()  # every node and every drawn name beside the sheet, none under it
        view.resize(600, 600)  # the graph's room changes: the fitted picture fits it again
        await until_true(lambda: canvas.width() > 560 and seen_whole())


def _list_fits(lst) -> bool:
    """Every row of ``lst`` as tall as its wrapped text at the width it has, and all rows inside the list."""
    fm, style = lst.fontMetrics(), lst.style()
    for i in range(lst.count()):
        rect = lst.visualItemRect(lst.item(i))
        option = QStyleOptionViewItem()
        option.initFrom(lst)
        option.rect = QRect(rect)
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, lst)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, option, lst) + 1
        needed = fm.boundingRect(QRect(0, 0, text.width() - 2 * margin, 10_000), Qt.TextFlag.TextWordWrap,
                                 lst.item(i).text())
        if needed.height() > rect.height() or not lst.viewport().rect().contains(rect):
            return False
    return lst.verticalScrollBar().maximum() == 0


@pytest.mark.asyncio
async def test_long_relations_wrap_whole_in_a_narrow_sheet(themed, store: GraphStore, registry, session) -> None:
    store.apply(session, [
        {"op": "add_object", "type": "Person", "name": "Marie Curie", "label": "$m"},
        {"op": "add_object", "type": "Institution", "label": "$s",
         "name": "Faculté des sciences de Paris, Sorbonne, laboratory of physics and chemistry"},
        {"op": "add_relation", "source": "$m", "target": "$s", "type": "taught_physics_and_chemistry_at"},
        {"op": "add_relation", "source": "$s", "target": "$m", "type": "employed_as_first_woman_professor"}], "model")
    async with open_view(store, registry, session) as view:
        view.resize(560, 700)
        oid = store.resolve(session, "Marie Curie").id
        view.state.select(oid)
        await view.inspect(oid)
        ins = view.inspector
        await until_true(lambda: ins.out_list.isVisible() and ins.in_list.isVisible()
                         and _list_fits(ins.out_list) and _list_fits(ins.in_list))
        line = ins.out_list.fontMetrics().height()
        assert ins.out_list.visualItemRect(ins.out_list.item(0)).height() >= 2 * line  # it did wrap
