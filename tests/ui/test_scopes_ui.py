"""The scope settings in the window: a session's Scopes… dialog from
its context menu, and an MCP server's "Grant … in every chat" in its editor. A real
window, the fake Anthropic server speaking the real wire protocol."""

from __future__ import annotations

import json
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from cks_desktop.tools.scopes import chat_grant, server_identity
from cks_desktop.tools.types import Scope
from cks_desktop.ui.chat.model import RowState
from tests.fakes.script import call_turn, text_turn
from tests.ui.helpers import signal_future, wait
from tests.ui.test_window import _send


@pytest.mark.asyncio
async def test_a_sessions_scopes_dialog_makes_its_chats_read_only(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Eve"}), text_turn("Not allowed."))
    async with open_window_(home, anthropic_fake) as window:
        sid = window.sidebar.create_session()
        sidebar = window.sidebar
        item = sidebar._item_for(sid)
        sidebar._context_menu(sidebar.list.visualItemRect(item).center())
        menu = [m for m in sidebar.findChildren(QMenu) if m.isVisible()][-1]
        action = next(a for a in menu.actions() if a.text() == "Scopes…")
        opened = signal_future(window.sessionScopesOpened)
        action.trigger()
        menu.close()
        (dialog,) = await wait(opened)
        assert dialog.use_defaults.isChecked() and not dialog.boxes[Scope.GRAPH_MUTATE].isEnabled()
        assert dialog.boxes[Scope.GRAPH_MUTATE].isChecked() and not dialog.boxes[Scope.CODE_EXECUTE].isChecked()
        dialog.use_defaults.setChecked(False)
        dialog.boxes[Scope.GRAPH_MUTATE].setChecked(False)
        assert dialog.granted() == {Scope.GRAPH_READ, Scope.PROVIDER_CALL}
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
        on_disk = json.loads((home / "settings.json").read_text())
        # fs.read stays ticked (it applies once a folder is allowed); graph.mutate is gone.
        assert on_disk["agent"]["session_scopes"][sid] == ["fs.read", "graph.read", "provider.call"]
        await wait(_send(window, qtbot, "Add Eve"))
        offered = {t["name"] for t in anthropic_fake.requests[0].body["tools"]}
        assert "graph_summary" in offered and "add_object" not in offered
        (row,) = window.chat_panel.view.rows()
        assert row.item.state is RowState.ERROR
        assert "needs graph.mutate, which this chat does not grant" in (row.item.result or "")
        assert "right-click the session" in (row.item.result or "")
        assert window.services.store.counts(sid).get("objects", 0) == 0


@pytest.mark.asyncio
async def test_the_server_editor_grants_its_scopes_in_every_chat(qtbot, home) -> None:
    async with open_window_(home, None) as window:
        opened = signal_future(window.settingsDialogOpened)
        window.open_settings("mcp")
        (dialog,) = await wait(opened)
        editor = dialog.mcp_page.open_editor(None)
        # A server the person adds here is one they chose to use: granted unless they untick it.
        assert editor is not None and editor.grant_box.isChecked()
        editor.name_edit.setText("toy")
        editor.command_edit.setText(sys.executable)
        editor.args_edit.setText("server.py")
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        settings = window.services.settings
        entry = settings.mcp_servers["toy"]
        assert settings.server_grant("toy") == (["code.execute"], server_identity(entry))
        on_disk = json.loads((home / "settings.json").read_text())
        assert on_disk["agent"]["server_scopes"]["toy"]["scopes"] == ["code.execute"]
        assert chat_grant(settings, "any").by_source == {"mcp:toy": {Scope.CODE_EXECUTE}}
        again = dialog.mcp_page.open_editor("toy")
        assert again is not None and again.grant_box.isChecked()
        again.grant_box.setChecked(False)
        qtbot.mouseClick(again.save_button, Qt.MouseButton.LeftButton)
        assert settings.server_grant("toy") == ([], "") and chat_grant(settings, "any").by_source == {}
        dialog.reject()


def open_window_(home, fake):
    from tests.ui.conftest import open_window

    return open_window(home, fake=fake)
