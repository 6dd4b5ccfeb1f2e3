"""The inspector's edits are made on top of the version it showed (graph/edit_base.py), on both
backends: another member (a second store on the same database, as another app would be)
changes the object meanwhile; an edit of the same field is refused with the sentence and the
inspector shows the fresh values; an edit of another field applies on top."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401
from tests.ui.graph.conftest import sample_ops, until
from tests.ui.graph.test_view import open_view


@pytest.fixture(params=("sqlite", "postgresql"))
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[GraphStore, GraphStore]]:
    """The window's store and another member's, on the same database."""
    if request.param == "sqlite":
        mine, theirs = GraphStore.open(tmp_path / "cks.sqlite3"), GraphStore.open(tmp_path / "cks.sqlite3")
    else:
        from cks_desktop.graph.pg.store import PgGraphStore

        url = request.getfixturevalue("pg_url")
        mine, theirs = PgGraphStore.connect(url), PgGraphStore.connect(url, migrate=False)
    try:
        yield mine, theirs
    finally:
        theirs.close()
        mine.close()


@pytest.mark.asyncio
async def test_an_edit_of_a_field_someone_else_changed_is_refused_and_the_inspector_reloads(
        two_stores: tuple[GraphStore, GraphStore]) -> None:
    from cks_desktop.tools.builtin import build_registry

    store, other = two_stores
    session = store.create_session("concurrent inspector").id
    store.apply(session, sample_ops(12), "model")
    async with open_view(store, build_registry(store), session) as view:
        oid = store.resolve(session, "Person 5").id
        view.state.select(oid)
        await view.inspect(oid)
        ins = view.inspector
        assert ins.name_edit.text() == "Person 5" and ins.version is not None
        other.apply(session, [{"op": "update_object", "ref": oid, "name": "Person Cinq"}], "bob")

        ins.name_edit.setText("Person Five")  # the person edits the name they saw
        ins.name_edit.editingFinished.emit()
        await until(ins.loaded, lambda: ins.name_edit.text() == "Person Cinq")
        assert store.get_object(session, oid).name == "Person Cinq"  # nothing overwritten
        await until(ins.loaded, lambda: "changed by someone else" in ins.status.text())
        assert "its name was changed by bob" in ins.status.text(), ins.status.text()

        other.apply(session, [{"op": "update_object", "ref": oid, "set_properties": {"rank": 50}}], "bob")
        ins.new_key.setText("age")  # another field: applies on top of bob's change
        ins.new_value.setText("42")
        ins.add_prop.click()
        await until(view.changed, lambda: store.get_object(session, oid).properties.get("age") == 42)
        assert store.get_object(session, oid).properties["rank"] == 50
        ins.new_key.setText("height")  # and our own edit is the base of the next one
        ins.new_value.setText("180")
        ins.add_prop.click()
        await until(view.changed, lambda: store.get_object(session, oid).properties.get("height") == 180)
        assert not ins.status.text(), ins.status.text()


async def _answer(accept: bool) -> None:
    """Click the revert question's button once it is up (bounded wait, no sleeps)."""
    import asyncio

    from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

    for _ in range(400):
        box = next((w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.isVisible() and w.objectName() == "confirmDialog"), None)
        if box is not None:
            assert "touched the same objects" in box.text() and "by bob" in box.informativeText()
            name = "confirmAcceptButton" if accept else "confirmCancelButton"
            button = box.findChild(QPushButton, name)
            assert button is not None
            button.click()
            return
        await asyncio.sleep(0.01)  # a loop turn: the dialog opens asynchronously
    raise AssertionError("the revert question did not appear")


@pytest.mark.asyncio
async def test_undo_of_an_edit_others_built_upon_asks_first(two_stores: tuple[GraphStore, GraphStore]) -> None:
    import asyncio

    from cks_desktop.tools.builtin import build_registry

    store, other = two_stores
    session = store.create_session("undo asks").id
    store.apply(session, sample_ops(12), "model")
    async with open_view(store, build_registry(store), session) as view:
        oid = store.resolve(session, "Person 5").id
        view.state.select(oid)
        await view.inspect(oid)
        ins = view.inspector
        ins.name_edit.setText("Person Five")
        ins.name_edit.editingFinished.emit()
        await until(view.changed, lambda: store.get_object(session, oid).name == "Person Five")
        other.apply(session, [{"op": "update_object", "ref": oid, "set_properties": {"rank": 50}}], "bob")

        refused = asyncio.ensure_future(view.undo())
        await _answer(accept=False)
        result = await asyncio.wait_for(refused, 10)
        assert not result.ok and store.get_object(session, oid).name == "Person Five"  # nothing undone
        assert view.editor.can_undo  # still on the stack

        accepted = asyncio.ensure_future(view.undo())
        await _answer(accept=True)
        result = await asyncio.wait_for(accepted, 10)
        assert result.ok and store.get_object(session, oid).name == "Person 5"
