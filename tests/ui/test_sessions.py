"""The sessions sidebar and its presenter, on a real store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.sessions.presenter import SessionsPresenter, TitleError
from cks_desktop.ui.sessions.sidebar import ID_ROLE, SessionsSidebar
from cks_desktop.ui.tasks import TaskTracker

from tests.ui.helpers import wait


@pytest.fixture
def store(tmp_path: Path):
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    yield store
    store.close()


def test_presenter_lists_filters_and_follows_the_store(store) -> None:
    presenter = SessionsPresenter(store)
    store.create_session("Research")
    presenter.refresh()
    changes: list[int] = []
    presenter.subscribe(lambda: changes.append(len(presenter.sessions)))
    unsubscribe = store.subscribe(presenter.on_store_event)
    try:
        other = store.create_session("Holiday plans")  # e.g. from a tool: the list follows the store
        assert [s.title for s in presenter.sessions][:1] == ["Holiday plans"]
        created = presenter.create()
        assert created.title == "New session" and presenter.unique_title() == "New session 2"
        presenter.set_filter("HOL")
        assert [s.title for s in presenter.visible()] == ["Holiday plans"]
        presenter.rename(other.id, "  Summer   trip ")
        assert presenter.title_of(other.id) == "Summer trip"
        with pytest.raises(TitleError):
            presenter.rename(other.id, "   ")
        presenter.delete(other.id)
        assert presenter.get(other.id) is None
        assert changes  # listeners heard every change
    finally:
        unsubscribe()


def test_delete_description_counts_the_graph(store) -> None:
    session = store.create_session("S")
    store.apply(session.id, [{"op": "add_object", "type": "P", "name": "A", "label": "$a"},
                             {"op": "add_object", "type": "P", "name": "B", "label": "$b"},
                             {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows"}], "user")
    presenter = SessionsPresenter(store)
    assert presenter.describe_for_delete(session.id).startswith("Its graph (2 objects, 1 relation)")


def _sidebar(qtbot, store) -> SessionsSidebar:
    presenter = SessionsPresenter(store)
    presenter.refresh()
    sidebar = SessionsSidebar(presenter, TaskTracker())
    qtbot.addWidget(sidebar)
    sidebar.show()
    return sidebar


def test_sidebar_creates_selects_renames_and_filters(qtbot, store) -> None:
    sidebar = _sidebar(qtbot, store)
    assert sidebar.list.objectName() == "sessionList"
    activated: list[str] = []
    sidebar.sessionActivated.connect(activated.append)
    first = sidebar.create_session()
    assert activated == [first] and sidebar.current_id == first
    editor = QApplication.focusWidget()  # create_session opened the in-place title editor
    if editor is not None:
        qtbot.keyClick(editor, Qt.Key.Key_Escape)
    item = sidebar.list.currentItem()
    item.setText("Renamed in place")
    assert store.get_session(first).title == "Renamed in place"
    second = sidebar.create_session()
    assert sidebar.list.count() == 2 and activated[-1] == second
    qtbot.keyClicks(sidebar.filter_edit, "renamed")
    assert [sidebar.list.item(i).data(ID_ROLE) for i in range(sidebar.list.count())] == [first]
    sidebar.select(second)  # selecting a hidden session clears the filter
    assert sidebar.filter_edit.text() == "" and sidebar.current_id == second


@pytest.mark.asyncio
@pytest.mark.parametrize("accept", [False, True])
async def test_delete_asks_first(qtbot, store, accept: bool) -> None:
    sidebar = _sidebar(qtbot, store)
    keep = sidebar.create_session()
    doomed = sidebar.create_session()
    task = asyncio.ensure_future(sidebar.delete_session(doomed))
    await asyncio.sleep(0)
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert box.objectName() == "confirmDialog" and "cannot be undone" in box.informativeText()
    assert box.defaultButton().objectName() == "confirmCancelButton"  # the safe answer is the default
    button = box.findChild(type(box.defaultButton()), "confirmAcceptButton" if accept else "confirmCancelButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert await wait(task) is accept
    ids = [s.id for s in store.list_sessions()]
    assert (doomed in ids) is not accept and keep in ids
    if accept:
        assert sidebar.current_id == keep  # the next session becomes current


def test_a_session_deleted_elsewhere_moves_the_sidebar_on(qtbot, store) -> None:
    sidebar = _sidebar(qtbot, store)
    unsubscribe = store.subscribe(sidebar.presenter.on_store_event)
    try:
        keep = sidebar.create_session()
        doomed = sidebar.create_session()
        activated: list[str] = []
        sidebar.sessionActivated.connect(activated.append)
        store.delete_session(doomed)  # e.g. `cks-desktop sessions delete` while the window is open
        assert sidebar.current_id == keep and activated == [keep]
        store.delete_session(keep)
        assert sidebar.current_id == "" and activated[-1] == ""
    finally:
        unsubscribe()


@pytest.mark.asyncio
@pytest.mark.parametrize("answer", ["cancel", "last1"])
async def test_compact_history_says_what_is_dropped_first(qtbot, store, answer: str) -> None:
    sidebar = _sidebar(qtbot, store)
    session_id = sidebar.create_session()
    for i in range(3):
        store.apply(session_id, [{"op": "add_object", "type": "T", "name": f"o{i}"}], "user")
    task = asyncio.ensure_future(sidebar.compact_history(session_id))
    box = None

    def shown() -> bool:
        nonlocal box
        box = next((w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.isVisible() and w.objectName() == "compactDialog"), None)
        return box is not None

    async def until_shown() -> None:  # the previews run in a worker thread first
        while not shown():
            await asyncio.sleep(0.01)

    await wait(until_shown(), 10)
    assert "no longer be reverted" in box.informativeText()
    assert box.defaultButton().objectName() == "compactDialog_cancel"  # the safe answer is the default
    assert "drops 2" in box.findChild(type(box.defaultButton()), "compactDialog_last1").text()
    qtbot.mouseClick(box.findChild(type(box.defaultButton()), f"compactDialog_{answer}"), Qt.MouseButton.LeftButton)
    result = await wait(task)
    kept = len(store.list_changes(session_id, with_ops=False))
    assert (result is None, kept) == ((True, 3) if answer == "cancel" else (False, 1))
    assert len(store.all_objects(session_id)) == 3  # the graph is unchanged
