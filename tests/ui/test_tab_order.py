"""Tab reaches every region in reading order — sessions, graph toolbar, search, canvas, inspector,
chat, composer — in the normal window, on an empty graph and while a session is being renamed;
Shift+Tab walks back the same way."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from tests.ui.conftest import open_window
from tests.ui.helpers import wait

REGIONS = ("sessions", "toolbar", "search", "canvas", "inspector", "chat", "other")


def _region(window, widget: QWidget) -> str:
    graph = window.graph_view
    for name, holder in (("toolbar", graph.toolbar), ("search", graph.search), ("inspector", graph.inspector),
                         ("canvas", graph), ("sessions", window.sidebar), ("chat", window.chat_panel)):
        if holder is widget or holder.isAncestorOf(widget):
            return name
    return "other"


def _walk(window, start: QWidget, key: Qt.Key = Qt.Key.Key_Tab) -> list[QWidget]:
    """The widgets Tab stops on from ``start`` once round the window."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    QApplication.processEvents()
    seen: list[QWidget] = []
    for _ in range(200):
        focused = QApplication.focusWidget()
        assert focused is not None, f"the focus disappeared after {[w.objectName() for w in seen]}"
        if seen and focused is seen[0]:
            return seen
        seen.append(focused)
        QTest.keyClick(focused, key)
        QApplication.processEvents()
    raise AssertionError(f"Tab never came back: {[w.objectName() for w in seen]}")


def _regions_in_order(window, stops: list[QWidget]) -> list[str]:
    names: list[str] = []
    for widget in stops:
        name = _region(window, widget)
        if not names or names[-1] != name:
            names.append(name)
    return names


def _assert_reading_order(window, stops: list[QWidget], expected: list[str]) -> None:
    regions = _regions_in_order(window, stops)
    assert regions == expected, [(w.objectName(), _region(window, w)) for w in stops]


@pytest.mark.asyncio
async def test_tab_walks_the_regions_in_reading_order(qtbot, home) -> None:
    async with open_window(home) as window:
        window.activateWindow()
        sid = window.sidebar.create_session()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)  # leave the new session's title editor
        store = window.services.store
        store.apply(window.sidebar.current_id or sid, [
            {"op": "add_object", "type": "Person", "name": "Ada"},
            {"op": "add_object", "type": "Person", "name": "Charles"}], "user")
        graph = window.graph_view
        session_list = window.sidebar.filter_edit  # the first stop: the sessions filter
        # the empty graph first (the new session), then the same with objects and the inspector open
        stops = _walk(window, session_list)
        toolbar = [w for w in stops if _region(window, w) == "toolbar"]
        assert len(toolbar) >= 3, [(type(w).__name__, w.objectName(), _region(window, w)) for w in stops]  # its buttons are reachable
        assert graph.search.isAncestorOf(stops[stops.index(toolbar[-1]) + 1]) or \
            stops[stops.index(toolbar[-1]) + 1] is graph.search
        order = _regions_in_order(window, stops)
        assert order[:4] == ["sessions", "toolbar", "search", "canvas"], order
        assert order.index("chat") > order.index("canvas")
        back = _walk(window, session_list, Qt.Key.Key_Backtab)
        assert back[1:] == list(reversed(stops[1:]))  # Shift+Tab walks the same stops backwards

        qtbot.waitUntil(lambda: len(graph.model.index) == 2)
        ada = store.resolve(window.sidebar.current_id, "Ada").id
        graph.state.select(ada)
        await graph.inspect(ada)
        stops = _walk(window, session_list)
        _assert_reading_order(window, stops, ["sessions", "toolbar", "search", "canvas", "inspector", "chat",
                                              "other"])
        for widget in stops:
            assert widget.hasFocus() is False or widget is QApplication.focusWidget()


@pytest.mark.asyncio
async def test_tab_from_the_rename_editor_keeps_the_name_and_goes_on(qtbot, home) -> None:
    async with open_window(home) as window:
        window.activateWindow()
        sid = window.sidebar.create_session()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
        editor = QApplication.focusWidget()  # create_session opened the in-place title editor
        assert window.sidebar.list.isAncestorOf(editor)
        editor.selectAll()
        QTest.keyClicks(editor, "Renamed by Tab")
        QTest.keyClick(editor, Qt.Key.Key_Tab)  # Tab keeps the typed title and leaves the editor
        qtbot.waitUntil(lambda: window.services.store.get_session(sid).title == "Renamed by Tab")
        focused = QApplication.focusWidget()
        assert focused is not None and focused is not editor and focused.isVisible()
        _walk(window, focused)  # the focus goes round from where the title editor left it
        stops = _walk(window, window.sidebar.filter_edit)  # the new session's graph is empty
        assert any(window.graph_view.empty_state.isAncestorOf(w) for w in stops)  # its buttons are stops
        _assert_reading_order(window, stops, ["sessions", "toolbar", "search", "canvas", "chat", "other"])


@pytest.mark.asyncio
async def test_the_canvas_shows_a_focus_ring_when_tab_reaches_it(qtbot, home) -> None:
    from PySide6.QtGui import QColor

    async with open_window(home) as window:
        window.activateWindow()
        canvas = window.graph_view.canvas
        window.sidebar.filter_edit.setFocus()
        qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)

        def edge_colour() -> QColor:
            return canvas.grab().toImage().pixelColor(canvas.width() // 2, 1)

        without = edge_colour()
        for _ in range(40):  # Tab until the canvas has the focus
            if canvas.hasFocus():
                break
            QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        assert canvas.hasFocus()
        ring = edge_colour()
        assert ring != without and ring.name() == canvas.style_.selection.name()
