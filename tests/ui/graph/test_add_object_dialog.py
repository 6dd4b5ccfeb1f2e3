"""The Add-object dialog as a new user meets it: wide enough for its title, and the
session's own types offered (most used first; declared-but-unused ones too) instead of "Thing"."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication

from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.ui.graph.dialogs import DEFAULT_TYPE, NewObjectDialog, object_type_choices

from tests.ui.graph.test_view import _dialog, open_view


def test_the_dialog_is_wide_enough_for_its_title_and_a_name(qtbot) -> None:
    dialog = NewObjectDialog(None, ["Person"])
    qtbot.addWidget(dialog)
    dialog.show()
    # The window manager adds " — <app name>" and its buttons: "Add a…esktop" was the result at 200 px.
    title = f"{dialog.windowTitle()} — {QApplication.applicationDisplayName() or 'CKS Desktop'}"
    assert dialog.width() >= dialog.fontMetrics().horizontalAdvance(title) + 120
    assert dialog.width() >= 380
    assert dialog.name_edit.width() >= 240


def test_type_choices_put_the_most_used_first_then_declared_ones() -> None:
    live = [("Person", 9), ("Paper", 3), ("Place", 3)]
    assert object_type_choices(live, ["Project", "person", "Paper"]) == ["Person", "Paper", "Place", "Project"]
    assert object_type_choices([], []) == [DEFAULT_TYPE]


@pytest.mark.asyncio
async def test_a_session_with_declared_types_and_no_objects_offers_them(store: GraphStore,
                                                                       registry: ToolRegistry) -> None:
    sid = store.create_session("a schema first").id
    store.apply(sid, [{"op": "define_type", "kind": "object", "name": "Person"},
                      {"op": "define_type", "kind": "object", "name": "Company"},
                      {"op": "define_type", "kind": "relation", "name": "works_at"}], "model")
    async with open_view(store, registry, sid) as view:
        task = asyncio.ensure_future(view.add_object_at(None))
        dialog = await _dialog(view, "newObjectDialog")
        items = [dialog.type_edit.itemText(i) for i in range(dialog.type_edit.count())]
        assert items == ["Company", "Person"] and dialog.type_edit.currentText() == "Company"
        assert dialog.type_edit.isEditable()  # a new type can still be typed
        dialog.reject()
        assert await asyncio.wait_for(task, 10) is None


@pytest.mark.asyncio
async def test_a_session_with_objects_offers_its_types_most_used_first(store: GraphStore, registry: ToolRegistry,
                                                                      session: str) -> None:
    store.apply(session, [{"op": "add_object", "type": "Paper", "name": "Extra paper"}], "model")
    async with open_view(store, registry, session) as view:
        task = asyncio.ensure_future(view.add_object_at(None))
        dialog = await _dialog(view, "newObjectDialog")
        items = [dialog.type_edit.itemText(i) for i in range(dialog.type_edit.count())]
        assert items[0] == "Paper" and set(items) == {"Person", "Company", "Place", "Project", "Paper"}
        assert dialog.type_edit.currentText() == "Paper"
        dialog.reject()
        await asyncio.wait_for(task, 10)


@pytest.mark.asyncio
async def test_the_status_line_counts_one_object_in_the_singular(store: GraphStore, registry: ToolRegistry) -> None:
    sid = store.create_session("just one").id
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada"}], "model")
    async with open_view(store, registry, sid) as view:
        assert view.status.text().startswith("1 object · 0 relations")
