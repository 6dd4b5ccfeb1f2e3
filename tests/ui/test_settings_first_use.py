"""Settings as a new user meets it: no red before typing, a Cancel that says what it
keeps, and a provider Test whose failure names the request and the answer.

Real parts: the real settings dialog on a real data directory, the real SDKs against the fake
provider servers in tests/fakes (speaking the vendors' wire protocols).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from cks_desktop.paths import resolve
from cks_desktop.secrets import SecretStore
from cks_desktop.runtime import AppServices
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.tasks import TaskTracker

from tests.fakes.providers import make_fake
from tests.ui.helpers import wait


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def _dialog(qtbot, services) -> SettingsDialog:
    dialog = SettingsDialog(services, TaskTracker())
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_a_new_server_form_shows_no_error_until_a_field_is_edited_or_save_is_pressed(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    # Just opened: the Command field is empty, but nobody has typed yet: no red, no error text.
    assert not editor.errors_label.isVisible() and editor.errors_label.text() == ""
    assert editor.command_edit.property("invalid") is not True
    assert editor.save_button.isEnabled()
    # Typing a name shows the name's problems only: the untouched Command field stays quiet.
    editor.name_edit.setText("toy")
    assert editor.command_edit.property("invalid") is not True
    assert "Type the command" not in editor.errors_label.text()
    # Save on an unfinished form: nothing is saved, every problem shows, Save waits for a fix.
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    assert "toy" not in services.settings.mcp_servers
    assert "Type the command" in editor.errors_label.text() and editor.errors_label.isVisible()
    assert editor.command_edit.property("invalid") is True and not editor.save_button.isEnabled()
    editor.command_edit.setText("python3")
    assert not editor.errors_label.isVisible() and editor.save_button.isEnabled()


def test_editing_the_command_then_clearing_it_shows_the_error(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    editor.command_edit.setText("n")
    editor.command_edit.clear()
    assert editor.command_edit.property("invalid") is True
    assert "Type the command" in editor.errors_label.text()


@pytest.mark.asyncio
async def test_cancel_says_that_mcp_changes_are_already_applied(qtbot, services) -> None:
    services.settings.mcp_servers["memory"] = {"command": "run-it"}
    dialog = _dialog(qtbot, services)
    assert not dialog.applied_note.isVisible()  # Providers: Save and Cancel cover everything here
    assert "MCP servers" in dialog.cancel_button.toolTip()
    dialog.show_page("mcp")
    assert dialog.applied_note.isVisible() and "apply at once" in dialog.applied_note.text()
    assert "Cancel does not undo them" in dialog.mcp_page.note.text()
    await wait(dialog.mcp_page.toggle("memory"))
    assert services.settings.mcp_servers["memory"]["enabled"] is False  # applied at once, saved
    dialog.show_page("providers")
    assert dialog.applied_note.isVisible()
    assert dialog.applied_note.text() == "MCP servers: disabled “memory” — already applied; Cancel keeps these."
    dialog.reject()
    assert services.settings.mcp_servers["memory"]["enabled"] is False  # as the note said


@pytest.mark.asyncio
@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
async def test_provider_test_with_a_wrong_path_names_the_request_and_the_status(
        qtbot, services, provider_name: str) -> None:
    with make_fake(provider_name) as fake:
        dialog = _dialog(qtbot, services)
        form = dialog.providers_page.forms[provider_name]
        wrong = fake.origin + "/wrong"
        form.url_edit.setText(wrong)
        if form.key_edit is not None:
            form.key_edit.setText("test")
        form.model_box.setEditText(fake.default_model)
        assert not await wait(form.test())
        said = form.test_result.text()
    assert said.startswith("Not working:") and "404" in said
    assert f"POST {wrong}/" in said  # the address the request went to
    assert "Settings → Providers" not in said  # the person is on that page
    assert "Base URL field" in said
