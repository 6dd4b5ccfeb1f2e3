"""The URL-server form's Sign-in choice: none, a bearer token or OAuth, each showing only its own
fields; a saved entry reopens with the same choice, its token only in the keychain."""

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

OAUTH_FIELDS = ("oauth_grant_box", "oauth_client_edit", "oauth_secret_edit", "oauth_scope_edit", "oauth_cimd_edit",
                "oauth_port_edit")


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def _url_editor(qtbot, services, form: ServerForm | None = None) -> McpServerEditor:
    editor = McpServerEditor(services, TaskTracker(), form)
    qtbot.addWidget(editor)
    editor.show()
    if form is None:
        editor.name_edit.setText("remote")
        editor.transport_box.setCurrentIndex(editor.transport_box.findData("http"))
        editor.url_edit.setText("https://mcp.example.com/mcp")
    return editor


def _shown(editor: McpServerEditor) -> set[str]:
    return {name for name in (*OAUTH_FIELDS, "bearer_edit") if getattr(editor, name).isVisible()}


def _choose(editor: McpServerEditor, kind: str) -> None:
    editor.auth_box.setCurrentIndex(editor.auth_box.findData(kind))


def _saved(qtbot, editor: McpServerEditor, services) -> dict:
    assert editor.save_button.isEnabled(), editor.errors_label.text()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    return json.loads(services.settings.path.read_text())["mcpServers"]["remote"]


def test_each_choice_shows_only_its_fields(qtbot, services) -> None:
    editor = _url_editor(qtbot, services)
    assert editor.auth_box.currentData() == "oauth"  # a new server signs in when it asks, as before
    assert _shown(editor) == {"oauth_grant_box", "oauth_client_edit", "oauth_secret_edit", "oauth_scope_edit",
                              "oauth_cimd_edit", "oauth_port_edit"}
    _choose(editor, "none")
    assert _shown(editor) == set()
    _choose(editor, "bearer")
    assert _shown(editor) == {"bearer_edit"}
    assert not editor.save_button.isEnabled()
    assert "Paste the bearer token" in editor.errors_label.text()


def test_a_bearer_token_goes_to_the_keychain_and_reopens_as_a_bearer_token(qtbot, services) -> None:
    editor = _url_editor(qtbot, services)
    _choose(editor, "bearer")
    editor.bearer_edit.setText("tok-123456789")
    entry = _saved(qtbot, editor, services)
    assert entry["headers"] == {"Authorization": "keychain:mcp/remote/headers/Authorization"}
    assert entry["oauth"] is False
    assert services.secrets.get("mcp/remote/headers/Authorization") == "Bearer tok-123456789"
    assert "tok-123456789" not in services.settings.path.read_text()

    editor = _url_editor(qtbot, services, ServerForm.from_entry("remote", entry))
    assert editor.auth_box.currentData() == "bearer" and _shown(editor) == {"bearer_edit"}
    assert editor.headers_table.pairs() == []  # the token is not shown a second time as a header
    assert editor.bearer_edit.placeholderText() == "kept in the keychain"
    editor.option_fields["timeout"].setValue(editor.option_fields["timeout"].value() + 1)  # an edit elsewhere keeps the token
    assert _saved(qtbot, editor, services)["headers"] == entry["headers"]


def test_none_and_oauth_reopen_as_chosen(qtbot, services) -> None:
    editor = _url_editor(qtbot, services)
    _choose(editor, "none")
    entry = _saved(qtbot, editor, services)
    assert entry["oauth"] is False and "headers" not in entry
    editor = _url_editor(qtbot, services, ServerForm.from_entry("remote", entry))
    assert editor.auth_box.currentData() == "none" and _shown(editor) == set()
    _choose(editor, "oauth")
    editor.oauth_client_edit.setText("desk")
    entry = _saved(qtbot, editor, services)
    assert entry["oauth"] == {"clientId": "desk"}
    editor = _url_editor(qtbot, services, ServerForm.from_entry("remote", entry))
    assert editor.auth_box.currentData() == "oauth" and "oauth_client_edit" in _shown(editor)
    _choose(editor, "none")  # leaving OAuth drops its keys: the server is never signed in to
    assert _saved(qtbot, editor, services)["oauth"] is False


def test_a_header_typed_by_hand_with_oauth_stays_a_header(qtbot, services) -> None:
    entry = {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer abc"},
             "oauth": {"clientId": "desk"}}
    editor = _url_editor(qtbot, services, ServerForm.from_entry("remote", entry))
    assert editor.auth_box.currentData() == "oauth"
    assert [p.key for p in editor.headers_table.pairs()] == ["Authorization"]
