"""The painted graph canvas tells assistive technology what is selected: its accessible name
names the selected object and its type, and follows each click (a real store and view)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt

from tests.ui.graph.test_view import mouse, open_view, screen_pos


@pytest.mark.asyncio
async def test_the_canvas_names_the_selected_object(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:
        c, m = view.canvas, view.model
        assert c.accessibleName() == "Graph canvas: nothing selected"
        oid = m.node_id(7)
        p = screen_pos(view, oid)
        mouse(c, QEvent.Type.MouseButtonPress, p)
        mouse(c, QEvent.Type.MouseButtonRelease, p, buttons=Qt.MouseButton.NoButton)
        assert view.state.selection == [oid]
        obj = store.get_object(session, oid)
        assert c.accessibleName() == f"Graph canvas: {obj.name} ({obj.type}) selected"
        far = QPointF(2, 2)  # empty space: the selection is cleared
        mouse(c, QEvent.Type.MouseButtonPress, far)
        mouse(c, QEvent.Type.MouseButtonRelease, far, buttons=Qt.MouseButton.NoButton)
        if not view.state.selection:
            assert c.accessibleName() == "Graph canvas: nothing selected"
