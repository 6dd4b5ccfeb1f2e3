"""The window's layout serves the graph: widths, reachability, focus,
per-session status messages and the sessions list's activity marks. A real window on a
throwaway data folder; the chat answers through the fake Anthropic server (real SDK, real HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidgetAction

from cks_desktop.ui.sessions.activity import Activity
from cks_desktop.ui.sessions.rail import ACTIVITY_ROLE, RAIL_WIDTH

from tests.fakes.script import call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.graph.conftest import sample_ops
from tests.ui.helpers import signal_future, wait
from tests.ui.test_window import _send


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Process Qt's posted events (resizes, layout requests) until ``predicate()`` holds, bounded."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        QApplication.processEvents()
        if predicate():
            return
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


async def resized(window, width: int, height: int) -> None:
    window.resize(width, height)
    await until(lambda: window.width() == width and window.height() == height)
    await until(lambda: window.graph_view.toolbar.layout().geometry().width() == window.graph_view.toolbar.width())
    QApplication.processEvents()


def _extension_actions(toolbar: QToolBar) -> list[QAction]:
    button = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    if button is None or not button.isVisible() or button.menu() is None:
        return []
    return list(button.menu().actions())


def _reachable_on_toolbar(toolbar: QToolBar) -> set[QAction]:
    """Actions a person can reach from the bar: shown as a button, or listed in its » menu, and
    (for an action with a menu) every action of that menu."""
    reachable: set[QAction] = set()
    overflow = _extension_actions(toolbar)
    for action in toolbar.actions():
        widget = toolbar.widgetForAction(action)
        if (widget is not None and widget.isVisible()) or action in overflow:
            reachable.add(action)
            if action.menu() is not None:
                reachable.update(action.menu().actions())
    return reachable


def _menu_actions(menu: QMenu) -> set[QAction]:
    out: set[QAction] = set()
    for action in menu.actions():
        out.add(action)
        if action.menu() is not None:
            out |= _menu_actions(action.menu())
    return out


@pytest.mark.asyncio
@pytest.mark.parametrize("width", [1024, 1280, 1440])
async def test_every_graph_action_is_reachable_at_every_width(qtbot, home, width: int) -> None:
    async with open_window(home) as window:
        await resized(window, width, 700 if width == 1024 else 800)
        view = window.graph_view
        toolbar = view.toolbar
        # the class of the bug: a widget on a tool bar is left out of its » menu
        assert [a.objectName() for a in toolbar.actions() if isinstance(a, QWidgetAction)] == []
        wanted = {a for a in view.graph_actions() if a is not None}
        wanted |= {a for a in view.more_menu.actions() if not a.isSeparator()}
        wanted |= set(view.hops.menu.actions())
        unreachable = sorted(a.objectName() for a in wanted - _reachable_on_toolbar(toolbar))
        assert unreachable == [], f"at {width} px"
        in_menu = _menu_actions(window.graph_menu)
        assert sorted(a.objectName() for a in wanted - in_menu - {view.more_action}) == []
        for action, keys in ((view.fit_action, "F"), (view.undo_action, QKeySequence.StandardKey.Undo),
                             (view.delete_action, "Del")):
            assert action.shortcut() == QKeySequence(keys)  # and so the Graph menu shows it


@pytest.mark.asyncio
async def test_the_overflow_menu_offers_the_focus_reach_and_the_more_menu(qtbot, home) -> None:
    from cks_desktop.ui.graph.layout import LayoutRunner
    from cks_desktop.ui.graph.view import GraphView

    async with open_window(home) as window:
        services = window.services
        view = GraphView(services.store, services.registry, runner=LayoutRunner(use_process=False))
        view.resize(380, 500)  # narrower than any window gives it: most of the bar folds away
        view.show()
        try:
            await until(lambda: view.more_action in _extension_actions(view.toolbar))
            overflow = _extension_actions(view.toolbar)
            assert view.hops.action in overflow and view.hops.action.menu() is view.hops.menu
            assert view.more_action.menu() is view.more_menu
            view.hops.choices[2].trigger()  # a choice in the reach menu
            assert view.hops.value() == 2 and "2 hops" in view.hops.action.text()
        finally:
            await view.aclose()
            view.deleteLater()


@pytest.mark.asyncio
async def test_the_graph_gets_half_the_width_and_the_inspector_does_not_squeeze_it(qtbot, home) -> None:
    async with open_window(home) as window:  # a first start: no saved layout
        await resized(window, 1280, 800)
        view = window.graph_view
        session = window.current_session
        window.services.store.apply(session, sample_ops(20), "model")
        await until(lambda: view.model.node_count == 20)
        assert view.canvas.width() >= 0.5 * window.width()
        await view.inspect(view.model.node_id(0))
        await until(lambda: view.inspector.isVisible())
        assert view.canvas.width() >= 0.5 * window.width()  # the sheet floats over the canvas
        assert view.stage.covered_right() <= 0.5 * view.canvas.width()
        assert view.inspector.width() >= view.inspector.minimumSizeHint().width()  # nothing clipped
        assert view.legend.height() <= 0.5 * view.stage.height()
        view.minimap.show()
        view.minimap.place()
        assert view.minimap.width() <= 0.25 * view.canvas.width() + 1
        assert view.minimap.geometry().right() <= view.canvas.width() - view.stage.covered_right()

        await resized(window, 1024, 700)  # every panel still usable
        assert window.sessions_dock.width() >= 150 and window.chat_dock.width() >= 300
        assert view.canvas.width() >= 420
        assert view.inspector.width() >= view.inspector.minimumSizeHint().width()


@pytest.mark.asyncio
async def test_a_saved_layout_that_squeezes_the_graph_is_sanitised(qtbot, home) -> None:
    from cks_desktop.ui import window_layout

    async with open_window(home) as window:
        # (the test screen is 800 px wide: a restored window is moved and sized to fit on it)
        window.resizeDocks([window.chat_dock, window.sessions_dock], [760, 300], Qt.Orientation.Horizontal)
        await until(lambda: window.chat_dock.width() > 700)
        assert window.graph_view.canvas.width() < 0.4 * window.width()  # what an old version could save
    async with open_window(home) as window:
        split = window_layout.dock_widths(window.width())
        await until(lambda: window.chat_dock.width() <= split.chat + 4)
        assert window.sessions_dock.width() <= split.sessions + 4
        assert window.graph_view.canvas.width() >= 0.4 * window.width()


@pytest.mark.asyncio
async def test_the_sessions_list_folds_to_a_rail_and_back(qtbot, home) -> None:
    async with open_window(home) as window:
        await resized(window, 1280, 800)
        before = window.sessions_dock.width()
        assert window.fold_sessions_action in window.menuBar().actions()[2].menu().actions()  # View
        window.sidebar.fold_button.click()
        await until(lambda: window.sessions_dock.width() <= RAIL_WIDTH + 8)
        assert window.sidebar.folded and window.sidebar.rail.isVisible()
        assert not window.sidebar.list.isVisible()
        window.fold_sessions_action.trigger()  # the View menu's action unfolds it again
        await until(lambda: window.sessions_dock.width() >= before - 8)
        assert not window.sidebar.folded and window.sidebar.list.isVisible()
        window.sidebar.set_folded(True)
    async with open_window(home) as window:  # folded it stays, after a restart too
        assert window.sidebar.folded
        await until(lambda: window.sessions_dock.width() <= RAIL_WIDTH + 8)


@pytest.mark.asyncio
async def test_focus_is_in_the_chat_input_at_start_and_after_a_switch(qtbot, home) -> None:
    async with open_window(home) as window:
        composer_input = window.chat_panel.composer.input
        await until(lambda: window.focusWidget() is composer_input)
        other = window.sessions.create("Second").id
        first = window.current_session
        item = window.sidebar._item_for(other)
        rect = window.sidebar.list.visualItemRect(item)
        qtbot.mouseClick(window.sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        await until(lambda: window.current_session == other)
        assert window.focusWidget() is composer_input
        window.graph_view.canvas.setFocus()
        window.sidebar.select(first)  # e.g. from a link or the File menu
        assert window.focusWidget() is composer_input


@pytest.mark.asyncio
async def test_status_messages_belong_to_their_session(qtbot, home) -> None:
    async with open_window(home) as window:
        view = window.graph_view
        first = window.current_session
        second = window.sessions.create("Second").id
        view.show_path()  # nothing selected: the view says what to do, in this session
        said = "Select exactly two objects"
        assert said in view.status.text()
        window.sidebar.select(second)
        assert said not in view.status.text() and view.message == ""

        release = asyncio.Event()

        async def slow_edit() -> None:  # an edit started here that finishes after a switch
            await release.wait()
            view._say("Added Person “Ada”.")

        task = view.spawn(slow_edit())
        window.sidebar.select(first)
        assert said in view.status.text()  # the first session's own message is back
        release.set()
        await wait(task)
        assert "Ada" not in view.status.text()  # it belongs to the second session
        window.sidebar.select(second)
        assert "Ada" in view.status.text()


@pytest.mark.asyncio
async def test_a_chat_answering_in_the_background_is_marked_then_unread(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Ada"}, text="Adding Ada."),
                         text_turn("Ada is in the graph."))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        sidebar = window.sidebar
        first = window.current_session
        second = window.sessions.create("Elsewhere").id
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Add Ada")
        (dialog,) = await wait(opened)  # the turn is under way, waiting for the person
        assert sidebar.mark_of(first) is Activity.IDLE  # the session on screen carries no mark
        sidebar.select(second)  # switch away mid-turn
        assert window.current_session == second
        assert sidebar.mark_of(first) is Activity.RUNNING
        assert sidebar._item_for(first).data(ACTIVITY_ROLE) == "running"
        assert "Answering in the background" in sidebar._item_for(first).toolTip()
        sidebar.set_folded(True)  # folded, the rail still tells
        assert sidebar.rail.mark.isVisibleTo(sidebar.rail) and "Answering" in sidebar.rail.mark.toolTip()
        sidebar.set_folded(False)
        qtbot.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
        await wait(task)
        await until(lambda: sidebar.mark_of(first) is Activity.UNREAD)
        item = sidebar._item_for(first)
        assert item.data(ACTIVITY_ROLE) == "unread" and item.font().bold()
        assert sidebar.mark_of(second) is Activity.IDLE
        sidebar.select(first)  # opening it clears the mark
        assert sidebar.mark_of(first) is Activity.IDLE
        assert sidebar._item_for(first).data(ACTIVITY_ROLE) == "" and not sidebar._item_for(first).font().bold()
