"""Server configs: validation sentences, defaults, edits that keep unknown keys, secret references."""

from __future__ import annotations

import json

import pytest

from cks_desktop.mcp.config import (
    ConfigError,
    MissingSecret,
    add_server,
    looks_secret,
    parse_server,
    parse_servers,
    protect_values,
    remove_server,
    resolve_env,
    set_enabled,
    update_server,
)
from cks_desktop.secrets import SERVICE
from cks_desktop.settings import Settings
from cks_desktop.tools.types import Policy, Scope


def test_claude_desktop_shapes_parse_with_defaults():
    stdio = parse_server("files", {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}})
    assert (stdio.transport, stdio.command, stdio.args, stdio.env) == ("stdio", "npx", ("-y", "server-fs", "/tmp"),
                                                                       {"A": "1"})
    assert stdio.enabled and stdio.approval is Policy.ALWAYS and stdio.timeout == 120.0
    assert stdio.scopes == frozenset({Scope.CODE_EXECUTE}) and stdio.enabled_tools is None
    assert stdio.protocol == "auto" and stdio.source == "mcp:files"
    http = parse_server("web", {"url": "https://example.com/mcp", "headers": {"X": "y"}, "type": "http"})
    assert (http.transport, http.url, http.headers) == ("http", "https://example.com/mcp", {"X": "y"})
    assert http.scopes == frozenset({Scope.NET_FETCH})
    assert not parse_server("off", {"command": "x", "disabled": True}).enabled  # Cline/Cursor spelling


def test_app_keys():
    cfg = parse_server("s", {"command": "x", "enabled": False, "scopes": ["graph.read"], "approval": "once",
                             "toolPolicies": {"safe": "auto"}, "enabledTools": ["safe", "other"],
                             "timeout": 5, "protocol": "legacy", "cwd": "/tmp"})
    assert not cfg.enabled and cfg.scopes == frozenset({Scope.GRAPH_READ}) and cfg.timeout == 5.0
    assert cfg.policy_for("safe") is Policy.AUTO and cfg.policy_for("other") is Policy.ONCE
    assert cfg.tool_enabled("safe") and not cfg.tool_enabled("nope")
    assert (cfg.protocol, cfg.cwd) == ("legacy", "/tmp")


@pytest.mark.parametrize("raw, message", [
    ({}, "Server 's' needs a \"command\" (a program to run) or a \"url\"."),
    ({"command": "x", "url": "http://h"}, "Server 's' has both a \"command\" and a \"url\"; keep one."),
    ({"command": ""}, "Server 's': \"command\" must be the program to run, as text."),
    ({"command": "x", "args": "-y pkg"}, "Server 's': \"args\" must be a list of text arguments."),
    ({"command": "x", "env": {"A": 1}}, "Server 's': \"env\" must be an object whose values are text."),
    ({"url": "localhost:3000"}, "Server 's': \"url\" must be an http:// or https:// address (got 'localhost:3000')."),
    ({"url": "https://h", "headers": ["a"]}, "Server 's': \"headers\" must be an object whose values are text."),
    ({"command": "x", "timeout": 0}, "Server 's': \"timeout\" must be a positive number of seconds."),
    ({"command": "x", "timeout": True}, "Server 's': \"timeout\" must be a positive number of seconds."),
    ({"command": "x", "approval": "never"}, "Server 's': \"approval\" must be auto, once or always (got 'never')."),
    ({"command": "x", "enabled": "yes"}, "Server 's': \"enabled\" must be true or false."),
    ({"command": "x", "enabledTools": "a"}, "Server 's': \"enabledTools\" must be null or a list of tool names."),
    ({"command": "x", "protocol": "v1"}, "Server 's': \"protocol\" must be one of auto, legacy, 2026-07-28."),
    ({"url": "https://h", "type": "sse"}, "Server 's' uses the old SSE transport, which is not supported; "
                                          "use its streamable HTTP URL instead."),
    ("npx", "Server 's' must be an object with a \"command\" or a \"url\"."),
])
def test_validation_errors_are_one_sentence(raw, message):
    with pytest.raises(ConfigError) as err:
        parse_server("s", raw)
    assert str(err.value) == message


