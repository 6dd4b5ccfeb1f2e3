"""The MCP server editor's OAuth sign-in choice: a client-credentials client with a secret or a private key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

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


def _choose(editor: McpServerEditor, auth: str) -> None:
    box = editor.oauth_grant_box
    box.setCurrentIndex(box.findData(f"client_credentials:{auth}" if auth else "authorization_code:"))


def test_editor_keeps_a_private_key_in_the_keychain_and_switches_to_a_secret(qtbot, services, tmp_path,
                                                                             monkeypatch) -> None:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    key_file = tmp_path / "client.pem"
    key_file.write_text(pem)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(key_file), ""))
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    editor.name_edit.setText("m2m")
    editor.transport_box.setCurrentIndex(editor.transport_box.findData("http"))
    editor.url_edit.setText("https://mcp.example.com/mcp")
    editor.oauth_client_edit.setText("svc")
    _choose(editor, "private_key_jwt")
    assert not editor.save_button.isEnabled()  # no key yet: one sentence says so
    assert "private key" in editor.errors_label.text()
    qtbot.mouseClick(editor.oauth_key_button, Qt.MouseButton.LeftButton)
    assert editor.save_button.isEnabled(), editor.errors_label.text()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["m2m"]
    assert entry["oauth"] == {"grant": "client_credentials", "auth": "private_key_jwt", "clientId": "svc",
                              "privateKey": "keychain:mcp/m2m/oauth/privateKey"}
    assert services.secrets.get("mcp/m2m/oauth/privateKey") == pem
    assert "BEGIN" not in services.settings.path.read_text()

    editor = McpServerEditor(services, TaskTracker(), ServerForm.from_entry("m2m", entry))
    qtbot.addWidget(editor)
    editor.show()
    assert editor.oauth_grant_box.currentData() == "client_credentials:private_key_jwt"
    assert editor.oauth_key_note.text() == "kept in the keychain"
    _choose(editor, "client_secret_basic")
    editor.oauth_secret_edit.setText("s3cret-value-77")
    assert editor.save_button.isEnabled(), editor.errors_label.text()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["m2m"]
    assert entry["oauth"] == {"grant": "client_credentials", "auth": "client_secret_basic", "clientId": "svc",
                              "clientSecret": "keychain:mcp/m2m/oauth/clientSecret"}


def test_editor_refuses_a_file_that_is_not_a_private_key(qtbot, services, tmp_path, monkeypatch) -> None:
    not_a_key = tmp_path / "notes.txt"
    not_a_key.write_text("hello")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(not_a_key), ""))
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    editor.name_edit.setText("m2m")
    editor.transport_box.setCurrentIndex(editor.transport_box.findData("http"))
    editor.url_edit.setText("https://mcp.example.com/mcp")
    editor.oauth_client_edit.setText("svc")
    _choose(editor, "private_key_jwt")
    qtbot.mouseClick(editor.oauth_key_button, Qt.MouseButton.LeftButton)
    assert not editor.save_button.isEnabled()
    assert "The OAuth private key cannot be used: the private key is not a PEM private key" \
        in editor.errors_label.text()


def test_editor_keeps_an_enterprise_identity_assertion_entry(qtbot, services) -> None:
    oauth = {"grant": "identity_assertion", "issuer": "https://as.example.com", "clientId": "c",
             "clientSecret": "keychain:mcp/corp/oauth/clientSecret", "idpTokenEndpoint": "https://idp/token",
             "idpClientId": "d", "idToken": "keychain:mcp/corp/oauth/idToken"}
    services.settings.mcp_servers["corp"] = {"url": "https://mcp.example.com/mcp", "oauth": oauth}
    editor = McpServerEditor(services, TaskTracker(),
                             ServerForm.from_entry("corp", services.settings.mcp_servers["corp"]))
    qtbot.addWidget(editor)
    editor.show()
    assert editor.oauth_grant_box.currentData() == "identity_assertion:client_secret_basic"
    editor.oauth_scope_edit.setText("mcp")
    assert editor.save_button.isEnabled(), editor.errors_label.text()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["corp"]
    assert entry["oauth"] == {**oauth, "auth": "client_secret_basic", "scope": "mcp"}


@pytest.mark.slow
@pytest.mark.asyncio
async def test_editor_creates_an_enterprise_server_that_signs_in(qtbot, home, memory_keyring, tmp_path) -> None:
    """Enterprise-managed sign-in (SEP-990) from the editor: the five identity-provider fields, each problem one sentence,
    the secrets only in the keychain; the saved entry then signs in to the real OAuth server."""
    from cks_desktop.mcp.connection import Status
    from cks_desktop.mcp.manager import McpManager
    from cks_desktop.tools.registry import ToolRegistry
    from tests.mcp.test_oauth import oauth_server
    from tests.mcp.test_oauth_grants import id_token, key_pair

    services = AppServices.open(resolve(home), secrets=SecretStore(secure=True))
    idp_private, idp_public = key_pair(tmp_path, "ec")
    token = id_token(idp_private, "desk-at-idp")
    try:
        async with oauth_server(tmp_path, OAUTH_IDJAG=f"mcp-client:corp-secret-1:desk-at-idp:{idp_public}",
                                OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
            issuer = url.removesuffix("/mcp")
            editor = McpServerEditor(services, TaskTracker())
            qtbot.addWidget(editor)
            editor.show()
            editor.name_edit.setText("corp")
            editor.transport_box.setCurrentIndex(editor.transport_box.findData("http"))
            editor.url_edit.setText(url)
            editor.oauth_grant_box.setCurrentIndex(editor.oauth_grant_box.findData(
                "identity_assertion:client_secret_basic"))
            assert editor.oauth_issuer_edit.isEnabled() and editor.oauth_id_token_edit.isEnabled()
            editor.oauth_client_edit.setText("mcp-client")
            editor.oauth_secret_edit.setText("corp-secret-1")
            assert not editor.save_button.isEnabled()
            assert "Type the issuer URL of the MCP server's authorization server" in editor.errors_label.text()
            editor.oauth_issuer_edit.setText("ftp://as.example.com")
            assert "The issuer must be an http:// or https:// URL" in editor.errors_label.text()
            editor.oauth_issuer_edit.setText(issuer)
            assert "Type the token endpoint of your identity provider" in editor.errors_label.text()
            editor.oauth_idp_endpoint_edit.setText(issuer + "/idp/token")
            assert "Type the client ID this app has at your identity provider" in editor.errors_label.text()
            editor.oauth_idp_client_edit.setText("desk-at-idp")
            editor.oauth_idp_secret_edit.setText("idp-secret-9")
            assert "Paste the ID token your identity provider gave you" in editor.errors_label.text()
            editor.oauth_id_token_edit.setText(token)
            assert editor.save_button.isEnabled(), editor.errors_label.text()
            qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)

            text = services.settings.path.read_text()
            entry = json.loads(text)["mcpServers"]["corp"]
            assert entry["oauth"] == {
                "grant": "identity_assertion", "auth": "client_secret_basic", "clientId": "mcp-client",
                "clientSecret": "keychain:mcp/corp/oauth/clientSecret", "issuer": issuer,
                "idpTokenEndpoint": issuer + "/idp/token", "idpClientId": "desk-at-idp",
                "idpClientSecret": "keychain:mcp/corp/oauth/idpClientSecret",
                "idToken": "keychain:mcp/corp/oauth/idToken"}
            assert token not in text and "corp-secret-1" not in text and "idp-secret-9" not in text
            assert services.secrets.get("mcp/corp/oauth/idToken") == token
            assert services.secrets.get("mcp/corp/oauth/idpClientSecret") == "idp-secret-9"

            # reopened: the stored values stay (placeholders say so), and nothing needs retyping to save again
            editor = McpServerEditor(services, TaskTracker(), ServerForm.from_entry("corp", entry))
            qtbot.addWidget(editor)
            editor.show()
            assert editor.oauth_issuer_edit.text() == issuer and editor.oauth_id_token_edit.text() == ""
            assert editor.oauth_id_token_edit.placeholderText() == "kept in the keychain"
            assert editor.save_button.isEnabled(), editor.errors_label.text()

            manager = McpManager(services.settings, SecretStore(secure=True), ToolRegistry(None),  # type: ignore[arg-type]
                                 tmp_path / "logs")
            try:
                await manager.start_all()
                conn = manager.connections["corp"]
                assert conn.status is Status.READY, conn.reason
            finally:
                await manager.aclose()
    finally:
        services.store.close()


def test_editor_sets_a_client_metadata_url_and_a_callback_port(qtbot, services) -> None:
    services.settings.mcp_servers["pre"] = {"url": "https://mcp.example.com/mcp", "oauth": {"clientId": "desk-1"}}
    editor = McpServerEditor(services, TaskTracker(),
                             ServerForm.from_entry("pre", services.settings.mcp_servers["pre"]))
    qtbot.addWidget(editor)
    editor.show()
    editor.oauth_cimd_edit.setText("http://app.example/client.json")  # not https: one sentence, no save
    assert not editor.save_button.isEnabled()
    assert "clientMetadataUrl" in editor.errors_label.text() or "metadata" in editor.errors_label.text()
    editor.oauth_cimd_edit.setText("https://app.example/client.json")
    editor.oauth_port_edit.setText("8976")
    assert editor.save_button.isEnabled(), editor.errors_label.text()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["pre"]
    assert entry["oauth"] == {"clientId": "desk-1", "clientMetadataUrl": "https://app.example/client.json",
                              "callbackPort": 8976}
    again = ServerForm.from_entry("pre", entry)
    assert (again.oauth_client_metadata_url, again.oauth_callback_port) == ("https://app.example/client.json", "8976")
