"""Importing Claude Desktop's claude_desktop_config.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cks_desktop.mcp.claude_import import ClaudeImportError, candidate_paths, find_config, import_claude
from cks_desktop.secrets import SERVICE, SecretStore
from cks_desktop.settings import Settings

CLAUDE = {
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me"]},
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_123", "GITHUB_HOST": "github.com"}},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer xyz"}},
        "broken": {"args": ["no command"]},
        "existing": {"command": "uvx", "args": ["mcp-server-time"]},
    },
    "globalShortcut": "Ctrl+Space",
}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_candidate_paths_per_platform(tmp_path):
    home = Path("/home/me")
    assert candidate_paths("darwin", home, {}) == [
        home / "Library/Application Support/Claude/claude_desktop_config.json"]
    assert candidate_paths("linux", home, {}) == [home / ".config/Claude/claude_desktop_config.json"]
    assert candidate_paths("linux", home, {"XDG_CONFIG_HOME": "/xdg"}) == [
        Path("/xdg/Claude/claude_desktop_config.json")]
    local = tmp_path / "Local"
    (local / "Packages" / "Claude_pzs8sxrjxfjjc").mkdir(parents=True)
    paths = candidate_paths("win32", home, {"APPDATA": str(tmp_path / "Roaming"), "LOCALAPPDATA": str(local)})
    assert paths == [tmp_path / "Roaming/Claude/claude_desktop_config.json",
                     local / "Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/claude_desktop_config.json"]
    assert find_config("win32", home, {"APPDATA": str(tmp_path / "Roaming"), "LOCALAPPDATA": str(local)}) is None
    write(paths[1], CLAUDE)
    assert find_config("win32", home, {"APPDATA": str(tmp_path / "Roaming"), "LOCALAPPDATA": str(local)}) == paths[1]


def test_import_reports_and_protects_secrets(tmp_path, secret_store, memory_keyring):
    source = write(tmp_path / "claude_desktop_config.json", CLAUDE)
    settings = Settings.load(tmp_path / "settings.json")
    settings.mcp_servers["Existing"] = {"command": "mine"}
    report = import_claude(settings, secret_store, source)
    assert report.imported == ["filesystem", "github", "remote"]
    assert report.skipped == [
        ("broken", "invalid entry: Server 'broken' needs a \"command\" (a program to run) or a \"url\"."),
        ("existing", "a server named 'Existing' already exists here"),
    ]
    assert report.secrets_stored == ["github: GITHUB_PERSONAL_ACCESS_TOKEN", "remote: Authorization"]
    assert settings.mcp_servers["github"]["env"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "keychain:mcp/github/env/GITHUB_PERSONAL_ACCESS_TOKEN",
        "GITHUB_HOST": "github.com"}
    assert memory_keyring.store[(SERVICE, "mcp/github/env/GITHUB_PERSONAL_ACCESS_TOKEN")] == "ghp_123"
    assert memory_keyring.store[(SERVICE, "mcp/remote/headers/Authorization")] == "Bearer xyz"
    settings.save()
    text = (tmp_path / "settings.json").read_text()
    assert "ghp_123" not in text and "Bearer xyz" not in text
    # importing again skips everything: the names exist now
    again = import_claude(settings, secret_store, source)
    assert again.imported == [] and len(again.skipped) == 5


def test_without_keychain_secret_servers_are_skipped_in_the_cli(tmp_path, memory_keyring):
    source = write(tmp_path / "c.json", CLAUDE)
    settings = Settings.load(tmp_path / "settings.json")
    report = import_claude(settings, SecretStore(secure=False), source, allow_memory_secrets=False)
    assert report.imported == ["filesystem", "existing"]
    reasons = dict(report.skipped)
    assert reasons["github"] == ("it holds secrets (env GITHUB_PERSONAL_ACCESS_TOKEN) and no secure keychain "
                                 "is available to keep them")
    assert "header Authorization" in reasons["remote"]


def test_duplicate_names_in_the_file(tmp_path, secret_store):
    source = write(tmp_path / "c.json", '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}, '
                                        '"b": {"command": "z", "env": {"k": "v"}}}}')
    settings = Settings.load(tmp_path / "settings.json")
    report = import_claude(settings, secret_store, source)
    assert report.imported == ["b"]
    assert report.skipped == [("a", "the file names this server more than once")]


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "does not hold a JSON object"),
    ('{"mcpServers": []}', "\"mcpServers\" in"),
])
def test_unreadable_files(tmp_path, secret_store, content, message):
    source = write(tmp_path / "c.json", content)
    with pytest.raises(ClaudeImportError, match=message):
        import_claude(Settings.load(tmp_path / "s.json"), secret_store, source)
    with pytest.raises(ClaudeImportError, match="There is no file at"):
        import_claude(Settings.load(tmp_path / "s.json"), secret_store, tmp_path / "missing.json")