@pytest.mark.parametrize("name", ["", " padded", "a:b", "tab\there", "x" * 65])
def test_bad_names(name):
    with pytest.raises(ConfigError):
        parse_server(name, {"command": "x"})


def test_parse_servers_collects_problems_and_case_duplicates():
    configs, problems = parse_servers({"GitHub": {"command": "a"}, "github": {"command": "b"},
                                       "bad": {"command": 1}, "ok": {"url": "http://h/mcp"}})
    assert set(configs) == {"GitHub", "ok"}
    assert problems["github"] == "The server names 'GitHub' and 'github' differ only in case; rename one."
    assert "bad" in problems


def test_edits_keep_unknown_keys_and_round_trip(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "futureKey": {"a": 1}, "disabled": True}},
                                "someOtherSection": [1, 2]}))
    settings = Settings.load(path)
    set_enabled(settings, "s", True)
    update_server(settings, "s", {"approval": "auto", "timeout": None})
    add_server(settings, "t", {"url": "https://h/mcp", "mine": "kept"})
    with pytest.raises(ConfigError, match="already exists"):
        add_server(settings, "T", {"command": "x"})
    with pytest.raises(ConfigError, match="must be auto, once or always"):
        update_server(settings, "s", {"approval": "sometimes"})
    settings.save()
    data = json.loads(path.read_text())
    assert data["someOtherSection"] == [1, 2]
    assert data["mcpServers"] == {"s": {"command": "x", "futureKey": {"a": 1}, "enabled": True, "approval": "auto"},
                                  "t": {"url": "https://h/mcp", "mine": "kept"}}


def test_secrets_go_to_the_keychain_and_come_back(tmp_path, secret_store, memory_keyring):
    assert looks_secret("GITHUB_PERSONAL_ACCESS_TOKEN") and looks_secret("Authorization")
    assert looks_secret("OPENAI_API_KEY") and not looks_secret("LOG_LEVEL")
    env, moved = protect_values({"API_KEY": "k", "MODE": "fast"}, server="s", section="env", secrets=secret_store,
                                force_secret=frozenset({"MODE"}))
    assert env == {"API_KEY": "keychain:mcp/s/env/API_KEY", "MODE": "keychain:mcp/s/env/MODE"}
    assert sorted(moved) == ["API_KEY", "MODE"]
    settings = Settings.load(tmp_path / "settings.json")
    add_server(settings, "s", {"command": "x", "env": {**env, "PLAIN": "p"}})
    cfg = parse_server("s", settings.mcp_servers["s"])
    assert resolve_env(cfg, secret_store) == {"API_KEY": "k", "MODE": "fast", "PLAIN": "p"}
    remove_server(settings, "s", secret_store)
    assert memory_keyring.store == {}
    with pytest.raises(MissingSecret, match="API_KEY of MCP server 's' is not in the keychain"):
        resolve_env(cfg, secret_store)
    assert (SERVICE, "mcp/s/env/API_KEY") not in memory_keyring.store


@pytest.mark.parametrize(("entry", "key"), [
    ({"url": "ftp://x"}, "url"),
    ({"command": 5}, "command"),
    ({"command": "x", "args": "not a list"}, "args"),
    ({"command": "x", "cwd": 3}, "cwd"),
    ({"command": "x", "env": {"A": 1}}, "env"),
    ({"url": "https://x.example/mcp", "headers": []}, "headers"),
    ({"command": "x", "timeout": -1}, "timeout"),
    ({"command": "x", "approval": "sometimes"}, "approval"),
    ({"url": "https://x.example/mcp", "oauth": {"grant": "magic"}}, "oauth.grant"),
    ({"command": "x", "type": "carrier-pigeon"}, "type"),
    ({"command": "x", "url": "https://x.example/mcp"}, ""),
])
def test_an_entry_error_carries_the_key_it_is_about(entry, key) -> None:
    from cks_desktop.mcp.config import ConfigError, parse_server
    from cks_desktop.ui.settings.mcp_form import _field_of

    with pytest.raises(ConfigError) as raised:
        parse_server("srv", entry)
    assert raised.value.key == key, str(raised.value)
    expected = {"oauth.grant": "oauth", "approval": "", "type": ""}.get(key, key)
    assert _field_of(raised.value) == expected
