"""The MCP client's UI gaps (issue 14): the editor's server-request keys, the chat's "Sign in" notice,
and a tool result's resource_link opened or attached with a click.

Real parts: the real editor and settings file on a real data directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.settings.mcp_form import ServerForm
from cks_desktop.ui.tasks import TaskTracker


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def test_editor_edits_log_level_sampling_and_roots_and_keeps_other_keys(qtbot, services, tmp_path) -> None:
    folder = tmp_path / "extra"
    folder.mkdir()
    services.settings.mcp_servers["toy"] = {"command": "run-it", "logLevel": "debug", "sampling": "allow",
                                            "roots": ["/data/one"], "futureKey": 7}
    editor = McpServerEditor(services, TaskTracker(),
                             ServerForm.from_entry("toy", services.settings.mcp_servers["toy"]))
    qtbot.addWidget(editor)
    editor.show()
    assert editor.log_level_box.currentData() == "debug" and editor.sampling_box.currentData() == "allow"
    assert editor.roots() == ["/data/one"]
    editor.log_level_box.setCurrentIndex(editor.log_level_box.findData("warning"))
    editor.sampling_box.setCurrentIndex(editor.sampling_box.findData("off"))
    editor.add_root(str(folder))
    editor.add_root(str(folder))  # the same folder twice is listed once
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["toy"]
    assert (entry["logLevel"], entry["sampling"], entry["roots"]) == ("warning", "off", ["/data/one", str(folder)])
    assert entry["futureKey"] == 7


def test_editor_defaults_write_no_keys_and_the_add_folder_dialog_is_not_modal_exec(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    assert (editor.log_level_box.currentData(), editor.sampling_box.currentData(), editor.roots()) == \
        ("info", "ask", [])
    assert [editor.log_level_box.itemData(i) for i in range(editor.log_level_box.count())] == \
        ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    editor.name_edit.setText("plain")
    editor.command_edit.setText("run-it")
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["plain"]
    assert not {"logLevel", "sampling", "roots"} & set(entry)


def test_add_folder_opens_a_window_modal_chooser(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    editor.pick_root()  # open(), never exec(): this returns at once
    chooser = editor.root_dialog
    assert chooser.isVisible()
    chooser.fileSelected.emit("/tmp/picked")
    chooser.reject()
    assert editor.roots() == ["/tmp/picked"]
