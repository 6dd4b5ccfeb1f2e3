"""Our graph as an MCP server: in-process through the SDK's client, and end to end over stdio."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cks_desktop.graph.store import GraphStore
from cks_desktop.serve.server import build_server, host_config, serve_command, serving_run
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.registry import model_schema

MAIN = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    yield s
    s.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_schemas_pinning_and_hidden_tools(mode, store):
    served = store.create_session("served")
    other = store.create_session("other")
    registry = build_registry(store)
    server = build_server(registry, serving_run(served.id))
    async with Client(server, mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        exposed = {s.name: s for s in registry.specs() if s.llm_exposed}
        assert set(listed) == set(exposed)
        assert "delete_session" not in listed and "list_sessions" not in listed
        for name, tool in listed.items():
            assert tool.input_schema == model_schema(exposed[name])
        assert "session_id" not in listed["add_object"].input_schema["properties"]
        assert listed["search_objects"].annotations.read_only_hint is True
        assert listed["remove_object"].annotations.destructive_hint is True

        # a call naming another session's id is pinned to the served session
        r = await client.call_tool("add_object", {"type": "Person", "name": "Ada", "session_id": other.id})
        assert not r.is_error, r.content
        # `once` tools run too: the host asked its own user
        r = await client.call_tool("remove_object", {"ref": "Ada"})
        assert not r.is_error, r.content
        r = await client.call_tool("add_object", {"type": "Person", "name": "Grace"})
        assert not r.is_error
        r = await client.call_tool("delete_session", {"session_id": other.id})
        assert r.is_error and "Unknown tool" in r.content[0].text
        r = await client.call_tool("add_object", {"type": 5})
        assert r.is_error and "Invalid arguments" in r.content[0].text
    assert [o.name for o in store.all_objects(served.id)] == ["Grace"]
    assert store.all_objects(other.id) == []
    store.get_session(other.id)  # still there


def test_serve_command_and_host_config(monkeypatch):
    assert serve_command() == [sys.executable, "-m", "cks_desktop", "mcp", "serve"]
    assert serve_command("S1", "/d") == [sys.executable, "-m", "cks_desktop", "--data-dir", "/d", "mcp", "serve",
                                         "--session", "S1"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert serve_command("S1") == [sys.executable, "mcp", "serve", "--session", "S1"]
    assert host_config("S1") == {"mcpServers": {"cks-desktop": {"command": sys.executable,
                                                                "args": ["mcp", "serve", "--session", "S1"]}}}


@pytest.mark.asyncio
async def test_mcp_serve_end_to_end(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    store = GraphStore.open(home / "cks.sqlite3")
    other = store.create_session("someone else's")
    store.close()
    errlog_path = tmp_path / "serve.err"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve"],
                                   cwd=str(MAIN), env={"PYTHONPATH": str(MAIN)})
    with open(errlog_path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            assert client.server_info.name == "cks-desktop"
            r = await client.call_tool("evolve_knowledge", {"session_id": other.id, "operations": [
                {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
                {"op": "add_object", "type": "Machine", "name": "Analytical Engine", "label": "$ae"},
                {"op": "add_relation", "source": "$ada", "target": "$ae", "type": "programmed"},
            ]})
            assert not r.is_error, r.content[0].text
            r = await client.call_tool("neighbors", {"ref": "Ada Lovelace"})
            assert "Analytical Engine" in r.content[0].text
    said = errlog_path.read_text()
    match = re.search(r"serving session (\S+) ", said)
    assert match, said
    served_id = match.group(1)
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        assert sorted(o.name for o in store.all_objects(served_id)) == ["Ada Lovelace", "Analytical Engine"]
        assert [r.type for r in store.all_relations(served_id)] == ["programmed"]
        assert store.all_objects(other.id) == []
    finally:
        store.close()


@pytest.mark.asyncio
async def test_mcp_serve_keeps_a_read_only_session_read_only(tmp_path):
    """the session's Scopes… choice binds an MCP host as it binds a chat."""
    import json

    home = tmp_path / "home"
    home.mkdir()
    store = GraphStore.open(home / "cks.sqlite3")
    session = store.create_session("read only")
    store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Bob"}], "test")
    store.close()
    (home / "settings.json").write_text(json.dumps({"agent": {"session_scopes": {session.id: ["graph.read"]}}}))
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                                         "--session", session.id],
                                   cwd=str(MAIN), env={"PYTHONPATH": str(MAIN)})
    with open(tmp_path / "serve.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search_objects" in names and "remove_object" not in names and "evolve_knowledge" not in names
            r = await client.call_tool("remove_object", {"ref": "Bob"})
            assert r.is_error and "graph.mutate" in r.content[0].text and "Scopes" in r.content[0].text
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        assert [o.name for o in store.all_objects(session.id)] == ["Bob"]
    finally:
        store.close()
