"""The chat's Revert asks first when later changes built upon the change (ui/revert_ask.py):
the real window on a real store; another writer (a second store on the same file, as another
process would be) changes the same object after the model's change."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.chat.model import RowState, ToolItem
from tests.ui.conftest import open_window
from tests.ui.graph.test_inspector_concurrent import _answer
from tests.ui.helpers import wait


@pytest.mark.asyncio
async def test_the_chats_revert_lists_what_it_would_undo_and_asks(qtbot, home: Path) -> None:
    async with open_window(home) as window:
        store = window.services.store
        sid = window.sidebar.create_session()
        window.open_session(sid)
        made = store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ann"}], "model")
        assert made.change is not None
        item = ToolItem("call_1", "add_object", "Add object", "builtin", {"type": "Person", "name": "Ann"},
                        state=RowState.DONE, change_id=made.change.id, revertable=True)
        assert item.can_revert
        other = GraphStore.open(Path(store.path))
        try:
            other.apply(sid, [{"op": "update_object", "ref": "Ann", "set_properties": {"role": "lead"}}], "bob")
        finally:
            other.close()
        panel = window.chat_panel
        import asyncio

        asked = asyncio.ensure_future(panel.revert(item))
        await _answer(accept=False)
        assert await wait(asked) is False
        assert store.resolve(sid, "Ann").properties == {"role": "lead"} and not item.reverted

        asked = asyncio.ensure_future(panel.revert(item))
        await _answer(accept=True)
        assert await wait(asked) is True
        assert item.reverted and not store.list_objects(sid)[0]
