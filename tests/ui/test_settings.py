"""The settings dialog: validation as you type, keys to the keychain, policies, MCP servers."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from cks_desktop.paths import resolve
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.runtime import AppServices
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.settings.mcp_form import Pair, ServerForm
from cks_desktop.ui.tasks import TaskTracker

from tests.fakes.script import Turn
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def make_dialog(qtbot, services) -> SettingsDialog:
    dialog = SettingsDialog(services, TaskTracker())
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_provider_fields_validate_as_you_type(qtbot, services) -> None:
    dialog = make_dialog(qtbot, services)
    assert dialog.objectName() == "settingsDialog" and dialog.save_button.isEnabled()
    form = dialog.providers_page.forms["openai"]
    form.url_edit.setText("localhost:1234")
    assert not dialog.save_button.isEnabled()
    assert "must start with http:// or https://" in dialog.errors_label.text()
    assert form.url_edit.property("invalid") is True
    form.url_edit.setText("http://127.0.0.1:1234/v1")
    assert dialog.save_button.isEnabled() and not dialog.errors_label.isVisible()
    dialog.providers_page.default_box.setCurrentIndex(dialog.providers_page.default_box.findData("anthropic"))
    form = dialog.providers_page.forms["anthropic"]
    form.model_box.setEditText("")
    assert not dialog.save_button.isEnabled() and "Pick or type a model" in dialog.errors_label.text()


def test_keys_go_to_the_secret_store_masked_and_nothing_saves_until_save(qtbot, services) -> None:
    dialog = make_dialog(qtbot, services)
    page = dialog.providers_page
    assert page.findChild(type(page.forms["anthropic"].key_status), "noKeychainNotice") is not None
    form = page.forms["anthropic"]
    assert form.key_edit is not None and form.key_edit.echoMode() is QLineEdit.EchoMode.Password
    page.default_box.setCurrentIndex(page.default_box.findData("anthropic"))
    qtbot.keyClicks(form.key_edit, "sk-ant-secret-value")
    form.model_box.setEditText("claude-test")
    assert services.settings.default_provider == ""  # nothing applied before Save
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert services.secrets.get("provider:anthropic") == "sk-ant-secret-value"
    on_disk = services.settings.path.read_text()
    assert "sk-ant-secret-value" not in on_disk  # the file holds no key
    saved = Settings.load(services.settings.path)
    assert saved.default_provider == "anthropic" and saved.provider("anthropic")["model"] == "claude-test"
    again = make_dialog(qtbot, services)
    again_form = again.providers_page.forms["anthropic"]
    assert again_form.key_edit.text() == "" and "A key is saved for this run only" in again_form.key_status.text()


@pytest.mark.asyncio
async def test_test_button_and_model_list_talk_to_the_provider(qtbot, services, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(text=["OK"]), Turn(status=401))
    dialog = make_dialog(qtbot, services)
    form = dialog.providers_page.forms["anthropic"]
    form.url_edit.setText(anthropic_fake.base_url)
    form.key_edit.setText("test")
    form.model_box.setEditText("fake-model")
    assert await wait(form.test())
    assert form.test_result.text() == "It works: fake-model answered “OK”."
    assert not await wait(form.test())
    assert form.test_result.text().startswith("Not working:") and "401" in form.test_result.text()
    models = await wait(form.fetch_models())
    assert "claude-other" in models and form.model_box.findText("claude-other") >= 0


def test_agent_page_saves_policies_cap_folders_and_enter(qtbot, services, tmp_path: Path) -> None:
    services.settings.data["agent"]["tool_policies"] = {"mcp:gone:tool": "auto", "remove_object": "auto"}
    dialog = make_dialog(qtbot, services)
    page = dialog.agent_page
    assert page.policy_boxes["remove_object"].currentData() == "auto"
    page.reset_policies()
    assert all(box.currentIndex() == 0 for box in page.policy_boxes.values())
    box = page.policy_boxes["add_object"]
    box.setCurrentIndex(box.findData("always"))
    page.cap.setValue(12)
    page.enter_sends.setChecked(False)
    page.add_folder(str(tmp_path))
    assert dialog.save()
    saved = Settings.load(services.settings.path)
    assert saved.tool_policies == {"add_object": "always"}
    assert saved.max_iterations == 12 and saved.data["ui"]["enter_sends"] is False
    assert saved.allowed_folders == [tmp_path]


def test_agent_page_sets_the_scopes_chats_grant_by_default(qtbot, services) -> None:
    """the default grant has a screen; the built-in defaults store no choice."""
    from cks_desktop.tools.scopes import chat_grant
    from cks_desktop.tools.types import Scope

    dialog = make_dialog(qtbot, services)
    boxes = dialog.agent_page.scope_boxes
    assert boxes[Scope.GRAPH_MUTATE].isChecked() and not boxes[Scope.CODE_EXECUTE].isChecked()
    boxes[Scope.GRAPH_MUTATE].setChecked(False)
    boxes[Scope.NET_FETCH].setChecked(True)
    assert dialog.save()
    saved = Settings.load(services.settings.path)
    assert saved.default_scopes == ["fs.read", "graph.read", "net.fetch", "provider.call"]
    grant = chat_grant(saved, "any-session").scopes
    assert Scope.GRAPH_MUTATE not in grant and Scope.NET_FETCH in grant
    dialog = make_dialog(qtbot, services)
    boxes = dialog.agent_page.scope_boxes
    boxes[Scope.GRAPH_MUTATE].setChecked(True)
    boxes[Scope.NET_FETCH].setChecked(False)
    assert dialog.save()
    assert Settings.load(services.settings.path).default_scopes is None


@pytest.mark.asyncio
async def test_saved_policy_applies_to_the_running_app(qtbot, home) -> None:
    async with open_window(home) as window:
        window.open_settings("agent")
        dialog = window.findChild(SettingsDialog)
        box = dialog.agent_page.policy_boxes["add_object"]
        box.setCurrentIndex(box.findData("once"))
        page_input = window.chat_panel.composer.input
        dialog.agent_page.enter_sends.setChecked(False)
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        registry = window.services.registry
        assert registry.effective_policy(registry.get("add_object")).value == "once"
        assert not page_input.enter_sends


def _toy() -> MCPServer:
    server = MCPServer("toy")

    @server.tool(annotations={"readOnlyHint": True})
    async def look(query: str) -> str:
        """Look something up."""
        return query

    @server.tool()
    async def wipe() -> str:
        """Delete everything."""
        return "gone"

    return server


@pytest.mark.asyncio
async def test_mcp_server_editor_validates_tests_and_saves(qtbot, home) -> None:
    async with open_window(home, mcp_targets={"toy": _toy()}) as window:
        services = window.services
        services.settings.mcp_servers["existing"] = {"command": "run-it"}
        window.open_settings("mcp")
        dialog = window.findChild(SettingsDialog)
        page = dialog.mcp_page
        page.refresh()
        assert page.list.objectName() == "mcpServerList" and page.current() == "existing"
        editor = page.open_editor(None)
        assert editor is not None and not editor.errors_label.isVisible()  # empty form: no red before typing
        editor.name_edit.setText("Existing")
        assert "already exists" in editor.errors_label.text()
        editor.name_edit.setText("toy")
        editor.save_button.click()  # Save on an unfinished form shows every problem and saves nothing
        assert "Type the command" in editor.errors_label.text() and "toy" not in services.settings.mcp_servers
        editor.command_edit.setText(sys.executable)
        editor.args_edit.setText('server.py "unclosed')
        assert "arguments cannot be read" in editor.errors_label.text()
        editor.args_edit.setText("server.py --flag")
        editor.env_table.add(Pair(""))
        table = editor.env_table.table
        qtbot.keyClicks(table.cellWidget(0, 0), "TOY_TOKEN")
        qtbot.keyClicks(table.cellWidget(0, 1), "very-secret")
        assert editor.env_table.pairs()[0].secret  # a TOKEN-looking name turns "secret" on
        assert table.cellWidget(0, 1).echoMode() is QLineEdit.EchoMode.Password
        assert editor.save_button.isEnabled()
        assert await wait(editor.test_connection())
        assert editor.tools_tree.topLevelItemCount() == 2
        look = editor.tools_tree.findItems("look", Qt.MatchFlag.MatchExactly)[0]
        assert look.text(1) == "read-only"
        wipe = editor.tools_tree.findItems("wipe", Qt.MatchFlag.MatchExactly)[0]
        wipe.setCheckState(0, Qt.CheckState.Unchecked)  # do not offer this one to the model
        applied = asyncio.get_running_loop().create_future()
        page.changed.connect(lambda: applied.done() or applied.set_result(True))
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        await wait(applied)
        entry = json.loads(services.settings.path.read_text())["mcpServers"]["toy"]
        assert entry["args"] == ["server.py", "--flag"] and entry["enabledTools"] == ["look"]
        assert entry["env"]["TOY_TOKEN"].startswith("keychain:")  # never the value itself
        assert services.secrets.get(entry["env"]["TOY_TOKEN"][len("keychain:"):]) == "very-secret"
        assert page.current() == "toy"
        assert services.registry.get("mcp:toy:look") is not None and services.registry.get("mcp:toy:wipe") is None


@pytest.mark.asyncio
async def test_mcp_page_imports_from_claude_desktop(qtbot, home, tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                   "env": {"API_KEY": "abc123"}},
        "broken": {"args": []}}}))
    async with open_window(home) as window:
        window.open_settings("mcp")
        page = window.findChild(SettingsDialog).mcp_page
        shown = signal_future(page.reportOpened)
        task = asyncio.ensure_future(page.import_claude(config))
        (report_box,) = await wait(shown)  # the report is a window-modal box the person closes
        assert "Imported: memory." in report_box.text() and "Skipped broken" in report_box.text()
        report_box.accept()
        report = await wait(task)
        assert report.imported == ["memory"]
        saved = json.loads(window.services.settings.path.read_text())["mcpServers"]["memory"]
        assert saved["env"]["API_KEY"].startswith("keychain:")
        assert [page.list.topLevelItem(i).text(0) for i in range(page.list.topLevelItemCount())] == ["memory"]


def test_server_form_keeps_unknown_keys_and_secret_refs() -> None:
    raw = {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "keychain:mcp/x/env/TOKEN", "MODE": "fast"},
           "customKey": {"kept": True}, "approval": "once"}
    form = ServerForm.from_entry("x", raw)
    assert form.env[0].secret and form.env[0].ref == "keychain:mcp/x/env/TOKEN" and form.env[0].value == ""
    form.options["timeout"] = 30
    entry = form.to_entry(raw, secrets=None)
    assert entry["customKey"] == {"kept": True} and entry["env"]["TOKEN"] == "keychain:mcp/x/env/TOKEN"
    assert entry["approval"] == "once" and entry["timeout"] == 30

