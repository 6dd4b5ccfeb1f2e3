"""The settings file, fuzzed: truncated, wrong types in every known place, unknown
keys, invalid UTF-8, deep nesting, odd MCP server entries. ``Settings.load`` never
raises and always says what it could not use; the typed accessors return their
types; ``save`` writes a file that loads cleanly, keeps unknown keys, and moves a
broken original aside instead of dropping it; every MCP entry becomes a server
or a one-sentence problem, never an exception or silence."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cks_desktop.mcp.config import parse_servers
from cks_desktop.settings import DEFAULTS, Settings
from tests.reliability.schema_strategies import JSON_VALUES

CI = settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

URLS = st.sampled_from(["http://[", "https://[::1", "http://", "ftp://x", "http://127.0.0.1:99999/x", "",
                        "http://a b", "javascript:alert(1)", "http://ok.example/mcp", "\x00"])
SERVER = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries({}, optional={
        "command": st.one_of(st.text(max_size=10), JSON_VALUES), "args": st.one_of(
            st.lists(st.text(max_size=5), max_size=3), JSON_VALUES),
        "env": st.one_of(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3), JSON_VALUES),
        "url": st.one_of(URLS, JSON_VALUES), "headers": JSON_VALUES, "type": st.one_of(
            st.sampled_from(["stdio", "sse", "http", "x"]), JSON_VALUES),
        "enabled": JSON_VALUES, "disabled": JSON_VALUES, "scopes": st.one_of(
            st.lists(st.sampled_from(["graph.read", "fs.read", "nope"]), max_size=3), JSON_VALUES),
        "approval": st.one_of(st.sampled_from(["auto", "once", "always", "AUTO"]), JSON_VALUES),
        "toolPolicies": JSON_VALUES, "enabledTools": JSON_VALUES, "cwd": JSON_VALUES,
        "timeout": st.one_of(st.floats(), JSON_VALUES), "protocol": JSON_VALUES, "futureKey": JSON_VALUES}))


def _shaped(defaults: Any) -> st.SearchStrategy[Any]:
    """The defaults' shape with any value possibly replaced by anything."""
    if isinstance(defaults, dict):
        return st.fixed_dictionaries({}, optional={k: st.one_of(_shaped(v), JSON_VALUES)
                                                   for k, v in defaults.items()})
    return st.one_of(st.just(defaults), JSON_VALUES)


SETTINGS_OBJECTS = st.builds(
    lambda base, servers, unknown: {**base, "mcpServers": servers, **unknown},
    _shaped(DEFAULTS),
    st.one_of(st.dictionaries(st.text(max_size=8), SERVER, max_size=4), JSON_VALUES),
    st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in DEFAULTS), JSON_VALUES, max_size=3))


@st.composite
def file_bytes(draw: st.DrawFn) -> tuple[bytes, dict[str, Any] | None]:
    obj = draw(SETTINGS_OBJECTS)
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    kind = draw(st.sampled_from(["whole", "whole", "truncated", "bad_utf8", "nested", "not_object", "noise"]))
    if kind == "whole":
        return text.encode(), obj
    if kind == "truncated":
        return text.encode()[: draw(st.integers(0, max(0, len(text) - 1)))], None
    if kind == "bad_utf8":
        raw = text.encode()
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])) + raw[at:], None
    if kind == "nested":
        depth = draw(st.sampled_from([100, 5000, 50_000]))
        text = '{"a": ' * depth + "1" + "}" * depth
        return text.encode(), (json.loads(text) if depth <= 100 else None)
    if kind == "not_object":
        return json.dumps(draw(JSON_VALUES.filter(lambda v: not isinstance(v, dict)))).encode(), None
    return draw(st.binary(max_size=200)), None


@CI
@given(case=file_bytes())
def test_any_settings_file_loads_and_saves(case: tuple[bytes, dict[str, Any] | None]) -> None:
    raw, obj = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "settings.json"
        path.write_bytes(raw)
        s = Settings.load(path)  # never raises
        assert isinstance(s.default_provider, str)
        assert isinstance(s.max_iterations, int) and s.max_iterations >= 1
        assert isinstance(s.tool_policies, dict)
        assert all(isinstance(p, Path) for p in s.allowed_folders)
        assert isinstance(s.mcp_servers, dict)
        for name in ("anthropic", "ollama", "openai", "gemini", "unknown"):
            assert isinstance(s.provider(name), dict)
        configs, problems = parse_servers(s.mcp_servers)  # never raises
        assert set(configs) | set(problems) == set(s.mcp_servers), "an MCP entry was dropped silently"
        assert all(isinstance(p, str) and p for p in problems.values())
        if obj is None:
            assert s.problem, "an unreadable file was used without saying so"
        s.save()
        again = Settings.load(path)
        assert again.problem is None, again.problem
        json.loads(path.read_text(encoding="utf-8"))
        if obj is None:
            kept = [p for p in Path(tmp).iterdir() if p.name.startswith("settings.json.broken-")]
            assert kept and kept[0].read_bytes() == raw, "the unreadable original was not kept"
        else:
            for key, value in obj.items():
                if key not in DEFAULTS:
                    assert again.data[key] == value, f"unknown key {key!r} was not preserved"


def test_unreadable_settings_paths_are_reported(tmp_path: Path) -> None:
    folder = tmp_path / "settings.json"
    folder.mkdir()
    s = Settings.load(folder)
    assert s.problem and isinstance(s.max_iterations, int)


NASTY_FILES = {
    "deeply nested": b'{"a": ' * 50_000 + b"1" + b"}" * 50_000,
    "nested arrays": b"[" * 100_000,
    "huge number": b'{"agent": {"max_iterations": ' + b"9" * 5000 + b"}}",
    "NaN": b'{"agent": {"max_iterations": NaN}}',
    "BOM": b"\xef\xbb\xbf{}",
    "UTF-16": '{"ui": {}}'.encode("utf-16"),
    "empty": b"",
    "NUL": b"\x00",
}


@pytest.mark.parametrize("name", list(NASTY_FILES))
def test_nasty_settings_files(tmp_path: Path, name: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(NASTY_FILES[name])
    s = Settings.load(path)
    assert isinstance(s.max_iterations, int) and isinstance(s.mcp_servers, dict)
    s.save()
    assert Settings.load(path).problem is None


@pytest.mark.parametrize("url", ["http://[", "https://[::1", "http://[fe80::1%eth0", "http://a]b", "\x00"])
def test_odd_mcp_urls_are_problems_not_crashes(url: str) -> None:
    configs, problems = parse_servers({"remote": {"url": url}})
    assert not configs and "url" in problems["remote"]
