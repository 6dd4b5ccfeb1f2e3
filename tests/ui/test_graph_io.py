"""File → Import graph… / Export graph… and Edit → Undo / Redo in the real window.

The dialogs are the real ones (opened with ``open()``); the test answers them when
``GraphIO.dialogOpened`` says they are up. Waits are bounded and follow signals.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMenu

from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.graph_io.dialog import ImportPreviewDialog, ProblemsDialog

from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait


async def until(signal: Any, predicate: Callable[[], bool], timeout: float = 15.0, also: Any = None) -> None:
    """Wait (bounded) until ``predicate()`` holds, re-checking whenever ``signal`` (or ``also``) fires."""
    if predicate():
        return
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def check(*_: Any) -> None:
        if not future.done() and predicate():
            future.set_result(None)

    signals = [signal] + ([] if also is None else list(also))
    for sig in signals:
        sig.connect(check)
    try:
        await asyncio.wait_for(future, timeout)
    finally:
        for sig in signals:
            sig.disconnect(check)


def _type_file(dialog: QFileDialog, path: Path) -> None:
    """Type the path into the dialog's file name field, as a person would (``selectFile`` leaves a
    focused field alone)."""
    field = dialog.findChild(QLineEdit, "fileNameEdit")
    assert field is not None
    field.setText(str(path))


def _menu(window: Any, title: str) -> QMenu:
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == title:
            return action.menu()
    raise AssertionError(title)


def _source_file(store: GraphStore, tmp_path: Path) -> Path:
    src = store.create_session("elsewhere")
    store.apply(src.id, [
        {"op": "add_object", "type": "Person", "name": "Ada", "label": "$a", "properties": {"born": 1815}},
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$b"},
        {"op": "add_object", "type": "City", "name": "Paris", "label": "$p"},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows"},
        {"op": "add_relation", "source": "$b", "target": "$p", "type": "lives_in"},
    ], "setup")
    path = tmp_path / "people.json"
    path.write_text(store.export(src.id, "json"), encoding="utf-8")
    return path


async def _start(window: Any) -> str:
    window.sidebar.create_session()
    sid = window.current_session
    window.services.store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada",
                                       "properties": {"city": "London"}}], "user")
    await until(window.graph_view.changed, lambda: "Ada" in window.graph_view.object_names())
    return sid


@pytest.mark.asyncio
@pytest.mark.parametrize("choice", ["merge", "rename", "skip"])
async def test_import_shows_a_preview_and_the_conflict_choice_is_applied(qtbot, home, tmp_path, choice) -> None:
    async with open_window(home) as window:
        sid = await _start(window)
        store = window.services.store
        path = _source_file(store, tmp_path)
        io = window.graph_io
        assert io.import_action in _menu(window, "File").actions()
        opened = signal_future(io.dialogOpened)
        io.import_action.trigger()
        (files,) = await wait(opened)
        assert isinstance(files, QFileDialog) and files.isModal()
        opened = signal_future(io.dialogOpened)
        _type_file(files, path)
        files.accept()
        (box,) = await wait(opened)
        assert isinstance(box, ImportPreviewDialog)
        assert box.counts_label.text() == "The file holds 3 objects and 2 relations, 2 object types."
        assert "City (1) — new" in box.types_label.text() and "Person (2)" in box.types_label.text()
        assert box.sample_list.count() == 3
        assert box.conflicts_list is not None and box.conflicts_list.count() == 1
        assert box.conflicts_list.item(0).text().startswith("Ada  ·  Person  —  already in this session")
        assert "is already in the session" in box.conflicts_list.item(0).toolTip()
        assert "born" in box.conflicts_list.item(0).text()
        assert box.choice() == "skip"  # the default changes nothing already there
        box.choose(choice)
        done = signal_future(io.imported)
        box.import_button.click()
        (result,) = await wait(done)
        names = {"merge": {"Ada", "Bob", "Paris"}, "skip": {"Ada", "Bob", "Paris"},
                 "rename": {"Ada", "Ada (2)", "Bob", "Paris"}}[choice]
        await until(window.graph_view.changed, lambda: set(window.graph_view.object_names()) == names)
        ada = store.resolve(sid, "Ada")
        assert ada.properties == ({"city": "London", "born": 1815} if choice == "merge" else {"city": "London"})
        assert window.graph_view.undo_action.isEnabled()  # the import joined the undo stack
        # Edit → Undo takes the whole import back
        assert result.change is not None
        window.graph_view.undo_action.trigger()
        await until(window.graph_view.changed, lambda: set(window.graph_view.object_names()) == {"Ada"})


@pytest.mark.asyncio
async def test_a_refused_import_lists_every_problem(qtbot, home, tmp_path) -> None:
    async with open_window(home) as window:
        await _start(window)
        rels = [{"type": "r", "source_id": f"ghost {i}", "target_id": f"nobody {i}"} for i in range(30)]
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({"format": "cks-graph", "version": 1, "objects": [], "relations": rels}))
        io = window.graph_io
        opened = signal_future(io.dialogOpened)
        task = window.tasks.spawn(io.import_file(path))
        (box,) = await wait(opened)
        # the preview is fine (parsing succeeds); the store refuses at import time
        assert isinstance(box, ImportPreviewDialog) and box.conflicts_list is None
        opened = signal_future(io.dialogOpened)
        box.import_button.click()
        (problems,) = await wait(opened)
        assert isinstance(problems, ProblemsDialog) and problems.problems_list.count() == 30
        problems.reject()
        assert await wait(task) is None


@pytest.mark.asyncio
async def test_every_export_format_writes_a_file_that_reads_back(qtbot, home, tmp_path) -> None:
    async with open_window(home) as window:
        sid = await _start(window)
        store = window.services.store
        store.apply(sid, [{"op": "add_object", "type": "City", "name": "Paris", "label": "$p"},
                          {"op": "add_relation", "source": "Ada", "target": "$p", "type": "lives_in"}], "user")
        await until(window.graph_view.changed, lambda: "Paris" in window.graph_view.object_names())
        io = window.graph_io
        # once through the real file dialog, with its format filter
        opened = signal_future(io.dialogOpened)
        io.export_action.trigger()
        (files,) = await wait(opened)
        files.selectNameFilter("GraphML (*.graphml)")
        _type_file(files, tmp_path / "via-dialog.graphml")
        done = signal_future(io.exported)
        files.accept()
        (written,) = await wait(done)
        assert written == tmp_path / "via-dialog.graphml"
        outputs: dict[str, Path] = {}
        for fmt, suffix in (("json", "json"), ("graphml", "graphml"), ("markdown", "md"), ("mermaid", "mmd"),
                            ("memory-jsonl", "jsonl"), ("png", "png"), ("svg", "svg")):
            outputs[fmt] = await wait(io.export_file(tmp_path / f"out.{suffix}", fmt))
        assert outputs["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in outputs["svg"].read_bytes()
        assert "Paris" in outputs["markdown"].read_text() and "lives_in" in outputs["mermaid"].read_text()
        for fmt in ("json", "graphml", "memory-jsonl"):
            fresh = store.create_session(f"again {fmt}")
            store.import_data(fresh.id, fmt, outputs[fmt].read_text(), "import", on_conflict="error")
            assert store.counts(fresh.id) == {"objects": 2, "relations": 1}
        fresh = store.create_session("again graphml via dialog")
        store.import_data(fresh.id, "graphml", written.read_text(), "import")
        assert store.counts(fresh.id) == {"objects": 2, "relations": 1}


@pytest.mark.asyncio
async def test_edit_menu_undo_and_redo_follow_the_stack(qtbot, home) -> None:
    async with open_window(home) as window:
        window.sidebar.create_session()
        view = window.graph_view
        edit = _menu(window, "Edit").actions()
        undo, redo = view.undo_action, view.redo_action
        assert undo in edit and redo in edit
        assert undo.shortcut().toString() == "Ctrl+Z" and redo.shortcut().toString() == "Ctrl+Shift+Z"
        assert not undo.isEnabled() and not redo.isEnabled()
        assert not undo.icon().isNull() and not redo.icon().isNull()
        result = await wait(view.editor.add_object("Person", "Ada"))
        assert result.ok
        await until(view.changed, also=(undo.changed, redo.changed), predicate=lambda: "Ada" in view.object_names() and undo.isEnabled())
        assert not redo.isEnabled()
        undo.trigger()
        await until(view.changed, also=(undo.changed, redo.changed), predicate=lambda: "Ada" not in view.object_names() and redo.isEnabled())
        assert not undo.isEnabled()
        redo.trigger()
        await until(view.changed, also=(undo.changed, redo.changed), predicate=lambda: "Ada" in view.object_names() and undo.isEnabled())
        assert not redo.isEnabled()
        undo.trigger()  # the redone edit can be undone again
        await until(view.changed, also=(undo.changed, redo.changed), predicate=lambda: "Ada" not in view.object_names() and redo.isEnabled())
        await wait(view.editor.add_object("Person", "Bob"))  # a new edit empties the redo stack
        await until(view.changed, also=(undo.changed, redo.changed), predicate=lambda: "Bob" in view.object_names() and not redo.isEnabled())
