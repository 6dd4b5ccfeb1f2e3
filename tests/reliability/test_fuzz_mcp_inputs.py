"""What MCP brings in from outside, fuzzed: Claude Desktop config files (through
``import_claude``), the results a server returns (through ``result_to_output``),
and the tool listings it sends (through ``build_specs`` into a real registry).

Nothing may raise; every server in a config is imported or skipped with a reason
(none vanishes); secret-looking values go to the keychain, never into settings;
every listed tool becomes a tool or a skipped entry with a reason."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from cks_desktop.mcp.claude_import import ClaudeImportError, import_claude
from cks_desktop.mcp.config import parse_server, parse_servers
from cks_desktop.mcp.convert import build_specs, result_to_output
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.tools.registry import ToolRegistry
from tests.reliability.schema_strategies import JSON_VALUES, NASTY_TEXT

CI = settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
SECRET_VALUE = "claude-import-secret-4711"

ENTRY = st.one_of(JSON_VALUES, st.fixed_dictionaries(
    {"command": st.one_of(st.just("npx"), st.text(max_size=6), JSON_VALUES)},
    optional={"args": st.one_of(st.lists(st.text(max_size=6), max_size=3), JSON_VALUES),
              "env": st.one_of(st.dictionaries(st.sampled_from(["API_KEY", "GITHUB_TOKEN", "DEBUG", "PATH", "x"]),
                                               st.one_of(st.just(SECRET_VALUE), st.text(max_size=6)), max_size=3),
                               JSON_VALUES),
              "disabled": JSON_VALUES, "futureKey": JSON_VALUES}),
    st.fixed_dictionaries({"url": st.sampled_from(["https://mcp.example/x", "http://[", "nope"])},
                          optional={"headers": st.dictionaries(st.sampled_from(["Authorization", "X-Api-Key", "A"]),
                                                               st.just(SECRET_VALUE), max_size=2)}))


@st.composite
def claude_file(draw: st.DrawFn) -> bytes:
    servers = draw(st.dictionaries(st.one_of(st.text(max_size=10), NASTY_TEXT), ENTRY, max_size=5))
    text = json.dumps({"mcpServers": servers, "globalShortcut": "x"})
    how = draw(st.sampled_from(["whole", "whole", "whole", "duplicate", "truncated", "bad_utf8", "other"]))
    if how == "duplicate" and servers:
        name = json.dumps(next(iter(servers)))
        text = text.replace("{" + name, "{" + name + ": {}, " + name, 1) if ("{" + name) in text else text
    elif how == "truncated":
        text = text[: draw(st.integers(0, len(text)))]
    elif how == "bad_utf8":
        return text.encode()[:5] + b"\xff" + text.encode()[5:]
    elif how == "other":
        text = json.dumps(draw(JSON_VALUES))
    return text.encode()


@CI
@given(raw=claude_file())
def test_claude_config_imports(memory_keyring: Any, raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "claude_desktop_config.json"
        path.write_bytes(raw)
        settings_ = Settings.load(Path(tmp) / "settings.json")
        secrets = SecretStore(secure=True)
        try:
            report = import_claude(settings_, secrets, path)
        except ClaudeImportError as exc:
            assert str(exc) and "Traceback" not in str(exc)
            return
        try:
            listed = json.loads(raw.decode("utf-8-sig"))["mcpServers"]
        except Exception:
            listed = {}
        names = set(report.imported) | {n for n, _ in report.skipped}
        assert set(listed) <= names, f"servers vanished: {set(listed) - names}"
        assert all(reason for _, reason in report.skipped)
        settings_.save()
        for name in report.imported:
            parse_server(name, settings_.mcp_servers[name])
            for section in ("env", "headers"):
                for key, value in (settings_.mcp_servers[name].get(section) or {}).items():
                    if any(w in key.upper() for w in ("KEY", "TOKEN", "SECRET", "AUTH")):
                        assert value != SECRET_VALUE, f"{name}: {section} {key} was written in the settings file"
        parse_servers(Settings.load(Path(tmp) / "settings.json").mcp_servers)


@pytest.mark.parametrize("raw", [b'{"mcpServers": ' + b"[" * 100_000 + b"}", b'{"a": ' + b"9" * 5000 + b"}",
                                 b"\x00", b"", b"\xef\xbb\xbf{}"])
def test_odd_claude_files(memory_keyring: Any, tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_bytes(raw)
    try:
        import_claude(Settings.load(tmp_path / "settings.json"), SecretStore(secure=True), path)
    except ClaudeImportError as exc:
        assert str(exc)


B64 = st.one_of(st.just("iVBORw0KGgo="), st.text(max_size=20), st.just(""), st.just("===="))
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=30), NASTY_TEXT)}),
    st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]), "data": B64,
                           "mimeType": st.one_of(st.text(max_size=10), st.just("image/png"))}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.one_of(
        st.fixed_dictionaries({"uri": st.just("file:///x"), "text": st.text(max_size=20)},
                              optional={"mimeType": st.text(max_size=8)}),
        st.fixed_dictionaries({"uri": st.just("file:///y"), "blob": B64}))}),
    st.fixed_dictionaries({"type": st.just("resource_link"), "name": st.text(max_size=8),
                           "uri": st.sampled_from(["https://x.example/a", "javascript:alert(1)", "file:///etc"])},
                          optional={"description": st.one_of(st.none(), st.text(max_size=10)),
                                    "mimeType": st.text(max_size=8)}),
    st.fixed_dictionaries({"type": st.text(max_size=8)}),
)


@CI
@given(content=st.lists(BLOCK, max_size=5), structured=st.one_of(st.none(), st.dictionaries(
    st.text(max_size=5), JSON_VALUES, max_size=3)), is_error=st.one_of(st.none(), st.booleans()))
def test_any_server_result_converts(content: list[dict[str, Any]], structured: Any, is_error: Any) -> None:
    try:
        result = types.CallToolResult.model_validate(
            {"content": content, "structuredContent": structured, "isError": is_error})
    except ValidationError:
        assume(False)
        return
    out = result_to_output(result)
    assert isinstance(out.content, str) and out.content
    assert out.is_error is bool(result.is_error)


SCHEMA = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries({"type": st.one_of(st.just("object"), JSON_VALUES)}, optional={
        "properties": st.one_of(st.dictionaries(st.text(max_size=5), st.one_of(
            st.just({"type": "string"}), st.just({"$ref": "#/$defs/a"}), st.just({"$ref": "https://evil.example/s"}),
            st.just({"type": 12}), JSON_VALUES), max_size=3), JSON_VALUES),
        "required": JSON_VALUES, "$defs": st.just({"a": {"type": "integer"}}),
        "$ref": st.sampled_from(["#", "#/nope", "file:///etc/passwd", "#/$defs/a"]),
        "additionalProperties": JSON_VALUES}),
)


@CI
@given(schemas=st.lists(SCHEMA, min_size=1, max_size=5))
def test_any_tool_listing_registers_or_is_skipped(schemas: list[Any]) -> None:
    config = parse_server("srv", {"command": "x"})
    tools = []
    for i, schema in enumerate(schemas):
        try:
            tools.append(types.Tool(name=f"t{i}", input_schema=schema))
        except ValidationError:
            continue
    assume(tools)

    def handler_for(name: str) -> Any:
        async def handler(args: dict[str, Any], ctx: Any) -> str:
            return name
        return handler

    specs, skipped = build_specs(config, tools, handler_for)
    assert {s.name.rsplit(":", 1)[-1] for s in specs} | {s.name for s in skipped} == {t.name for t in tools}
    assert all(s.reason for s in skipped)
    registry = ToolRegistry(None)  # type: ignore[arg-type]
    registry.replace_source(config.source, specs)
    assert len(registry.specs()) == len(specs), "a usable tool was refused by the registry"


def test_a_deeply_nested_tool_schema_is_skipped_not_fatal() -> None:
    config = parse_server("srv", {"command": "x"})
    deep: dict[str, Any] = {"type": "object"}
    node = deep
    for _ in range(5000):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    tool = types.Tool(name="deep", input_schema=deep)
    specs, skipped = build_specs(config, [tool], lambda name: None)  # type: ignore[arg-type,return-value]
    assert len(specs) + len(skipped) == 1
