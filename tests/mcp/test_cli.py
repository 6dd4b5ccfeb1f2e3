"""`cks-desktop mcp …`: in-process through cli.main, and a few runs as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop import cli
from cks_desktop.secrets import SERVICE
from tests.mcp.conftest import TOY

MAIN = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("SHELL", raising=False)  # no login-shell PATH probe: slow, and not under test here
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def keychain(memory_keyring, monkeypatch):
    """The in-memory keyring, counted as a secure keychain by SecretStore()."""
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    return memory_keyring


def mcp(home: Path, *argv: str) -> int:
    return cli.main(["--data-dir", str(home), "mcp", *argv])


def servers(home: Path) -> dict:
    return json.loads((home / "settings.json").read_text())["mcpServers"]


def toy_args(home: Path) -> list[str]:
    return ["--env", f"TOY_MARKER_DIR={home}", "--approval", "auto", "--", sys.executable, str(TOY)]


def test_add_keeps_secrets_in_the_keychain(home, keychain, capsys):
    assert mcp(home, "add", "gh", "--env", "LOG_LEVEL=debug", "--env", "GITHUB_TOKEN=ghp_plain",
               "--secret-env", "OTHER=s3cret", "--scope", "net.fetch", "--scope", "fs.read",
               "--timeout", "30", "--protocol", "legacy", "--disabled",
               "--", "npx", "-y", "@modelcontextprotocol/server-github", "--flag") == 0
    out = capsys.readouterr().out
    assert "Added MCP server 'gh'" in out and "GITHUB_TOKEN" in out and "OTHER" in out
    entry = servers(home)["gh"]
    assert entry == {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github", "--flag"],
        "env": {"LOG_LEVEL": "debug", "OTHER": "keychain:mcp/gh/env/OTHER",
                "GITHUB_TOKEN": "keychain:mcp/gh/env/GITHUB_TOKEN"},
        "scopes": ["net.fetch", "fs.read"], "timeout": 30.0, "protocol": "legacy", "enabled": False,
    }
    text = (home / "settings.json").read_text()
    assert "ghp_plain" not in text and "s3cret" not in text
    assert keychain.store[(SERVICE, "mcp/gh/env/GITHUB_TOKEN")] == "ghp_plain"
    assert keychain.store[(SERVICE, "mcp/gh/env/OTHER")] == "s3cret"

    assert mcp(home, "add", "--approval", "once", "web", "--url", "https://example.com/mcp",
               "--header", "Authorization: Bearer abc", "--header", "X-Team: blue") == 0
    assert servers(home)["web"] == {"url": "https://example.com/mcp", "approval": "once",
                                    "headers": {"X-Team": "blue",
                                                "Authorization": "keychain:mcp/web/headers/Authorization"}}
    assert keychain.store[(SERVICE, "mcp/web/headers/Authorization")] == "Bearer abc"

    assert mcp(home, "remove", "gh") == 0
    assert "gh" not in servers(home)
    assert (SERVICE, "mcp/gh/env/GITHUB_TOKEN") not in keychain.store


def test_without_a_keychain_secrets_are_refused(home, memory_keyring, monkeypatch, capsys):
    monkeypatch.delenv("CKS_DESKTOP_TEST_KEYRING", raising=False)
    assert mcp(home, "add", "plain", "--", "npx", "x") == 0
    before = (home / "settings.json").read_text()
    assert mcp(home, "add", "gh", "--secret-env", "TOKEN=abc", "--", "npx", "x") == 2
    assert "No secure keychain is available, so TOKEN cannot be stored persistently" in capsys.readouterr().err
    assert mcp(home, "add", "gh", "--env", "API_KEY=abc", "--", "npx", "x") == 2
    assert (home / "settings.json").read_text() == before
    assert memory_keyring.store == {}


@pytest.mark.parametrize("argv, message", [
    (["add", "x", "--url", "http://h/mcp", "--", "npx"], "either --url or a command"),
    (["add", "x"], "Say what to run after --"),
    (["add", "x", "--url", "ftp://h"], "must be an http:// or https:// address"),
    (["add", "x", "--env", "NOEQUALS", "--", "npx"], "must look like KEY=VALUE"),
    (["add", "x", "--header", "A: b", "--", "npx"], "are for --url servers"),
    (["add", "x", "--scope", "everything", "--", "npx"], "unknown scope"),
    (["add", "a:b", "--", "npx"], "may not contain ':'"),
    (["add", "x", "npx", "-y", "pkg"], "unrecognized arguments: -y pkg; put the command after --"),
    (["remove", "ghost"], "There is no MCP server named 'ghost'"),
    (["enable", "ghost"], "There is no MCP server named 'ghost'"),
    (["call", "ghost", "t"], "There is no MCP server named 'ghost'"),
    (["call", "ghost", "t", "--args", "{oops"], "--args is not valid JSON"),
    (["call", "ghost", "t", "--args", "[1]"], "--args must be a JSON object"),
    (["import-claude", "/nonexistent/claude.json"], "There is no file at /nonexistent/claude.json"),
    ([], "say what to do"),
])
def test_usage_errors_exit_2_with_one_line(home, argv, message, capsys):
    assert mcp(home, *argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_duplicate_names_and_enable_disable_keep_other_keys(home, capsys):
    assert mcp(home, "add", "Files", "--", "npx", "fs") == 0
    assert mcp(home, "add", "files", "--", "npx", "fs") == 2
    assert "'Files' already exists" in capsys.readouterr().err
    data = json.loads((home / "settings.json").read_text())
    data["mcpServers"]["Files"].update({"disabled": True, "myNote": "kept"})
    (home / "settings.json").write_text(json.dumps(data))
    assert mcp(home, "enable", "Files") == 0
    assert servers(home)["Files"] == {"command": "npx", "args": ["fs"], "myNote": "kept", "enabled": True}
    assert mcp(home, "disable", "Files") == 0
    assert servers(home)["Files"]["enabled"] is False


def test_list_without_probe(home, capsys):
    assert mcp(home, "list") == 0
    assert "No MCP servers are configured" in capsys.readouterr().out
    assert mcp(home, "add", "off", "--disabled", "--", "npx", "x") == 0
    data = json.loads((home / "settings.json").read_text())
    data["mcpServers"]["broken"] = {"command": 5}
    (home / "settings.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert mcp(home, "list", "--json") == 0  # nothing enabled to probe
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["off"]["status"] == "disabled"
    assert rows["broken"]["status"] == "invalid" and "\"command\" must be" in rows["broken"]["reason"]


def test_tools_and_call_against_the_toy_server(home, capsys):
    assert mcp(home, "add", "toy", "--protocol", "legacy", *toy_args(home)) == 0
    capsys.readouterr()
    assert mcp(home, "tools", "toy", "--json") == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["protocol"] == "2025-11-25" and len(listing["tools"]) == 14
    echo = next(t for t in listing["tools"] if t["name"] == "echo")
    assert (echo["internal_name"], echo["title"], echo["policy"]) == ("mcp:toy:echo", "Echo", "auto")
    assert echo["annotations"] == {"readOnlyHint": True, "destructiveHint": False}
    assert mcp(home, "call", "toy", "add", "--args", '{"a": 20, "b": 22}') == 0
    assert capsys.readouterr().out.strip() == "42"
    assert mcp(home, "call", "toy", "fail") == 1  # a tool's error result: exit 1, its text on stderr
    captured = capsys.readouterr()
    assert (captured.out, captured.err.strip()) == ("", "it went wrong")
    data = json.loads((home / "settings.json").read_text())
    data["mcpServers"]["toy"]["enabledTools"] = ["echo"]
    (home / "settings.json").write_text(json.dumps(data))
    assert mcp(home, "call", "toy", "add", "--args", '{"a": 1, "b": 1}') == 2
    assert "is disabled in the settings" in capsys.readouterr().err


def test_serve_unknown_session_is_a_usage_error(home, capsys):
    assert mcp(home, "serve", "--session", "NOPE") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "NOPE" in err


def run_cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(MAIN)}
    env.pop("CKS_DESKTOP_TEST_KEYRING", None)
    env.pop("SHELL", None)
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", *argv],
                          capture_output=True, text=True, env=env, cwd=MAIN, timeout=120)


def test_as_subprocesses(home):
    p = run_cli(home, "add", "toy", *toy_args(home))
    assert p.returncode == 0, p.stderr
    p = run_cli(home, "list", "--json")
    assert p.returncode == 0, p.stderr
    [row] = json.loads(p.stdout)
    assert (row["name"], row["status"], row["tools"]) == ("toy", "ready", 14)
    p = run_cli(home, "remove", "toy")
    assert (p.returncode, p.stdout.strip()) == (0, "Removed MCP server 'toy'.")
