"""What environment a stdio MCP server receives.

The review found every server received the app's whole environment, provider
keys included. The earlier test (tests/reliability/test_security_secrets.py) did
not notice because the provider keys it used lived only in the keychain, never
in the parent's ``os.environ``, and its check ``set(env) - set(os.environ)``
allowed everything the parent had. These tests put provider keys and other
secrets *in the parent environment*, start a real server (written with the
official SDK) through the app's own connection code, and read back the
server's ``os.environ`` through its ``env`` tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop.mcp.manager import McpManager
from cks_desktop.mcp.spawn import minimal_environment
from cks_desktop.secrets import provider_key_env_vars
from cks_desktop.settings import Settings
from tests.mcp.conftest import no_login_shell

ROGUE = Path(__file__).resolve().parents[1] / "reliability" / "servers" / "rogue_server.py"
MAIN = Path(__file__).resolve().parents[2]
PARENT_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-parent-anthropic-key-0001",
    "OPENAI_API_KEY": "sk-parent-openai-key-0000000000002",
    "GEMINI_API_KEY": "AIzaParentGeminiKey000000000000003",
    "GOOGLE_API_KEY": "AIzaParentGoogleKey000000000000004",
    "AWS_SECRET_ACCESS_KEY": "parent-aws-secret-0005",
    "CKS_UNRELATED_MARKER": "parent-marker-0006",
}
# What a server may see without inheritEnv: the SDK's list, locale, temp folder, and what we add.
ALLOWED_EXTRA = {"PYTHONUNBUFFERED", "PYTHONIOENCODING"}


def rogue_entry(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(ROGUE)], "env": {"OWN": "configured"}, "approval": "auto",
            **extra}


async def server_env(settings: Settings, tmp_path: Path, name: str) -> dict[str, str]:
    manager = McpManager(settings, None, None, tmp_path / "logs", login_path=no_login_shell, startup_timeout=60)
    try:
        assert await manager.start(name), manager.connections[name].reason
        out = await manager.connections[name].call_tool("env", {})
        return json.loads(out.content)
    finally:
        await manager.aclose()


@pytest.fixture
def parent_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in PARENT_SECRETS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.mark.asyncio
async def test_a_server_gets_a_minimal_environment(parent_secrets: None, tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "settings.json")
    settings.mcp_servers["rogue"] = rogue_entry()
    env = await server_env(settings, tmp_path, "rogue")
    assert env["OWN"] == "configured"
    assert env["LANG"] == "C.UTF-8" and env["HOME"] == os.environ["HOME"] and env["PATH"]
    leaked = {k for k, v in env.items() if v in PARENT_SECRETS.values()}
    assert not leaked, f"the server received the parent's {sorted(leaked)}"
    allowed = set(minimal_environment(os.environ)) | {"OWN"} | ALLOWED_EXTRA
    assert set(env) <= allowed, sorted(set(env) - allowed)


@pytest.mark.asyncio
async def test_inherit_env_passes_the_rest_but_never_provider_keys(parent_secrets: None, tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "settings.json")
    settings.mcp_servers["rogue"] = rogue_entry(inheritEnv=True)
    env = await server_env(settings, tmp_path, "rogue")
    assert env["CKS_UNRELATED_MARKER"] == PARENT_SECRETS["CKS_UNRELATED_MARKER"]
    assert env["AWS_SECRET_ACCESS_KEY"] == PARENT_SECRETS["AWS_SECRET_ACCESS_KEY"]  # the person asked for it
    for key in provider_key_env_vars():
        assert key not in env, key
    assert not [v for v in env.values() if v.startswith(("sk-", "AIza"))]


def test_inherit_env_must_be_a_boolean() -> None:
    from cks_desktop.mcp.config import ConfigError, parse_server

    assert parse_server("s", {"command": "x"}).inherit_env is False
    assert parse_server("s", {"command": "x", "inheritEnv": True}).inherit_env is True
    with pytest.raises(ConfigError, match="\"inheritEnv\" must be true or false"):
        parse_server("s", {"command": "x", "inheritEnv": "yes"})


def test_windows_minimal_environment_keeps_the_system_variables() -> None:
    parent = {"Path": r"C:\bin", "SystemRoot": r"C:\Windows", "USERPROFILE": r"C:\Users\me", "APPDATA": "a",
              "ComSpec": r"C:\Windows\cmd.exe", "OPENAI_API_KEY": "sk-x", "RANDOM_THING": "1"}
    env = minimal_environment(parent, platform="win32")
    assert env == {"Path": r"C:\bin", "SystemRoot": r"C:\Windows", "USERPROFILE": r"C:\Users\me", "APPDATA": "a",
                   "ComSpec": r"C:\Windows\cmd.exe"}


def test_the_cli_does_not_hand_its_keys_to_a_server(tmp_path: Path) -> None:
    """The real CLI (``python -m cks_desktop mcp call``) with provider keys in its own environment."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"mcpServers": {"rogue": rogue_entry()}}))
    env = {**os.environ, **PARENT_SECRETS, "PYTHONPATH": str(MAIN)}
    env.pop("SHELL", None)
    env.pop("CKS_DESKTOP_TEST_KEYRING", None)
    p = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "call", "rogue", "env",
                        "--json"], capture_output=True, text=True, env=env, cwd=MAIN, timeout=120)
    assert p.returncode == 0, p.stderr
    server_environ = json.loads(json.loads(p.stdout)["content"])
    assert server_environ["OWN"] == "configured"
    assert not {k for k, v in server_environ.items() if v in PARENT_SECRETS.values()}


def test_the_editor_form_round_trips_the_switch() -> None:
    from cks_desktop.ui.settings.mcp_form import ServerForm

    form = ServerForm.from_entry("s", {"command": "npx", "inheritEnv": True, "custom": 1})
    assert form.options["inheritEnv"] is True
    form.options["inheritEnv"] = False
    entry = form.to_entry({"command": "npx", "inheritEnv": True, "custom": 1}, secrets=None)
    assert "inheritEnv" not in entry and entry["custom"] == 1
    form.options["inheritEnv"] = True
    assert form.to_entry(None, secrets=None)["inheritEnv"] is True


def test_every_provider_key_variable_of_the_app_is_known_to_secrets() -> None:
    """``secrets`` keeps its own list (``mcp`` may not import ``llm``): it must cover the app's providers."""
    from cks_desktop.llm.profiles import API_KEY_ENVS
    from cks_desktop.secrets import provider_key_env_vars

    names = {name for names in API_KEY_ENVS.values() for name in names}
    assert names <= provider_key_env_vars()
