"""The objectNames (and accessible names) tests and assistive technology rely on (issue §5)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from cks_desktop.ui.approval.dialog import ApprovalDialog
from cks_desktop.ui.chat.model import ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow
from cks_desktop.ui.settings.dialog import SettingsDialog

from tests.ui.conftest import open_window
from tests.ui.helpers import approval_request


def named(parent: QWidget, name: str) -> QWidget:
    widget = parent.findChild(QWidget, name)
    assert widget is not None, f"no widget named {name}"
    assert widget.accessibleName(), f"{name} has no accessible name"
    return widget


@pytest.mark.asyncio
async def test_window_widgets_have_their_names(qtbot, home) -> None:
    async with open_window(home) as window:
        for name in ("chatInput", "sendButton", "sessionList", "graphView"):
            named(window, name)
        window.open_settings("mcp")
        dialog = window.findChild(SettingsDialog)
        assert dialog.objectName() == "settingsDialog" and dialog.accessibleName()
        named(dialog, "mcpServerList")
        dialog.reject()


def test_row_and_approval_names(qtbot) -> None:
    row = ToolCallRow(ToolItem("c1", "add_object", "Add object", "builtin", {}))
    qtbot.addWidget(row)
    assert row.objectName() == "toolCallRow" and row.accessibleName() == "Tool call Add object"
    assert row.accessibleDescription().endswith("collapsed")
    dialog = ApprovalDialog(approval_request())
    qtbot.addWidget(dialog)
    assert dialog.objectName() == "approvalDialog" and dialog.accessibleName()
    for name in ("allowButton", "allowRunButton", "denyButton"):
        named(dialog, name)
