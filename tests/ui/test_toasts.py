"""Actions that change something say so where the person is looking: one small toast on the
window (never a window of its own, never taking focus), for Revert and an import, on the real
window and a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow

from cks_desktop.ui.chat.model import RowState, ToolItem
from cks_desktop.ui.graph_io.dialog import ImportPreviewDialog
from cks_desktop.ui.toast import Toast, show_toast
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_graph_io import _source_file, _start


def _toast(window: QMainWindow) -> Toast | None:
    return window.findChild(Toast, "toast")


def test_a_toast_shows_on_the_window_keeps_the_focus_and_hides_by_itself(qtbot) -> None:
    window = QMainWindow()
    field = QLineEdit()
    window.setCentralWidget(field)
    qtbot.addWidget(window)
    window.resize(800, 500)
    window.show()
    qtbot.waitExposed(window)
    field.setFocus()
    before = QApplication.focusWidget()
    toast = show_toast(field, "Reverted: Add object", "success", ms=200)
    assert toast.parentWidget() is window and not toast.isWindow()  # on the window, not a new one
    assert toast.isVisible() and toast.accessibleName() == "Reverted: Add object"
    assert toast.geometry().bottom() < window.height() and toast.x() > 0  # inside, bottom centre
    assert QApplication.focusWidget() is before  # the person's typing goes on where it was
    assert not toast.focusPolicy() & Qt.FocusPolicy.TabFocus
    again = show_toast(window, "Imported notes.json", ms=200)
    assert again is toast and toast.label.text() == "Imported notes.json"  # replaces, never stacks
    assert len(window.findChildren(Toast)) == 1
    qtbot.waitUntil(lambda: not toast.isVisible(), timeout=3000)


@pytest.mark.asyncio
async def test_revert_in_the_chat_says_so_in_a_toast(qtbot, home: Path) -> None:
    async with open_window(home) as window:
        store = window.services.store
        sid = window.sidebar.create_session()
        window.open_session(sid)
        made = store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ann"}], "model")
        assert made.change is not None
        item = ToolItem("call_1", "add_object", "Add object", "builtin", {"type": "Person", "name": "Ann"},
                        state=RowState.DONE, change_id=made.change.id, revertable=True)
        assert await wait(window.chat_panel.revert(item)) is True
        toast = _toast(window)
        assert toast is not None and toast.isVisible() and toast.label.text() == "Reverted: Add object"
        assert toast.tone == "success"


@pytest.mark.asyncio
async def test_an_import_says_what_it_brought_in_a_toast(qtbot, home: Path, tmp_path: Path) -> None:
    async with open_window(home) as window:
        await _start(window)
        path = _source_file(window.services.store, tmp_path)
        io = window.graph_io
        opened = signal_future(io.dialogOpened)
        task = window.tasks.spawn(io.import_file(path))
        (box,) = await wait(opened)
        assert isinstance(box, ImportPreviewDialog)
        done = signal_future(io.imported)
        box.import_button.click()
        await wait(done)
        await wait(task)
        toast = _toast(window)
        assert toast is not None and toast.isVisible() and toast.label.text().startswith(f"Imported {path.name}:")
